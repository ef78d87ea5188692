"""The cell tools in a real JupyterLab: the agent edits a cell, inserts one below it and
runs it, through the extension's `fuxi.notebook` comm; `%fuxi undo` takes it back. Fails
without the extension (the tools would not be offered)."""

from __future__ import annotations

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "
#: each cell's source as its editor shows it (the notebook is small: every cell is drawn)
SOURCES = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).map(
    cell => { const editor = cell.querySelector('.cm-content');
              return editor ? editor.innerText.replace(/\\u00a0/g, ' ').trimEnd() : ''; })"""


def _sources(nb) -> list[str]:
    return nb.page.evaluate(SOURCES)


def test_the_agent_edits_inserts_and_runs_cells_and_undo_takes_it_back(
        notebook, api: FakeMessagesServer):
    nb = notebook([LOAD, "print(1 + 1)",
                   "%%fuxi --permission-mode acceptEdits --allowed-tools RunCell\nfix it",
                   "%fuxi undo"])
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("EditCell", {"cell_id": target, "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([tool_use("InsertCell", {"code": "## The answer", "cell_type": "markdown",
                                          "after_cell_id": target})]),
            Turn([tool_use("RunCell", {"cell_id": target})]),
            Turn([text("Fixed and ran it.")]))
    nb.run_and_wait(0)
    nb.run_cell(2)
    nb.wait_output(3, DONE)  # the markdown cell inserted below cell 1 moved it down by one
    nb.wait_done(3)
    assert _sources(nb)[1:3] == ["print(40 + 2)", "## The answer"]
    nb.wait_output(1, "42")  # RunCell's output is in the cell it ran
    results = [b for m in api.requests[-1]["messages"] if m["role"] == "user"
               for b in m["content"] if b.get("type") == "tool_result"]
    assert not any(r.get("is_error") for r in results), results
    nb.run_cell(4)  # `%fuxi undo`: it deletes the inserted cell, so it moves up to 3
    nb.wait_output(3, "undid cell")
    nb.page.wait_for_function(f"() => ({SOURCES})()[1] === 'print(1 + 1)'", timeout=20_000)
    assert "## The answer" not in _sources(nb)
    # what was undone is written into the agent cell's record (update_display_data)
    nb.wait_output(2, "Undone by %fuxi undo")
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4).cells[2]
    undone = saved.metadata["fuxi"]["volatile"]["undone"]  # the extension's mirror
    assert undone["restored"][0].startswith("cell "), undone
    record = [o for o in saved.outputs if "application/vnd.fuxi.session.v1+json" in o.data]
    assert record[0].metadata["fuxi"]["undone"] == undone
