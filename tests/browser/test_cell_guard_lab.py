"""The `expect` guard of the cell tools in a real JupyterLab with the extension: a cell the
person edits in the browser after the agent read it, or after an agent cell changed it, is
never overwritten. EditCell then fails saying so (the cell keeps the person's text), and
`%fuxi undo` keeps the person's text and names the cell, here and in the agent cell's
saved record."""

from __future__ import annotations

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .lab import NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "
#: each cell's source as its editor shows it (the notebook is small: every cell is drawn)
SOURCES = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')).map(
    cell => { const editor = cell.querySelector('.cm-content');
              return editor ? editor.innerText.replace(/\\u00a0/g, ' ').trimEnd() : ''; })"""


def _source(nb: NotebookPage, index: int) -> str:
    return str(nb.page.evaluate(SOURCES)[index])


def _type_over(nb: NotebookPage, index: int, source: str) -> None:
    """Type `source` over cell `index`'s source, as a person does (not saved), and wait
    until the editor shows it."""
    nb.cell(index).locator(".cm-content").click()
    nb.page.keyboard.press("Control+a")
    nb.page.keyboard.insert_text(source)
    nb.page.wait_for_function(f"() => ({SOURCES})()[{index}] === {source!r}",
                              timeout=10_000)


def _results(api: FakeMessagesServer) -> list[dict]:
    return [b for m in api.requests[-1]["messages"] if m["role"] == "user"
            for b in m["content"] if b.get("type") == "tool_result"]


def test_an_edit_of_a_cell_the_person_changed_after_the_agent_read_it_fails(
        notebook, api: FakeMessagesServer):
    nb = notebook([LOAD, "print(1 + 1)", "%%fuxi\nread the notebook, then fix the sum"])
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("NotebookRead", {})]),
            Turn([tool_use("EditCell", {"cell_id": target, "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([text("I will read it again.")]))
    nb.run_and_wait(0)
    nb.run_cell(2)
    nb.wait_buttons(2, "Allow")  # the agent read the cell and waits to edit it...
    mine = "print(1 + 1)  # mine"
    _type_over(nb, 1, mine)  # ...while the person edits it
    nb.click(2, "Allow")
    nb.wait_output(2, DONE)
    nb.wait_done(2)
    assert _source(nb, 1) == mine  # nothing was changed
    edit = _results(api)[-1]
    assert edit.get("is_error") is True, edit
    assert "changed since you last read it" in str(edit["content"])
    assert mine in str(edit["content"])  # shown as it is now


def test_undo_keeps_a_cell_the_person_changed_after_the_agent_cell(
        notebook, api: FakeMessagesServer):
    nb = notebook([LOAD, "print(1 + 1)",
                   "%%fuxi --permission-mode acceptEdits\nfix the sum", "%fuxi undo"])
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("EditCell", {"cell_id": target, "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([text("Fixed.")]))
    nb.run_and_wait(0)
    nb.run_cell(2)
    nb.wait_output(2, DONE)
    nb.wait_done(2)
    assert _source(nb, 1) == "print(40 + 2)"
    mine = "print(40 + 2)  # checked by hand"
    _type_over(nb, 1, mine)
    nb.run_cell(3)  # `%fuxi undo`: the notebook answers after the line ended
    nb.wait_output(3, "0 restored, 1 not undone")
    said = (f"not undone: cell {target} “print(1 + 1)”: changed since the agent cell "
            "(kept as it is)")
    nb.wait_output(3, said)
    assert _source(nb, 1) == mine
    nb.wait_output(2, "Undone by %fuxi undo: 0 restored, 1 not undone")
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4).cells
    assert saved[1].source == mine
    undone = saved[2].metadata["fuxi"]["volatile"]["undone"]  # the extension's mirror
    assert undone["restored"] == [] and undone["kept"] == [said.removeprefix("not undone: ")]


def test_undo_puts_a_deleted_cell_back_whole(notebook, api: FakeMessagesServer):
    """The cell JupyterLab's model gives for a deletion comes back under its id, with its
    outputs (the extension's restore_cell with the cell as it was)."""
    nb = notebook([LOAD, "print('the output to keep')",
                   "%%fuxi --permission-mode acceptEdits\ndrop it", "%fuxi undo"])
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("DeleteCell", {"cell_id": target})]), Turn([text("Dropped.")]))
    nb.run_and_wait(0)
    nb.run_and_wait(1)
    nb.wait_output(1, "the output to keep")
    nb.run_cell(2)
    nb.wait_output(1, DONE)  # the agent cell, one up once its target is gone
    nb.wait_done(1)
    assert "print('the output to keep')" not in nb.page.evaluate(SOURCES)
    nb.run_cell(2)  # `%fuxi undo`, back at 3 once the cell is back above it
    nb.wait_output(3, f"restored cell {target}")
    assert _source(nb, 1) == "print('the output to keep')"
    nb.wait_output(1, "the output to keep")
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4).cells[1]
    assert saved.id == target and saved.outputs[0]["text"] == "the output to keep\n"
