"""Issue 39 (7, 9, 10, replay command) in a real kernel, through the testing frontend that
emulates the extension's comm: the Settings Editor's defaults reach the next agent cell
under a cell's own options and `%fuxi config`; an agent cell `about` other cells sends
them (source and outputs) with its prompt; a cell the agent inserts or edits carries its
provenance; "Fuxi: replay this cell" replays a recorded cell without asking the model."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _cell(source: str, **metadata):
    return nbformat.v4.new_code_cell(source, metadata=metadata)


def _replay_consent(card):
    """The new kernel asks before it replays a record (it may run recorded calls)."""
    return ("Replay", None) if "Replay" in card.buttons else None


def _notes(cell) -> list[str]:
    """The cell's notes (its record output's metadata, where JupyterLab keeps them)."""
    return [note for o in cell.outputs for note in
            ((o.get("metadata") or {}).get("fuxi") or {}).get("notes", [])]


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout") + \
        "".join(str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)


def test_the_settings_editors_defaults_reach_the_next_agent_cell(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\none", "%%fuxi\ntwo",
                               "%%fuxi --model claude-opus-4-7\nthree", "%%fuxi\nfour")
    api.add(*(Turn([text(f"answer {n}")]) for n in range(5)))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        frontend.settings = {"model": "claude-opus-5", "permissionMode": "acceptEdits",
                             "effort": "high", "maxBudgetUsd": 2}
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[1]) == "ok", _errors(nb.cells[1])
        # the browser may not make the agent ask less: said once, in one line
        warned = _notes(nb.cells[1])
        assert any("permissionMode 'acceptEdits' must be one of default, plan, dontAsk"
                   in note and "\n" not in note for note in warned), warned
        frontend.set_settings({"model": "claude-opus-4-8"})  # changed in the Settings Editor
        assert frontend.execute(nb.cells[2]) == "ok"
        assert not any("acceptEdits" in note for note in _notes(nb.cells[2]))  # once
        assert frontend.execute(nb.cells[3]) == "ok"  # the cell's own --model wins
        config = _cell("%fuxi config --model claude-opus-4-6")
        assert frontend.execute(config) == "ok", _errors(config)
        assert "from the Settings Editor" not in _stdout(config)  # its one setting is won over
        assert frontend.execute(nb.cells[4]) == "ok"  # %fuxi config wins over it
    models = [request["model"] for request in api.requests]
    assert models == ["claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6"]
    assert api.requests[0]["output_config"]["effort"] == "high"


def test_without_the_extension_the_settings_change_nothing(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\none")
    api.add(Turn([text("hi")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, FUXI_MODEL="claude-opus-4-6"),
                          extension=False) as frontend:
        frontend.settings = {"model": "claude-opus-5"}  # nothing sends them
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
    assert api.requests[0]["model"] == "claude-opus-4-6"


def test_percent_fuxi_config_names_the_settings_editors_defaults(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\none")
    api.add(Turn([text("hi")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.settings = {"effort": "low", "replay": "strict"}
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
        config = _cell("%fuxi config")
        assert frontend.execute(config) == "ok"
    shown = _stdout(config)
    assert "from the Settings Editor (Fuxi): --effort, --replay" in shown
    assert "--effort: low" in shown


def test_an_agent_cell_about_other_cells_sends_them_with_its_prompt(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "rows = [1, 2]\nprint('rows:', len(rows))\n1 / 0",
                               "secret_cell = 'unrelated'")
    agent = _cell("%%fuxi\nfix this cell", fuxi={"about": ["c1"]})
    plain = _cell("%%fuxi\nand now?")
    nb.cells += [agent, plain]
    api.add(Turn([text("Divide by something else.")]), Turn([text("Nothing more.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[1]) == "error"  # the cell the user points at
        assert frontend.execute(agent) == "ok", _errors(agent)
        assert frontend.execute(plain) == "ok", _errors(plain)
    first = str(api.requests[0]["messages"][0]["content"])
    assert "Cells the user points at" in first
    assert "[cell 2 · id c1 · code]" in first and "print('rows:', len(rows))" in first
    assert "stream: rows: 2" in first
    assert "error ZeroDivisionError: division by zero" in first
    assert "[cell 3" not in first  # only the cells it is about
    second = str(api.requests[1]["messages"][-1]["content"])
    assert "Cells the user points at" not in second  # a prompt about no cell: unchanged
    shown = "".join(str(o.get("data", {}).get("text/markdown", "")) for o in agent.outputs)
    assert "Context sent with the prompt" in shown and "Cells the user points at" in shown


def test_a_cell_the_agent_inserts_or_edits_carries_its_provenance(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "total = 1 + 1",
                               "%%fuxi --permission-mode acceptEdits\nwork")
    api.add(Turn([tool_use("EditCell", {"cell_id": "c1", "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([tool_use("InsertCell", {"code": "print(total)", "after_cell_id": "c1"})]),
            Turn([text("Done.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(c) for c in list(nb.cells)] == ["ok"] * 3
        edited = nb.cells[1].metadata["fuxi"]["provenance"]
        nbformat.write(nb, path)  # saved: the provenance is in the file
        undo = _cell("%fuxi undo")  # undone, the edited cell loses the agent's mark
        assert frontend.execute(undo) == "ok", _errors(undo)
        said = _stdout(undo)  # each cell named as it reads on screen, not by its id alone
        assert "cell c1 “total = 1 + 1”" in said and "“print(total)”" in said, said
    assert nb.cells[1].source == "total = 1 + 1" and "fuxi" not in nb.cells[1].metadata
    assert not any(c.source == "print(total)" for c in nb.cells)
    nb = nbformat.read(path, as_version=4)
    inserted = next(c for c in nb.cells if c.source == "print(total)").metadata["fuxi"]
    assert [e["tool"] for e in edited] == ["EditCell"]
    assert [e["tool"] for e in inserted["provenance"]] == ["InsertCell"]
    for entry in (*edited, *inserted["provenance"]):
        assert entry["agent_cell"] == "c2" and entry["at"].endswith("Z")
        assert entry["session"] and len(entry["session"]) >= 8
    assert nb.cells[1].metadata["fuxi"]["provenance"] == edited
    # exported for review, from the saved file
    report = subprocess.run([sys.executable, "-m", "fuxi_notebook", "sessions", "provenance",
                             str(path)], capture_output=True, text=True, check=True).stdout
    assert "2 cell(s) an agent inserted or edited" in report
    assert "cell 2 (code, id c1)\n  edited by agent cell 4 “work” · EditCell" in report
    assert "    | total = 40 + 2" in report
    assert "inserted by agent cell 4 “work” · InsertCell" in report


def test_replay_this_cell_replays_the_record_without_asking_the_model(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nsay hi")
    api.add(Turn([text("Hi there.")]), Turn([text("Hello again.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
        asked = len(api.requests)
        frontend.restart()  # a new kernel; the API key is set, so a run would be live
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.replay(nb.cells[1], decide=_replay_consent) == "ok", \
            _errors(nb.cells[1])
        assert len(api.requests) == asked  # replayed: no request
        shown = "".join(str(o.get("data", {}).get("text/plain", "")) for o in nb.cells[1].outputs)
        assert "Replayed" in shown and "Hi there." in shown
        assert frontend.execute(nb.cells[1]) == "ok"  # once: run again, it is live
        assert len(api.requests) == asked + 1
