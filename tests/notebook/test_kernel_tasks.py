"""The agent's task list in a real kernel: one checklist in the saved transcript, and a
replay that rebuilds the same list."""

from __future__ import annotations

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook as _notebook
from .test_kernel_sessions import _env, _errors, _headless, _record


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _markdown(cell) -> str:
    return "".join(str(o.get("data", {}).get("text/markdown", "")) for o in cell.outputs)


def test_the_checklist_is_saved_as_a_task_list_and_replays(tmp_path, api):
    api.add(Turn([tool_use("TaskCreate", {"subject": "Load the data"}),
                  tool_use("TaskCreate", {"subject": "Plot the totals"})]),
            Turn([tool_use("TaskUpdate", {"taskId": "1", "status": "completed"}),
                  tool_use("TaskUpdate", {"taskId": "2", "status": "in_progress"})]),
            Turn([text("Loaded; plotting next.")]))
    path, nb = _notebook(tmp_path, "%%fuxi --new\nplan it")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        statuses = [frontend.execute(cell) for cell in nb.cells]
    assert statuses == ["ok", "ok"], [_errors(c) for c in nb.cells]
    saved = _markdown(nb.cells[1])
    assert "- [x] 1\\. Load the data" in saved and "Plot the totals" in saved
    assert "in progress" in saved and saved.count("Load the data") <= 3
    nbformat.write(nb, path)
    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict")
    assert statuses == ["ok", "ok"], [_errors(c) for c in replayed.cells]
    assert _record(replayed.cells[1]) == _record(nb.cells[1])
    assert _markdown(replayed.cells[1]) == saved
