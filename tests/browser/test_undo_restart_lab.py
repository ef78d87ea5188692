"""Undo after a restart in a real JupyterLab (issue 39, 11): an agent cell writes a file,
inserts a cell through the extension and sets a kernel name; the kernel is restarted from
the Kernel menu; `%fuxi undo` in the new kernel removes the file, deletes the inserted
cell (the extension's comm, opened again by the new kernel) and says in one line that the
names cannot come back. Fails without the undo journal (the new kernel knew nothing)."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .shots import docs_screenshot

if TYPE_CHECKING:
    from .lab import NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "
KERNEL_START = 120  # seconds: a kernel start and the extension on 2 slow cores
#: each cell's source as its editor shows it (the notebook is small: every cell is drawn)
SOURCES = """() => Array.from(document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')).map(
    cell => { const editor = cell.querySelector('.cm-content');
              return editor ? editor.innerText.replace(/\\u00a0/g, ' ').trimEnd() : ''; })"""


def _sources(nb: NotebookPage) -> list[str]:
    return list(nb.page.evaluate(SOURCES))


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, ended but not reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _restart(nb: NotebookPage, old_pid: int) -> None:
    """Kernel → Restart Kernel…, confirmed; waits until the old kernel process is gone and
    the new kernel is idle (evidence, not a pause)."""
    nb.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    nb.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel…$")).click()
    nb.page.locator(".jp-Dialog-button", has_text=re.compile(r"^Restart$")).click()
    deadline = time.monotonic() + KERNEL_START
    while _alive(old_pid):
        assert time.monotonic() < deadline, "the kernel was not restarted"
        nb.page.wait_for_timeout(100)  # polling the process, not waiting a fixed time
    nb._wait_ready(KERNEL_START)


def test_undo_after_a_restart_removes_the_file_and_deletes_the_inserted_cell(
        notebook, api: FakeMessagesServer):
    nb = notebook([LOAD, "import os\nprint('kernel', os.getpid())",
                   "%%fuxi --permission-mode acceptEdits --allowed-tools Write,Python\n"
                   "write notes",
                   "%fuxi undo"])
    written = nb.lab.root / "restart-notes.md"
    api.add(Turn([tool_use("Write", {"file_path": "restart-notes.md",
                                     "content": "# notes\n"})]),
            Turn([tool_use("InsertCell", {"code": "## Notes written", "cell_type": "markdown",
                                          "after_cell_id": _cell_id(nb, 1)})]),
            Turn([tool_use("Python", {"code": "noted = True"})]),
            Turn([text("Wrote the notes.")]))
    nb.run_and_wait(0)
    nb.run_and_wait(1)
    shown_pid = re.search(r"kernel (\d+)", nb.output_text(1))
    assert shown_pid is not None, nb.output_text(1)
    pid = int(shown_pid.group(1))
    nb.run_cell(2)
    nb.wait_output(3, DONE, timeout=KERNEL_START)  # the inserted cell moved it down by one
    nb.wait_done(3)
    assert _sources(nb)[2] == "## Notes written" and written.exists()

    _restart(nb, pid)
    nb.run_and_wait(0, timeout=KERNEL_START)  # %load_ext in the new kernel
    assert "[1]" in nb.cell(0).locator(".jp-InputPrompt").first.inner_text()
    nb.run_cell(4)  # `%fuxi undo`: it deletes the inserted cell, so it moves up to 3
    nb.page.wait_for_function(f"() => !({SOURCES})().includes('## Notes written')",
                              timeout=30_000)
    nb.wait_output(3, "2 restored, 1 not undone")  # the file, the cell; the name
    nb.outputs(3).locator("summary", has_text="undid cell").click()  # its details
    nb.wait_output(3, "restored cell")
    shown = nb.output_text(3)
    assert "undid cell" in shown and "Traceback" not in shown, shown
    lost = [line for line in shown.splitlines() if "cannot come back" in line]
    assert len(lost) == 1 and "noted" in lost[0], shown
    assert not written.exists()
    docs_screenshot(nb.page, "undo-after-restart.png")


def _cell_id(nb: NotebookPage, index: int) -> str:
    import nbformat

    return str(nbformat.read(str(nb.path), as_version=4).cells[index].id)
