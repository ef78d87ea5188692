"""Issue 39 (2): the transcript shows a cell tool's call as a person reads it, the cell by
its place in the notebook and its first line, the diff of an edit, the code of a run, the
source a deletion took: never the call's JSON with the cell's id. Seen in a real kernel
with the extension's comm (emulated by the testing frontend); a replay of the saved
notebook shows exactly what the live run showed (nbval compares it)."""

from __future__ import annotations

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors

ALLOW = "%%fuxi --permission-mode acceptEdits --allowed-tools RunCell"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _transcript(cell, mime: str) -> str:
    return "\n".join(str(o["data"][mime]) for o in cell.outputs
                     if o.get("output_type") == "display_data" and mime in o.get("data", {}))


def _shown(cell) -> list[dict]:
    return [{k: o[k] for k in ("output_type", "data") if k in o} for o in cell.outputs]


def test_cell_calls_read_by_position_and_first_line_live_and_replayed(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "# load the data\ntotal = 1 + 1",
                               "print('old note')", "x = 1", f"{ALLOW}\nwork on the notebook")
    api.add(
        Turn([tool_use("EditCell", {"cell_id": "c1", "old_string": "1 + 1",
                                    "new_string": "40 + 2"})]),
        Turn([tool_use("EditCell", {"cell_id": "c3", "old_string": "",
                                    "new_string": "y = 2\nz = 3"})]),
        Turn([tool_use("RunCell", {"cell_id": "c1"})]),
        Turn([tool_use("InsertCell", {"code": "# Notes\nmore", "cell_type": "markdown",
                                      "after_cell_id": "c1"})]),
        Turn([tool_use("MoveCell", {"cell_id": "c2", "to_index": 1})]),
        Turn([tool_use("DeleteCell", {"cell_id": "c2"})]),
        Turn([tool_use("EditCell", {"cell_id": "nope", "old_string": "a",
                                    "new_string": "b"})]),
        Turn([text("Done.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        agent = nb.cells[4]
        assert [frontend.execute(cell) for cell in list(nb.cells)] == ["ok"] * 5, \
            _errors(agent)
        live = _shown(agent)
    plain, markdown = _transcript(agent, "text/plain"), _transcript(agent, "text/markdown")
    # positions count every cell from the top (the %load_ext cell is cell 1)
    assert "EditCell: cell 2: # load the data" in plain
    assert "-total = 1 + 1\n" in plain.replace("    ", "") and "+total = 40 + 2" in plain
    assert "EditCell: cell 4: x = 1" in plain  # the whole source replaced: its diff
    assert "-x = 1" in plain and "+y = 2" in plain and "+z = 3" in plain
    assert "RunCell: cell 2: # load the data" in plain
    assert "    total = 40 + 2" in plain  # the code that ran, under its line
    assert "InsertCell: new cell 3: # Notes" in plain
    assert "MoveCell: cell 4 → 2: print('old note')" in plain
    assert "DeleteCell: cell 2: print('old note')" in plain
    assert "EditCell: cell nope" in plain  # no such cell: named by the id it was given
    assert "cell_id" not in plain and "cell_id" not in markdown
    assert "<b>EditCell</b> <code>cell 2: # load the data</code>" in markdown
    assert "```diff" in markdown and "```python" in markdown
    record = next(o["data"]["application/vnd.fuxi.session.v1+json"] for o in agent.outputs
                  if "application/vnd.fuxi.session.v1+json" in o.get("data", {}))
    assert sorted(c.get("at") for c in record["cells"].values()) == [1, 1, 1, 2, 3, 3]
    nbformat.write(nb, path)  # saved, as the user saves it
    requests = len(api.requests)
    saved = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path, FUXI_REPLAY="strict"),
                          flavor="nbclient") as frontend:
        code = [cell for cell in saved.cells if cell.cell_type == "code"]
        statuses = [frontend.execute(cell) for cell in code]
    assert statuses == ["ok"] * len(code), [_transcript(c, "text/plain") for c in code]
    assert len(api.requests) == requests  # replayed from the record
    agent = next(c for c in saved.cells if c.source.startswith("%%fuxi"))
    assert _shown(agent) == live  # the same outputs, the cells named as the live run did


def test_a_cell_run_without_cell_calls_stores_no_cells_field(tmp_path, api):
    """Records of runs that named no cell are stored byte for byte as before."""
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nhello")
    api.add(Turn([text("hi")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
    record = next(o["data"]["application/vnd.fuxi.session.v1+json"] for o in nb.cells[1].outputs
                  if "application/vnd.fuxi.session.v1+json" in o.get("data", {}))
    assert "cells" not in record and "compactions" not in record
