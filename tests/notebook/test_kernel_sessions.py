"""Sessions that live in the notebook, in real kernels: resume after a restart, --resume,
--fork, identity without cell ids, replay (headless consent, determinism)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _env(api, path: Path, **extra: str) -> dict[str, str]:
    env = {"FUXI_NOTEBOOK": str(path), "ANTHROPIC_BASE_URL": api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0002", "FUXI_BLOCK_REAL_API": "1",
           "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT), "FUXI_REPLAY": ""}
    env.update(extra)
    return env




def _errors(cell) -> str:
    """What the cell reported as an error (UsageError is one stderr line, no traceback)."""
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr") + \
        "".join(o.get("evalue", "") for o in cell.outputs if o["output_type"] == "error")


def _record(cell) -> dict:
    for output in cell.outputs:
        if RECORD_MIME in output.get("data", {}):
            return output["data"][RECORD_MIME]
    raise AssertionError(f"no record in {cell.outputs}")


def _run_all(frontend, nb, cells=None) -> None:
    for cell in cells or nb.cells:
        assert frontend.execute(cell) == "ok", cell.outputs


def test_the_next_cell_continues_from_the_saved_notebook_after_a_restart(tmp_path, api):
    api.add(Turn([text("first answer")]), Turn([text("second answer")]),
            Turn([text("fresh answer")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi\none", "%%fuxi\ntwo", "%%fuxi --new\nthree")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        _run_all(frontend, nb, nb.cells[:2])
        nbformat.write(nb, path)  # saved, as JupyterLab would before a restart
        frontend.restart()
        _run_all(frontend, nb, [nb.cells[0], nb.cells[2], nb.cells[3]])
    sent = [m["content"] for m in api.requests[1]["messages"]]
    assert [m["role"] for m in api.requests[1]["messages"]] == ["user", "assistant", "user"]
    assert sent[1][0]["text"] == "first answer" and "two" in json.dumps(sent[2])
    first, second, third = (_record(c) for c in nb.cells[1:])
    assert second["parent"] == "c1" and second["session_id"] == first["session_id"]
    meta = next(o for o in nb.cells[2].outputs if RECORD_MIME in o["data"])["metadata"]
    assert "continuing the conversation saved in the notebook" in meta["fuxi"]["notes"][0]
    assert len(api.requests[2]["messages"]) == 1 and third["parent"] is None


def test_resume_and_fork_branch_the_conversation(tmp_path, api):
    for answer in ("A", "B", "C", "D"):
        api.add(Turn([text(answer)]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi\none", "%%fuxi\ntwo", "%%fuxi --resume c1\nthree",
                         "%%fuxi --fork\nfour", "%fuxi sessions")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        _run_all(frontend, nb)
    one, two, three, four = (_record(c) for c in nb.cells[1:5])
    texts = [json.dumps(m["content"]) for m in api.requests[2]["messages"]]
    assert len(texts) == 3 and "one" in texts[0] and "two" not in "".join(texts)
    assert two["parent"] == "c1" and two["session_id"] == one["session_id"]
    assert three["parent"] == "c1" and three["session_id"] == one["session_id"]
    assert four["parent"] == "c3" and four["session_id"] != one["session_id"]
    assert len(api.requests[3]["messages"]) == 5  # one, A, three, C, four
    listing = nb.cells[5].outputs[0]["data"]["text/plain"]
    assert one["session_id"][:8] in listing and four["session_id"][:8] in listing
    assert "fork of c3" in listing


def test_resume_of_an_unknown_id_is_one_line(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi --resume nowhere\nhi")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.execute(nb.cells[0])
        assert frontend.execute(nb.cells[1]) == "error"
    assert "no recorded cell or session with that id" in _errors(nb.cells[1])
    assert "Traceback" not in _errors(nb.cells[1]) and api.requests == []


def _recorded(tmp_path, api, *sources, turns):
    """A notebook recorded live (with cell ids, as JupyterLab runs it) and saved."""
    api.add(*turns)
    path, nb = loaded_notebook(tmp_path, *sources)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        for cell in nb.cells:
            assert frontend.execute(cell, decide=lambda card: ("Allow", None)) == "ok", \
                cell.outputs
    nbformat.write(nb, path)
    api.reset()
    return path, nb


def _headless(tmp_path, api, path, **env):
    """Run the saved notebook as nbclient/nbval do: no cell ids, no API key."""
    nb = nbformat.read(path, as_version=4)
    environment = _env(api, path, ANTHROPIC_API_KEY="", **env)
    statuses = []
    with NotebookFrontend(cwd=str(tmp_path), env=environment, cell_ids=False) as frontend:
        for cell in nb.cells:
            statuses.append(frontend.execute(cell))
    return nb, statuses


WRITE = tool_use("Bash", {"command": "echo made > made.txt && cat made.txt"})


def test_headless_replay_needs_an_explicit_request_and_then_rebuilds_files(tmp_path, api):
    path, recorded = _recorded(tmp_path, api, "%%fuxi --new\nmake a file",
                               "%%fuxi --new\nsay hi",
                               turns=[Turn([text("Making it."), WRITE]),
                                      Turn([text("Made.")]), Turn([text("hi")])])
    (tmp_path / "made.txt").unlink()
    refused, statuses = _headless(tmp_path, api, path)
    assert statuses == ["ok", "error", "error"]
    error = _errors(refused.cells[1])
    assert "only when asked to" in error and "FUXI_REPLAY" in error
    assert _record(refused.cells[1]) == _record(recorded.cells[1])  # nothing lost
    assert not (tmp_path / "made.txt").exists()
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok", "ok"] and (tmp_path / "made.txt").read_text() == "made\n"
    for before, after in zip(recorded.cells[1:], replayed.cells[1:], strict=True):
        assert _record(after) == _record(before)  # same ids without cell ids from the frontend
        assert [o["data"] for o in after.outputs] == [o["data"] for o in before.outputs]
    assert api.requests == []


def test_cells_keep_their_identity_when_reordered(tmp_path, api):
    path, _ = _recorded(tmp_path, api, "%%fuxi --new\nfirst question",
                        "%%fuxi --new\nsecond question",
                        turns=[Turn([text("one")]), Turn([text("two")])])
    nb = nbformat.read(path, as_version=4)
    nb.cells[1], nb.cells[2] = nb.cells[2], nb.cells[1]
    nbformat.write(nb, path)
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok", "ok"]
    assert [_record(c)["cell_id"] for c in replayed.cells[1:]] == ["c2", "c1"]
    assert api.requests == []


def test_a_cell_with_no_record_and_no_key_fails_with_one_line(tmp_path, api):
    path, _ = loaded_notebook(tmp_path, "%%fuxi\nnever recorded")
    nb, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="lenient")
    assert statuses == ["ok", "error"]
    error = _errors(nb.cells[1])
    assert error.startswith("UsageError") and "no recorded run to replay" in error
    assert "ANTHROPIC_API_KEY" in error and api.requests == []


def test_fresh_headless_runs_record_the_same_ids_in_separate_kernels(tmp_path, api):
    records = []
    for _ in range(2):
        api.reset([Turn([text("a")]), Turn([text("b")])])
        folder = tmp_path / "same"
        folder.mkdir(exist_ok=True)
        path, nb = loaded_notebook(folder, "%%fuxi\nsame prompt", "%%fuxi\nsame prompt")
        env = _env(api, path)
        with NotebookFrontend(cwd=str(folder), env=env, cell_ids=False) as frontend:
            _run_all(frontend, nb)
        records.append([_record(c) for c in nb.cells[1:]])
    assert records[0] == records[1]
    assert records[0][0]["cell_id"] == "c1" and records[0][1]["cell_id"] == "c2"
    assert records[0][1]["parent"] == "c1"


def test_without_a_known_notebook_cells_get_ids_from_their_text(tmp_path, api):
    api.add(Turn([text("a")]), Turn([text("b")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nsame prompt", "%%fuxi\nsame prompt")
    env = {**_env(api, path), "FUXI_NOTEBOOK": ""}
    elsewhere = tmp_path / "elsewhere"  # no notebook in the kernel's folder to go by
    elsewhere.mkdir()
    with NotebookFrontend(cwd=str(elsewhere), env=env, cell_ids=False) as frontend:
        _run_all(frontend, nb)
    first, second = (_record(c) for c in nb.cells[1:])
    assert first["cell_id"].startswith("fx-") and second["cell_id"] == first["cell_id"] + "-2"
    assert "does not know its notebook file" in _errors(nb.cells[1])  # said once
    assert "does not know" not in _errors(nb.cells[2])
    # once the file is known, such a notebook replays: each cell is the one its record names
    for cell in nb.cells:
        cell.outputs = [o for o in cell.outputs if o.get("name") != "stderr"]
    nbformat.write(nb, path)
    api.reset()
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok", "ok"], [_errors(c) for c in replayed.cells]
    assert [_record(c) for c in replayed.cells[1:]] == [first, second] and api.requests == []


def test_jupyter_execute_style_kernels_find_the_notebook_of_their_folder(tmp_path, api):
    """nbclient tells the kernel nothing but runs it in the notebook's folder."""
    api.add(Turn([text("a")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nonly here")
    (tmp_path / "other.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    env = {**_env(api, path), "FUXI_NOTEBOOK": ""}
    with NotebookFrontend(cwd=str(tmp_path), env=env, cell_ids=False) as frontend:
        _run_all(frontend, nb)
    assert _record(nb.cells[1])["cell_id"] == "c1"  # the saved cell's id, not a derived one
    assert "it uses nb.ipynb" in _errors(nb.cells[1])


def test_a_replayed_insert_cell_does_not_insert_the_cell_again(tmp_path, api):
    api.add(Turn([tool_use("InsertCell", {"code": "print('kept')"})]), Turn([text("Added.")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi --new --allowed-tools InsertCell\nadd a cell",
                         "%%fuxi --new --allowed-tools InsertCell --replay strict\nadd a cell")
    nb.cells[2].id = "c1"  # the same cell, run again (as with Shift+Enter twice)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        _run_all(frontend, nb, nb.cells[:2])
        inserted = [p for p in frontend.last_reply.get("payload", [])
                    if p.get("source") == "set_next_input"]
        assert frontend.execute(nb.cells[2], decide=lambda card: ("Replay", None)) == "ok", \
            nb.cells[2].outputs
        again = [p for p in frontend.last_reply.get("payload", [])
                 if p.get("source") == "set_next_input"]
    assert [p["text"] for p in inserted] == ["print('kept')"] and again == []
    assert _record(nb.cells[2]) == _record(nb.cells[1]) and len(api.requests) == 2


@pytest.mark.parametrize(("line", "cell_ids"), [
    ("%%fuxi --new", False),  # recorded headless: the policy denied (nobody could approve)
    ("%%fuxi --new --permission-mode dontAsk", True),  # recorded in a clicking frontend
])
def test_policy_denials_replay_with_the_words_the_model_got(tmp_path, api, line, cell_ids):
    api.add(Turn([tool_use("Python", {"code": "1 + 1"})]), Turn([text("Not allowed, ok.")]))
    path, nb = loaded_notebook(tmp_path, f"{line}\ncompute")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path),
                          cell_ids=cell_ids) as frontend:
        _run_all(frontend, nb)
    nbformat.write(nb, path)
    recorded = _record(nb.cells[1])
    denial = recorded["messages"][2]["content"][0]
    assert denial["is_error"] and "was not granted" in denial["content"]
    api.reset()
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok"], _errors(replayed.cells[1])
    assert _record(replayed.cells[1]) == recorded and api.requests == []


def test_a_replay_answers_mcp_calls_from_the_record_and_starts_no_server(tmp_path, api):
    import sys

    server = ROOT / "tests" / "mcp" / "server_script.py"
    (tmp_path / "servers.json").write_text(json.dumps({"demo": {
        "command": sys.executable, "args": [str(server), "--touch", str(tmp_path / "started")]}}))
    line = "%%fuxi --new --mcp-config servers.json --allowed-tools mcp__demo__add\nadd them"
    path, recorded = _recorded(tmp_path, api, line, turns=[
        Turn([tool_use("mcp__demo__add", {"a": 2, "b": 40})]), Turn([text("42")])])
    result = _record(recorded.cells[1])["messages"]
    assert "42" in json.dumps(result)  # the live call reached the server
    (tmp_path / "started").unlink()
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok"], _errors(replayed.cells[1])
    assert _record(replayed.cells[1]) == _record(recorded.cells[1])
    assert not (tmp_path / "started").exists() and api.requests == []
