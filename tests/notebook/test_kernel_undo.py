"""`%fuxi undo` in a real kernel: an agent cell rebinds a DataFrame, appends to a list in
place, has Bash overwrite a file and Write create one; undo puts all four back. What the
user changed since is kept, and what was over the cap is named."""

from __future__ import annotations

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

ALLOWED = "--allowed-tools Python,Bash,Write --permission-mode acceptEdits"


def _markdown(result) -> str:
    return "\n".join(d["data"].get("text/markdown", "") for d in result.displays)


def _setup(kernel) -> None:
    done = kernel.run(
        "import pandas as pd\n"
        "sales = pd.DataFrame({'x': [1, 2]})\n"
        "rows = [1, 2]\n"
        "alias = rows\n"
        "open('report.md', 'w').write('original\\n')")
    assert done.status == "ok", done.messages


def _agent_cell(kernel, api) -> None:
    api.add(
        Turn([tool_use("Python", {"code": "sales = sales.assign(y=sales.x * 2)"})]),
        Turn([tool_use("Python", {"code": "rows.append(3)\nmade = 'new name'"})]),
        Turn([tool_use("Bash", {"command": "printf 'rewritten\\n' > report.md"})]),
        Turn([tool_use("Write", {"file_path": "new.md", "content": "# new\n"})]),
        Turn([text("Done.")]))
    result = kernel.run(f"%%fuxi {ALLOWED}\ntidy up")
    assert result.status == "ok", result.messages
    state = kernel.run("print(list(sales.columns), rows, made, open('report.md').read())")
    assert state.stdout == "['x', 'y'] [1, 2, 3] new name rewritten\n\n"


def test_undo_restores_names_files_and_removes_what_the_cell_made(fresh, api):
    _setup(fresh)
    _agent_cell(fresh, api)
    listed = fresh.run("%fuxi undo --list")
    assert listed.status == "ok"
    shown = _markdown(listed)
    for line in ("name sales rebound", "name rows changed inside", "name made created",
                 "report.md changed", "new.md created"):
        assert line in shown, shown
    undone = fresh.run("%fuxi undo")
    assert undone.status == "ok", undone.messages
    summary = _markdown(undone)
    assert "<summary>fuxi: undid cell" in summary and "5 restored" in summary, summary
    after = fresh.run(
        "import os\n"
        "print(list(sales.columns), rows, alias is rows, 'made' in dir(), "
        "open('report.md').read().strip(), os.path.exists('new.md'))")
    assert after.stdout == "['x'] [1, 2] True False original False\n", after.messages
    again = fresh.run("%fuxi undo")
    assert again.status == "error" and "nothing changed" in again.reply["content"]["evalue"]


def test_undo_keeps_what_the_user_changed_since(fresh, api):
    _setup(fresh)
    _agent_cell(fresh, api)
    fresh.run("sales = 'mine now'\nopen('report.md', 'w').write('my edit\\n')")
    undone = fresh.run("%fuxi undo")
    shown = _markdown(undone)
    assert "not undone: name sales: rebound since the cell" in shown, shown
    assert "not undone: file" in shown and "report.md: changed since the cell" in shown
    after = fresh.run("print(sales, rows, open('report.md').read().strip())")
    assert after.stdout == "mine now [1, 2] my edit\n"


def test_a_file_over_the_cap_is_named_as_not_undoable(api, tmp_path_factory):
    from .kernel_harness import loaded_kernel

    kernel = loaded_kernel(api, tmp_path_factory.mktemp("undo-cap"),
                           FUXI_UNDO_MAX_FILE_MB="0.001")
    try:
        api.reset()
        kernel.run("open('big.bin', 'wb').write(b'x' * 5000)")
        api.add(Turn([tool_use("Bash", {"command": "printf 'y' >> big.bin"})]),
                Turn([text("Appended.")]))
        assert kernel.run(f"%%fuxi {ALLOWED}\nappend").status == "ok"
        listed = _markdown(kernel.run("%fuxi undo --list"))
        assert "big.bin changed (over the size cap: cannot be undone)" in listed, listed
        shown = _markdown(kernel.run("%fuxi undo"))
        assert "not undone: file" in shown and "5,000 bytes) was over the size cap" in shown
    finally:
        kernel.close()


def test_undo_conversation_makes_the_next_cell_go_on_from_before(fresh, api):
    api.add(Turn([text("one")]))
    assert fresh.run("%%fuxi\nfirst").status == "ok"
    api.add(Turn([tool_use("Python", {"code": "x = 1"})]), Turn([text("two")]))
    assert fresh.run(f"%%fuxi {ALLOWED}\nsecond").status == "ok"
    undone = fresh.run("%fuxi undo --conversation")
    assert "goes on from cell" in _markdown(undone)
    api.add(Turn([text("three")]))
    assert fresh.run("%%fuxi\nthird").status == "ok"
    sent = [m for m in api.requests[-1]["messages"] if m["role"] == "user"]
    texts = [b.get("text", "") for m in sent for b in m["content"] if isinstance(b, dict)]
    assert any("first" in t for t in texts) and not any("second" in t for t in texts)


