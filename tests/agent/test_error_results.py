"""How an error result surfaces, as the comparable SDK's e2e test_error_results checks it:
a single-shot `query()` yields the error ResultMessage, then raises a `ResultError` (a
`ProcessError`) whose payload is that result's. Driven by the real `anthropic` client
against the fake Messages API, which refuses an unknown model with a 404 as the API does.

The one deliberate difference, pinned here: an API failure ends with the subtype
`error_during_execution` (the seed's table: "an error interrupted the loop, e.g. an API
failure"), its text in `errors`, where the comparable CLI reports `subtype="success"`,
`is_error=True` and the text in `result`."""

from __future__ import annotations

import pytest

from fuxi_notebook import FuxiAgentOptions, ProcessError, ResultError, ResultMessage, query
from fuxi_notebook._internal.models.names import DEFAULT_MODEL
from fuxi_notebook.testing import FakeMessagesServer, Turn, tool_use

BAD_MODEL = "claude-nonexistent-model-for-sdk-e2e"


@pytest.fixture
def refusing_api(monkeypatch):
    with FakeMessagesServer(reject_unknown_models=True) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield server


async def _run(options: FuxiAgentOptions) -> tuple[ResultMessage | None, BaseException]:
    result: ResultMessage | None = None
    with pytest.raises(ResultError) as raised:
        async for message in query(prompt="Reply with: pong", options=options):
            if isinstance(message, ResultMessage):
                result = message
    return result, raised.value


async def test_an_api_error_raises_a_result_error_carrying_the_results_payload(
        refusing_api, tmp_path):
    result, error = await _run(FuxiAgentOptions(model=BAD_MODEL, max_turns=1, cwd=tmp_path))
    assert result is not None and result.is_error
    assert isinstance(error, ResultError) and isinstance(error, ProcessError)
    assert error.exit_code is not None
    # the payload is the result that preceded it
    assert (error.subtype, error.session_id, error.terminal_reason, error.api_error_status) == (
        result.subtype, result.session_id, result.terminal_reason, result.api_error_status)
    assert error.data["uuid"] == result.uuid and error.errors == result.errors
    assert error.result_message is result
    # the API's status and words, never a bare subtype
    assert result.api_error_status == 404 and result.terminal_reason == "api_error"
    assert result.errors and BAD_MODEL in result.errors[0] and result.errors[0] in str(error)
    assert "error_during_execution" not in str(error)
    # the deliberate difference: the seed's subtype, and `result` only on success
    assert result.subtype == "error_during_execution" and result.result is None
    assert len(refusing_api.requests) == 1  # a 404 is not retried


async def test_a_limit_is_not_an_api_error(refusing_api, tmp_path):
    """Budget and turn limits raise the same way, with their own terminal reason and no
    HTTP status: `api_error_status` is only for a failed API call."""
    refusing_api.add(*[Turn([tool_use("Glob", {"pattern": "*"})]) for _ in range(2)])
    options = FuxiAgentOptions(model=DEFAULT_MODEL, max_turns=1, cwd=tmp_path,
                               allowed_tools=["Glob"])
    result, error = await _run(options)
    assert result is not None and result.subtype == "error_max_turns"
    assert isinstance(error, ResultError) and error.subtype == "error_max_turns"
    assert error.api_error_status is None and result.api_error_status is None
    assert error.terminal_reason == "max_turns" and str(error) == result.errors[0]
