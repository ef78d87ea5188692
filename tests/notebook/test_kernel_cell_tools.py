"""The cell tools in a real kernel, through the testing frontend that emulates the
extension's `fuxi.notebook` comm (it changes its document as the extension changes the
notebook): the agent edits, inserts, moves, runs and deletes cells by id; `%fuxi undo`
takes the changes back; without the extension the tools are not offered."""

from __future__ import annotations

import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors

ALLOW = "%%fuxi --permission-mode acceptEdits --allowed-tools RunCell,Python"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _sources(nb) -> dict[str, str]:
    return {cell["id"]: cell["source"] for cell in nb.cells}


def test_the_agent_edits_inserts_moves_runs_and_deletes_cells(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "total = 1 + 1", "print('old note')",
                               f"{ALLOW}\nwork on the notebook")
    api.add(
        Turn([tool_use("EditCell", {"cell_id": "c1", "old_string": "1 + 1",
                                    "new_string": "40 + 2"})]),
        Turn([tool_use("RunCell", {"cell_id": "c1"})]),
        Turn([tool_use("InsertCell", {"code": "# Notes", "cell_type": "markdown",
                                      "after_cell_id": "c1"})]),
        Turn([tool_use("MoveCell", {"cell_id": "c2", "to_index": 1})]),
        Turn([tool_use("DeleteCell", {"cell_id": "c2"})]),
        Turn([tool_use("EditCell", {"cell_id": "c3", "old_string": "", "new_string": "x"})]),
        Turn([text("Done.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        statuses = [frontend.execute(cell) for cell in list(nb.cells)]
        assert statuses == ["ok"] * 4, [_errors(c) for c in nb.cells]
        results = [b for m in api.requests[-1]["messages"] if m["role"] == "user"
                   for b in m["content"] if b.get("type") == "tool_result"]
        assert [r.get("is_error", False) for r in results] == [False] * 5 + [True]
        assert "running this agent" in str(results[-1]["content"])  # its own cell: never
        sources = _sources(nb)
        assert sources["c1"] == "total = 40 + 2" and "c2" not in sources
        inserted = [cid for cid, src in sources.items() if src == "# Notes"]
        assert len(inserted) == 1
        check = nbformat_cell("print(total)")
        assert frontend.execute(check) == "ok"
        assert check.outputs[0]["text"] == "42\n"  # RunCell ran the edited source
        # undo: the deletion, the move, the insertion and the edit are taken back
        undo = nbformat_cell("%fuxi undo")
        assert frontend.execute(undo) == "ok", _errors(undo)
    assert _sources(nb)["c1"] == "total = 1 + 1"
    assert _sources(nb)["c2"] == "print('old note')"
    assert not any(src == "# Notes" for src in _sources(nb).values())


def nbformat_cell(source: str):
    import nbformat

    return nbformat.v4.new_code_cell(source)


def test_without_the_extension_the_cell_tools_are_not_offered(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nhello")
    api.add(Turn([text("hi")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path),
                          extension=False) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
    offered = {tool["name"] for tool in api.requests[0]["tools"]}
    assert "InsertCell" in offered and not offered & {"EditCell", "DeleteCell", "MoveCell",
                                                       "RunCell"}


def test_a_recorded_cell_edit_replays_from_the_record_without_the_extension(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "total = 1 + 1", f"{ALLOW}\nfix the sum")
    api.add(Turn([tool_use("EditCell", {"cell_id": "c1", "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([text("Fixed.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in list(nb.cells)] == ["ok"] * 3
    assert _sources(nb)["c1"] == "total = 40 + 2"
    import nbformat

    nbformat.write(nb, path)  # saved, as the user saves it
    live_requests = len(api.requests)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, FUXI_REPLAY="strict"),
                          flavor="nbclient") as frontend:
        statuses = [frontend.execute(cell) for cell in list(nb.cells)]
    assert statuses == ["ok"] * 3, [_errors(c) for c in nb.cells]
    assert len(api.requests) == live_requests  # replayed: the model was not asked
    assert _sources(nb)["c1"] == "total = 40 + 2"  # and the edit was not made again


def test_a_cell_the_agent_runs_shows_what_it_would_show_run_by_hand(tmp_path, api):
    """Streams, a display's full bundle (the DataFrame's HTML), the last value as an
    execute_result, a figure, and an error as an error output: not the model's text."""
    table = ("import pandas as pd\nimport matplotlib.pyplot as plt\n"
             "print('rows:', 2)\ndisplay(pd.DataFrame({'x': [1, 2]}))\n"
             "plt.plot([1, 2])\nplt.show()\n{'answer': 42}")
    path, nb = loaded_notebook(tmp_path, table, "1 / 0",
                               f"{ALLOW}\nrun both")
    api.add(Turn([tool_use("RunCell", {"cell_id": "c1"})]),
            Turn([tool_use("RunCell", {"cell_id": "c2"})]),
            Turn([text("Ran them.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[3]) == "ok", _errors(nb.cells[3])
    shown = nb.cells[1].outputs
    assert [o["output_type"] for o in shown] == [
        "stream", "display_data", "display_data", "execute_result"], shown
    assert shown[0]["text"] == "rows: 2\n"
    assert "<table" in shown[1]["data"]["text/html"]
    assert "image/png" in shown[2]["data"]
    assert shown[3]["data"]["text/plain"] == "{'answer': 42}"
    error = nb.cells[2].outputs
    assert [o["output_type"] for o in error] == ["error"]
    assert error[0]["ename"] == "ZeroDivisionError" and error[0]["evalue"] == "division by zero"
    results = [b for m in api.requests[-1]["messages"] if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result"]
    assert "rows: 2" in str(results[0]["content"]) and results[1].get("is_error") is True


def _trust(card, asked: list[str]):
    """Answers the replay's trust question (a recorded RunCell runs code again)."""
    asked.extend(card.shown)
    return ("Replay", None) if "Replay" in card.buttons else None


def test_a_replayed_run_cell_runs_again_and_a_different_output_is_a_divergence(tmp_path, api):
    """With the extension a replay runs a recorded RunCell again (the edits it answers from
    the record): the cell's output is compared with the recorded one, as any tool's."""
    import nbformat

    path, nb = loaded_notebook(tmp_path, "print('rows: 2')", f"{ALLOW}\nrun it")
    api.add(Turn([tool_use("RunCell", {"cell_id": "c1"})]), Turn([text("Ran it.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in (nb.cells[0], nb.cells[2])] == ["ok"] * 2
    nbformat.write(nb, path)
    requests = len(api.requests)
    same = nbformat.read(path, as_version=4)
    same.cells[1].outputs = []  # cleared, so that its output shows it ran again
    with NotebookFrontend(cwd=str(tmp_path),
                          env=_env(api, path, FUXI_REPLAY="strict")) as frontend:
        frontend.open(same, str(path))
        assert frontend.execute(same.cells[0]) == "ok"
        asked: list[str] = []
        assert frontend.execute(same.cells[2], decide=lambda card: _trust(card, asked)) == \
            "ok", _errors(same.cells[2])
        assert any("RunCell 1" in shown for shown in asked)  # running code is trusted first
        assert same.cells[1].outputs[0]["text"] == "rows: 2\n"  # it ran again
    changed = nbformat.read(path, as_version=4)
    changed.cells[1].source = "print('rows: 3')"
    nbformat.write(changed, path)
    with NotebookFrontend(cwd=str(tmp_path),
                          env=_env(api, path, FUXI_REPLAY="strict")) as frontend:
        frontend.open(changed, str(path))
        assert frontend.execute(changed.cells[0]) == "ok"
        assert frontend.execute(changed.cells[2],
                                decide=lambda card: _trust(card, [])) == "error"
    assert "replay diverged" in _errors(changed.cells[2]).lower()
    assert len(api.requests) == requests  # no model was asked
