"""Issue 35, finding 6, as it was seen in a real kernel: a cell whose request fails (401,
529) shows one clear line, and the next cell's request must not carry the failed prompt
(nor its note about the kernel's variables), before or after a kernel restart. What the
model is sent is what the user saw: a prompt the model never answered is left out."""

from __future__ import annotations

import pytest

from fuxi_notebook.testing import FakeMessagesServer, Fault, Turn, text
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _sent(request: dict) -> str:
    return str(request["messages"])


@pytest.mark.parametrize("status", [401, 529])
def test_a_failed_prompt_is_not_sent_again(tmp_path, api, status):
    path, nb = loaded_notebook(tmp_path, "df_before_failure = 1",
                               "%%fuxi\nFAILED PROMPT about df_before_failure",
                               "%%fuxi\nsecond prompt", "%%fuxi\nthird prompt")
    # an overloaded API the client gives up on (x-should-retry: false), as after retries
    api.add(Fault(status=status, headers={"x-should-retry": "false"}), Turn([text("two")]),
            Turn([text("three")]))
    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert [frontend.execute(c) for c in nb.cells[:2]] == ["ok", "ok"]
        assert frontend.execute(nb.cells[2]) == "ok"  # the cell shows what happened
        shown = str(nb.cells[2].outputs)
        assert f"API error {status}" in shown and "Traceback" not in shown, shown
        failed = len(api.requests)
        assert frontend.execute(nb.cells[3]) == "ok", _errors(nb.cells[3])
        assert len(api.requests) == failed + 1 and "two" in str(nb.cells[3].outputs)
        second = api.requests[failed]
        assert "second prompt" in _sent(second) and "FAILED PROMPT" not in _sent(second)
        frontend.restart()  # the conversation now comes from the notebook's records
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[4]) == "ok", _errors(nb.cells[4])
    third = api.requests[-1]
    assert "second prompt" in _sent(third) and "third prompt" in _sent(third)
    assert "FAILED PROMPT" not in _sent(third)
