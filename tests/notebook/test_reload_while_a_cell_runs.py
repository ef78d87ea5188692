"""Issue 35, finding 5, in a real kernel: the page reloaded while a `%%fuxi` cell's card
waits is a new frontend (a new connection that routes no output of a request it did not
send, whose extension attaches to the kernel's comm and says hello again). The running
cell finishes into it: its outputs, the record among them, are handed to the new page
at its end, which keeps the record in the cell's metadata; later cells are answered by
the new page at once."""

from __future__ import annotations

import time

import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import Card, NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def test_a_cell_whose_card_waited_through_a_reload_finishes_into_the_new_page(tmp_path, api):
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nmake the file", "%%fuxi\nand then?")
    api.add(Turn([text("I will."), tool_use("Bash", {"command": "touch made"})]),
            Turn([text("Made it after the reload.")]), Turn([text("The next cell ran.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"

        def reload_then_allow(card: Card) -> tuple[str, None] | None:
            if "Allow" not in card.buttons:
                return None
            frontend.reload()  # F5: the card is drawn again from the kernel's widgets
            return "Allow", None

        assert frontend.execute(nb.cells[1], decide=reload_then_allow) == "reloaded"
        assert (tmp_path / "made").exists()
        cell = nb.cells[1]
        shown = str(cell.outputs)
        assert "Made it after the reload." in shown and RECORD_MIME in shown, shown
        assert "waiting for approval" not in shown
        record = cell.metadata["fuxi"]["record"]
        assert record["cell_id"] == cell.id and "Made it after" in str(record["messages"])
        started = time.monotonic()
        assert frontend.execute(nb.cells[2]) == "ok", _errors(nb.cells[2])
        assert "did not answer" not in _errors(nb.cells[2])
        assert "The next cell ran." in str(nb.cells[2].outputs)
    assert time.monotonic() - started < 30
    assert api.requests[-1]["messages"][0]["content"][-1]["text"] == "make the file" or \
        "make the file" in str(api.requests[-1]["messages"])  # it went on from the record


def test_without_a_reload_the_cell_is_not_handed_over(tmp_path, api):
    """The page that ran the cell shows its outputs itself: nothing is handed to it."""
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nsay hello")
    api.add(Turn([text("Hello.")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        requests: list[str] = []
        original = frontend._fuxi_request

        def noted(body: dict) -> None:
            requests.append(str((body.get("data") or {}).get("request")))
            original(body)

        frontend._fuxi_request = noted  # type: ignore[method-assign]
        assert [frontend.execute(c) for c in nb.cells] == ["ok", "ok"]
    assert "set_outputs" not in requests and "Hello." in str(nb.cells[1].outputs)
