"""A model this version does not know: one warning line before the run, and the API's
refusal of it (404 `not_found_error`, "model: <id>") one line too, with the real
`anthropic` client against the fake Messages API refusing models as the real one does."""

from __future__ import annotations

import anthropic
import pytest

from fuxi_notebook import FuxiAgentOptions, ResultMessage
from fuxi_notebook._internal.models.anthropic import AnthropicModel, model_refusal
from fuxi_notebook._internal.models.base import ModelRequest
from fuxi_notebook._internal.models.known import known_models, unknown_model_warning
from fuxi_notebook._internal.models.names import DEFAULT_MODEL
from fuxi_notebook._internal.models.pricing import PRICES
from fuxi_notebook._internal.models.retry import RetryPolicy
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook.errors import ModelError
from fuxi_notebook.testing import FakeMessagesServer, Turn, text

from .agent.helpers import collect

UNKNOWN = "claude-unknown-9"
REFUSAL = ("API error 404: the API has no model claude-unknown-9 "
           "(not_found_error: model: claude-unknown-9)")
RETRY = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.01, stall_timeout=5)


@pytest.fixture
def refusing_api():
    """The fake Messages API, refusing the models this version does not know."""
    with FakeMessagesServer(reject_unknown_models=True) as server:
        yield server


def _model(api: FakeMessagesServer, name: str = UNKNOWN) -> AnthropicModel:
    return AnthropicModel(name, api_key="test-key", base_url=api.url, retry=RETRY)


async def _stream(model: AnthropicModel) -> list:
    request = ModelRequest(model=model.name, max_tokens=64,
                           messages=[{"role": "user", "content": "hello"}])
    return [item async for item in model.stream(request)]


# ----------------------------------------------------------------- the warning


def test_an_unknown_model_is_one_warning_line_naming_the_known_ones():
    warning = unknown_model_warning(UNKNOWN)
    assert warning == (f"fuxi: {UNKNOWN} is not a model this version knows (known: "
                       f"{', '.join(PRICES)}); its cost is not estimated")
    assert "\n" not in warning and "claude-sonnet-5-5" in warning


@pytest.mark.parametrize("spec", [*PRICES, "claude-haiku-4-5-20251001", "claude-opus-4-1@20250805",
                                  "haiku", "sonnet", "opus", None])
def test_a_known_model_an_alias_or_the_default_gives_no_warning(spec, monkeypatch):
    monkeypatch.delenv("FUXI_MODEL", raising=False)
    assert unknown_model_warning(spec) is None
    assert DEFAULT_MODEL in known_models()


def test_an_unknown_default_from_fuxi_model_is_warned_about(monkeypatch):
    monkeypatch.setenv("FUXI_MODEL", UNKNOWN)
    assert unknown_model_warning(None).startswith(f"fuxi: {UNKNOWN} is not a model")


def test_a_near_miss_is_told_the_id_it_probably_meant():
    warning = unknown_model_warning("claude-sonet-5-5")
    assert warning.startswith("fuxi: claude-sonet-5-5 is not a model this version knows "
                              "(did you mean claude-sonnet-5-5? known: ")


def test_model_objects_are_checked_only_when_the_api_serves_them():
    assert unknown_model_warning(ScriptedModel([], name="gpt-4o")) is None
    client = object()  # never used: the warning does not call the API
    warning = unknown_model_warning(AnthropicModel(UNKNOWN, client=client))
    assert warning is not None and warning.startswith(f"fuxi: {UNKNOWN} ")


def test_a_name_with_control_characters_stays_on_one_line():
    warning = unknown_model_warning("claude-x\n\x1b[31mred")
    assert warning is not None and "\n" not in warning and "\x1b" not in warning


# ----------------------------------------------------------------- the fake server


async def test_the_fake_server_refuses_an_unknown_model_as_the_api_does(refusing_api):
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=refusing_api.url,
                                      max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as raised:
        await client.messages.create(model=UNKNOWN, max_tokens=64,
                                     messages=[{"role": "user", "content": "hello"}])
    body = raised.value.body
    assert body == {"type": "error", "error": {"type": "not_found_error",
                                               "message": f"model: {UNKNOWN}"},
                    "request_id": raised.value.request_id}
    assert body["request_id"].startswith("req_")
    assert refusing_api.remaining == 0 and refusing_api.errors == [
        f"rejected request: model: {UNKNOWN}"]


async def test_the_fake_server_refuses_an_unknown_model_when_counting_tokens(refusing_api):
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=refusing_api.url,
                                      max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.count_tokens(model=UNKNOWN,
                                           messages=[{"role": "user", "content": "hello"}])
    counted = await client.messages.count_tokens(
        model="claude-haiku-4-5-20251001", messages=[{"role": "user", "content": "hello"}])
    assert counted.input_tokens > 0


async def test_the_fake_server_still_serves_known_models_and_by_default_any(refusing_api):
    refusing_api.add(Turn([text("hi")]))
    items = await _stream(_model(refusing_api, "claude-haiku-4-5-20251001"))
    assert items[-1].content == [{"type": "text", "text": "hi"}]
    with FakeMessagesServer([Turn([text("anything goes")])]) as lenient:
        items = await _stream(_model(lenient))
    assert items[-1].content == [{"type": "text", "text": "anything goes"}]


# ----------------------------------------------------------------- the refusal


async def test_the_refusal_is_one_line_and_not_retried(refusing_api):
    with pytest.raises(ModelError) as raised:
        await _stream(_model(refusing_api))
    error = raised.value
    assert str(error) == REFUSAL
    assert error.status == 404 and not error.retryable
    assert len(refusing_api.requests) == 1  # asked once: a missing model stays missing


async def test_a_run_on_a_refused_model_ends_with_the_one_line(refusing_api, tmp_path):
    options = FuxiAgentOptions(model=_model(refusing_api), cwd=tmp_path)
    messages, error = await collect("hello", options)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.errors == [REFUSAL]
    assert error is not None and "Traceback" not in str(error)


def test_other_errors_are_not_taken_for_a_refused_model():
    assert model_refusal(404, "not_found_error", f"model: {UNKNOWN}") == REFUSAL
    assert model_refusal(404, "not_found_error", "file: abc") is None
    assert model_refusal(404, "not_found_error", "model:") is None
    assert model_refusal(400, "invalid_request_error", f"model: {UNKNOWN}") is None
    assert model_refusal(404, None, None) is None
