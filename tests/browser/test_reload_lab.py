"""Issue 35, finding 5, as it was seen in a real JupyterLab: reloading the tab (F5) while
a `%%fuxi` cell's approval card waits. A reloaded tab is a new frontend: the running
cell must finish into it (its answer shown, no "waiting for approval…" left), and its
record must reach the file; the next cell of that tab must not wait for an extension
that no longer answers."""

from __future__ import annotations

import time

import nbformat
import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "


def test_a_cell_whose_card_waited_through_a_reload_finishes_into_the_new_tab(
        notebook, api: FakeMessagesServer):
    api.add(Turn([text("I will make the file."),
                  tool_use("Bash", {"command": "touch after-reload"})]),
            Turn([text("Made it after the reload.")]),
            Turn([text("The next cell ran.")]))
    nb = notebook([LOAD, "%%fuxi\nMake the file", "%%fuxi\nAnd then?"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Allow", "Deny")
    nb.save()
    nb.reload(busy=True)
    nb.wait_buttons(1, "Allow", "Deny", timeout=60)  # the card, drawn again from the kernel
    nb.click(1, "Allow")
    nb.wait_output(1, "Made it after the reload.", timeout=60)
    nb.wait_output(1, DONE)
    assert (nb.lab.root / "after-reload").exists()
    shown = nb.output_text(1)
    assert "waiting for approval" not in shown.lower(), shown[-1500:]
    assert nb.button(1, "Allow").count() == 0
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4)
    cell = saved.cells[1]
    record = (cell.metadata.get("fuxi") or {}).get("record")
    assert record is not None and record["cell_id"] == cell.id, cell.metadata
    assert "Made it after the reload." in str(record["messages"])
    assert any(RECORD_MIME in o.get("data", {}) for o in cell.outputs)
    # the next cell of the reloaded tab is answered by its extension at once
    started = time.monotonic()
    nb.run_cell(2)
    nb.wait_output(2, "The next cell ran.", timeout=60)
    nb.wait_done(2)
    assert "did not answer" not in nb.output_text(2)
    assert time.monotonic() - started < 30