def test_undo_is_refused_from_code_and_explains_bad_arguments(fresh):
    from_code = fresh.run("get_ipython().run_line_magic('fuxi', 'undo')")
    assert from_code.status == "error"
    assert "only as a line of a cell you run yourself" in from_code.reply["content"]["evalue"]
    bad = fresh.run("%fuxi undo --everything")
    assert bad.status == "error" and "--everything is not understood" in (
        bad.reply["content"]["evalue"])


@pytest.mark.parametrize("extension", [True, False], ids=["extension", "no-extension"])
def test_what_was_undone_is_written_into_the_agent_cells_record(tmp_path, extension):
    """The agent cell's record output is updated in place (its display id): its metadata
    says what was undone, its transcript ends with one folded line; with the extension
    the cell's metadata mirrors it. A headless replay of the saved notebook draws the
    same outputs again (nbval)."""
    import nbformat

    from fuxi_notebook._internal.sessions.record import RECORD_MIME
    from fuxi_notebook.testing import FakeMessagesServer
    from fuxi_notebook.testing.frontend import NotebookFrontend

    from .kernel_harness import loaded_notebook
    from .test_kernel_sessions import _env, _errors

    path, nb = loaded_notebook(tmp_path, "rows = [1, 2]", f"%%fuxi {ALLOWED}\nextend rows",
                               "%fuxi undo")
    with FakeMessagesServer() as api:
        api.add(Turn([tool_use("Python", {"code": "rows.append(3)\nmade = 1"})]),
                Turn([text("Extended.")]))
        with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path),
                              extension=extension) as frontend:
            frontend.open(nb, str(path))
            statuses = [frontend.execute(cell) for cell in nb.cells]
            assert statuses == ["ok"] * 4, [_errors(c) for c in nb.cells]
            check = nbformat.v4.new_code_cell("print(rows, 'made' in dir())")
            assert frontend.execute(check) == "ok"
            assert check.outputs[0]["text"] == "[1, 2] False\n"
        agent = nb.cells[2]
        record = next(o for o in agent.outputs if RECORD_MIME in o["data"])
        undone = record["metadata"]["fuxi"]["undone"]
        assert undone["restored"] == ["name made", "name rows"] and undone["kept"] == []
        assert ("<summary>Undone by %fuxi undo: 2 restored</summary>"
                in record["data"]["text/markdown"])
        assert record["data"]["text/plain"].splitlines()[-3:] == [
            "Undone by %fuxi undo: 2 restored", "  restored name made", "  restored name rows"]
        mirrored = agent.metadata.get("fuxi", {}).get("volatile", {}).get("undone")
        assert mirrored == (undone if extension else None)
        nb.cells = nb.cells[:3]  # saved without the undo cell: a replay runs the agent cell
        nbformat.write(nb, path)
        saved = [o["data"] for o in agent.outputs]
        replay = nbformat.read(path, as_version=4)
        environment = _env(api, path, ANTHROPIC_API_KEY="", FUXI_REPLAY="strict")
        with NotebookFrontend(cwd=str(tmp_path), env=environment, cell_ids=False) as headless:
            assert [headless.execute(cell) for cell in replay.cells] == ["ok"] * 3
        assert [o["data"] for o in replay.cells[2].outputs] == saved
        assert len(api.requests) == 2


def test_the_cell_says_what_undo_cannot_take_back_when_it_ends(api, tmp_path_factory):
    from .kernel_harness import loaded_kernel

    kernel = loaded_kernel(api, tmp_path_factory.mktemp("undo-tell"),
                           FUXI_UNDO_MAX_FILE_MB="0.001")
    try:
        api.reset()
        kernel.run("open('big.bin', 'wb').write(b'x' * 5000)\n"
                   "class Model:\n    fitted = False\nmodel = Model()")
        api.add(Turn([tool_use("Bash", {"command": "printf 'y' > big.bin"})]),
                Turn([tool_use("Python", {"code": "model.fitted = True"})]),
                Turn([text("Done.")]))
        result = kernel.run(f"%%fuxi {ALLOWED}\noverwrite")
        assert result.status == "ok", result.messages
        said = result.stderr
        assert "%fuxi undo cannot take back all this cell changed" in said, said
        assert "big.bin: its earlier content (5,000 bytes) was over the size cap" in said
        assert "name model: may have changed inside, and a Model has no cheap copy" in said
        api.add(Turn([tool_use("Python", {"code": "x = 1"})]), Turn([text("ok")]))
        quiet = kernel.run(f"%%fuxi {ALLOWED}\nsmall")
        assert "cannot take back" not in quiet.stderr
    finally:
        kernel.close()
