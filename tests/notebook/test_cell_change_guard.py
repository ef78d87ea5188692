"""The `expect` guard of the cell tools in a real kernel, through the testing frontend
(whose cell changes are held to the extension's own rules by one table of cases): a cell
the user changes after the agent read it, or after an agent cell changed it, is never
overwritten; the agent's call fails saying so, and `%fuxi undo` keeps the user's version
and names the cell. A deleted cell comes back whole (outputs, metadata) or not at all."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors

AGENT = "%%fuxi --permission-mode acceptEdits\n"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _sources(nb: Any) -> dict[str, str]:
    return {cell["id"]: cell["source"] for cell in nb.cells}


def _results(api: FakeMessagesServer) -> list[dict[str, Any]]:
    return [b for m in api.requests[-1]["messages"] if m["role"] == "user"
            for b in m["content"] if b.get("type") == "tool_result"]


def _shown(cell: Any) -> str:
    return "\n".join(str((o.get("data") or {}).get("text/plain", "")) for o in cell.outputs)


def _user_edits(nb: Any, cell_id: str, source: str, then: Turn) -> Any:
    """A model step that first has the user edit a cell (the agent is between calls)."""
    def step(_request: dict[str, Any]) -> Turn:
        next(c for c in nb.cells if c["id"] == cell_id)["source"] = source
        return then
    return step


def test_an_edit_of_a_cell_the_user_changed_since_the_agent_read_it_fails(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "total = 1 + 1", "rows = [1]",
                               f"{AGENT}fix the sum and drop the rows")
    mine = "total = 1 + 1  # the user's, typed while the agent worked"
    api.add(Turn([tool_use("NotebookRead", {})]),
            _user_edits(nb, "c1", mine, Turn([tool_use("EditCell", {
                "cell_id": "c1", "old_string": "1 + 1", "new_string": "40 + 2"})])),
            _user_edits(nb, "c2", "rows = [1, 2]",
                        Turn([tool_use("DeleteCell", {"cell_id": "c2"})])),
            Turn([text("I will look again.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        statuses = [frontend.execute(cell) for cell in list(nb.cells)]
    assert statuses == ["ok"] * 4, [_errors(c) for c in nb.cells]
    assert _sources(nb)["c1"] == mine  # nothing was changed
    assert _sources(nb)["c2"] == "rows = [1, 2]"  # nor deleted
    edit, delete = _results(api)[1:]
    assert edit.get("is_error") is True and delete.get("is_error") is True
    for result, now in ((edit, mine), (delete, "rows = [1, 2]")):
        said = str(result["content"])
        assert "changed since you last read it" in said and "nothing was changed" in said
        assert now in said  # what the cell holds now, to make the change again against


def test_undo_keeps_a_cell_the_user_changed_after_the_agent_cell_and_names_it(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "total = 1 + 1", "x = 0", f"{AGENT}fix the sum")
    api.add(Turn([tool_use("EditCell", {"cell_id": "c1", "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([tool_use("EditCell", {"cell_id": "c2", "old_string": "0",
                                        "new_string": "1"})]),
            Turn([text("Fixed.")]))
    mine = "total = 40 + 2  # checked by hand"
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in list(nb.cells)] == ["ok"] * 4
        assert _sources(nb)["c1"] == "total = 40 + 2"
        nb.cells[1]["source"] = mine  # the user edits the agent's result
        undo = nbformat.v4.new_code_cell("%fuxi undo")
        assert frontend.execute(undo) == "ok", _errors(undo)
        frontend.wait_until(lambda: "waiting" not in _shown(undo))
    shown = _shown(undo)
    assert ("not undone: cell c1 “total = 1 + 1”: changed since the agent cell (kept as it "
            "is)") in shown, shown
    assert "restored cell c2 “x = 0”" in shown, shown
    assert _sources(nb)["c1"] == mine and _sources(nb)["c2"] == "x = 0"
    record = next(o for o in nb.cells[3].outputs if "fuxi" in o.get("metadata", {}))
    undone = record["metadata"]["fuxi"]["undone"]  # and the agent cell's record says so
    assert undone["kept"] == ["cell c1 “total = 1 + 1”: changed since the agent cell (kept "
                              "as it is)"]


def test_undo_puts_a_deleted_cell_back_whole_and_leaves_a_cell_the_user_moved(
        tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "print('kept')", "a = 1", "b = 2",
                               f"{AGENT}tidy up")
    api.add(Turn([tool_use("DeleteCell", {"cell_id": "c1"})]),
            Turn([tool_use("MoveCell", {"cell_id": "c3", "to_index": 1})]),
            Turn([text("Tidied.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok" and frontend.execute(nb.cells[1]) == "ok"
        nb.cells[1].metadata["tags"] = ["keep"]
        before = nbformat.from_dict(dict(nb.cells[1]))
        assert frontend.execute(nb.cells[4]) == "ok", _errors(nb.cells[4])
        assert [c["id"] for c in nb.cells] == ["load", "c3", "c2", "c4"]
        nb.cells.insert(0, nb.cells.pop(1))  # the user moves c3 to the top
        undo = nbformat.v4.new_code_cell("%fuxi undo")
        assert frontend.execute(undo) == "ok", _errors(undo)
        frontend.wait_until(lambda: "waiting" not in _shown(undo))
    shown = _shown(undo)
    assert "not undone: cell c3: moved since the agent cell (left where it is)" in shown
    assert "restored cell c1" in shown, shown
    assert [c["id"] for c in nb.cells] == ["c3", "c1", "load", "c2", "c4"]
    back = next(c for c in nb.cells if c["id"] == "c1")
    assert back == before  # its outputs, execution count and metadata too
