"""`query()` on Amazon Bedrock, Google Vertex AI and Microsoft Foundry, chosen by nothing
but environment variables, through the `anthropic` package's own provider clients against
each provider's fake on 127.0.0.1 (`fuxi_notebook.testing.provider_fakes`): a run with a
tool call ends with the model's answer, every request went where the provider takes it,
signed as it wants it, and a refused credential is one line naming what to refresh.

The fakes refuse what the providers refuse (an unsigned or wrongly signed Bedrock
request, a `model` left in a Vertex body, a first-party model name on Bedrock), so a
wrong request fails here, not only in front of a real provider."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions, ResultError, ResultMessage, query
from fuxi_notebook.testing import (
    FakeBedrockServer,
    FakeFoundryServer,
    FakeMessagesServer,
    FakeVertexServer,
    Turn,
    text,
    tool_use,
)
from fuxi_notebook.testing.provider_fakes import TEST_AWS_CREDENTIALS, verify_sigv4

from .helpers import Agent, boundaries, collect

BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5-v1:0"
VERTEX_MODEL = "claude-sonnet-5-5"
FOUNDRY_MODEL = "claude-sonnet-5-5"
#: every variable any provider reads, cleared first: the test's own are the only ones
PROVIDER_VARIABLES = (
    "FUXI_USE_BEDROCK", "FUXI_USE_VERTEX", "FUXI_USE_FOUNDRY", "FUXI_SKIP_BEDROCK_AUTH",
    "FUXI_SKIP_VERTEX_AUTH", "FUXI_SKIP_FOUNDRY_AUTH", "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
    "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL",
    "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION", "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_FOUNDRY_BASE_URL", "ANTHROPIC_FOUNDRY_RESOURCE", "FUXI_MODEL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # no shared AWS config or credentials file of the machine's user may take part
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    return monkeypatch


def _use(env: pytest.MonkeyPatch, server_env: dict[str, str], **more: str) -> None:
    for name, value in {**server_env, **more}.items():
        env.setenv(name, value)


def _script() -> list[Turn]:
    return [Turn([text("Reading it."), tool_use("Read", {"file_path": "notes.txt"})]),
            Turn([text("The note says: ship on Friday.")])]


@pytest.fixture
def bedrock(clean_env: pytest.MonkeyPatch) -> Iterator[FakeBedrockServer]:
    with FakeBedrockServer(_script()) as server:
        _use(clean_env, server.client_env(), FUXI_USE_BEDROCK="1", FUXI_MODEL=BEDROCK_MODEL)
        yield server


@pytest.fixture
def vertex(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeVertexServer]:
    """Signed in as `gcloud auth application-default login` leaves a user: google-auth
    trades the credential's refresh token for an access token at the fake's `/token`."""
    with FakeVertexServer(_script()) as server:
        _use(clean_env, server.credentials_env(tmp_path), FUXI_USE_VERTEX="1",
             FUXI_MODEL=VERTEX_MODEL)
        yield server


@pytest.fixture
def foundry(clean_env: pytest.MonkeyPatch) -> Iterator[FakeFoundryServer]:
    with FakeFoundryServer(_script()) as server:
        _use(clean_env, server.client_env(), FUXI_USE_FOUNDRY="1", FUXI_MODEL=FOUNDRY_MODEL)
        yield server


async def _run(cwd: Path, **options: Any) -> list[Any]:
    (cwd / "notes.txt").write_text("ship on Friday\n")
    return [message async for message in query(
        prompt="What does notes.txt say?",
        options=FuxiAgentOptions(cwd=cwd, allowed_tools=["Read"], **options))]


def _result(messages: list[Any]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(results) == 1
    return results[0]


def _tool_result_sent(server: FakeMessagesServer) -> str:
    """The text of the tool result the second request carried back to the model."""
    last = server.requests[-1]
    raw = json.dumps(last)
    assert "tool_result" in raw
    return raw


async def test_a_run_with_a_tool_call_on_bedrock_signed_over_its_bytes(bedrock, tmp_path):
    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert result.result == "The note says: ship on Friday."
    assert "ship on Friday" in _tool_result_sent(bedrock)
    raw = bedrock.raw_requests
    assert [r.path for r in raw] == [
        f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"] * 2
    for request in raw:  # the fake verified them; verified again here, by hand
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential="
                                                           + TEST_AWS_CREDENTIALS.access_key)
        assert verify_sigv4("POST", request.path, request.headers, request.body,
                            credentials={TEST_AWS_CREDENTIALS.access_key: TEST_AWS_CREDENTIALS},
                            region=bedrock.region, service="bedrock") is None
        body = json.loads(request.body)
        assert "model" not in body and "stream" not in body
        assert body["anthropic_version"] and body["messages"]
    # priced through the Anthropic id the Bedrock id stands for
    assert result.usage and result.usage["output_tokens"] > 0
    # the prompt's cache_control reached Bedrock: the second request read the cache
    assert result.usage["cache_read_input_tokens"] > 0 and result.total_cost_usd


async def test_bedrock_unsigned_behind_a_gateway(bedrock, clean_env, tmp_path):
    bedrock.skip_auth = True
    clean_env.setenv("FUXI_SKIP_BEDROCK_AUTH", "1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        clean_env.delenv(name)
    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert all("authorization" not in r.headers for r in bedrock.raw_requests)


async def test_a_first_party_model_name_on_bedrock_is_one_line_before_any_request(
        bedrock, clean_env, tmp_path):
    clean_env.setenv("FUXI_MODEL", "claude-sonnet-5-5")
    with pytest.raises(Exception) as raised:
        await _run(tmp_path)
    message = str(raised.value)
    assert "\n" not in message and "Bedrock" in message and "FUXI_MODEL" in message
    assert bedrock.raw_requests == []


async def test_the_bedrock_fake_refuses_a_first_party_name_as_bedrock_does(bedrock):
    import anthropic

    async with anthropic.AsyncAnthropicBedrock(**bedrock.client_kwargs(),
                                              max_retries=0) as client:
        with pytest.raises(anthropic.BadRequestError, match="model identifier is invalid"):
            await client.messages.create(model="claude-sonnet-5-5", max_tokens=10,
                                         messages=[{"role": "user", "content": "hi"}])


async def test_an_expired_aws_session_is_one_line_naming_what_to_refresh(bedrock, tmp_path):
    bedrock.expired = True
    with pytest.raises(ResultError) as raised:
        await _run(tmp_path)
    line = str(raised.value)
    assert "\n" not in line
    assert "Amazon Bedrock refused the credentials (HTTP 403" in line
    assert "expired" in line and "aws sso login" in line
    assert len(bedrock.raw_requests) == 1  # a refused credential is not retried


async def test_a_run_with_a_tool_call_on_vertex_signed_in_with_google_auth(vertex,
                                                                          tmp_path):
    from fuxi_notebook.testing.provider_fakes import TEST_VERTEX_TOKEN

    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert "ship on Friday" in _tool_result_sent(vertex)
    path = (f"/v1/projects/{vertex.project}/locations/{vertex.region}/publishers/anthropic/"
            f"models/{VERTEX_MODEL}:streamRawPredict")
    requests = [r for r in vertex.raw_requests if r.path != "/token"]
    assert [r.path for r in requests] == [path] * 2
    assert vertex.token_requests == 1  # signed in once, the token kept while it is valid
    for request in requests:
        body = json.loads(request.body)
        assert "model" not in body and body["anthropic_version"]
        assert request.headers["authorization"] == f"Bearer {TEST_VERTEX_TOKEN}"


async def test_vertex_unsigned_behind_a_gateway(vertex, clean_env, tmp_path):
    vertex.skip_auth = True
    clean_env.setenv("FUXI_SKIP_VERTEX_AUTH", "1")
    clean_env.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert vertex.token_requests == 0
    assert all("authorization" not in r.headers for r in vertex.raw_requests)


async def test_an_expired_google_sign_in_is_one_line_naming_what_to_refresh(vertex, tmp_path):
    vertex.expired = True  # the refresh token was revoked or ran out
    with pytest.raises(ResultError) as raised:
        await _run(tmp_path)
    line = str(raised.value)
    assert "\n" not in line and line.count("Google Vertex AI") == 1
    assert "invalid_grant" in line and "gcloud auth application-default login" in line
    assert vertex.requests == []  # nothing reached the model


async def test_an_access_token_vertex_refuses_is_one_line(vertex, tmp_path):
    vertex.issued_token = "ya29.a-token-of-another-project"  # signed in, then refused
    with pytest.raises(ResultError) as raised:
        await _run(tmp_path)
    line = str(raised.value)
    assert "\n" not in line
    assert "Google Vertex AI refused the credentials (HTTP 401" in line
    assert "gcloud auth application-default login" in line
    assert len(vertex.requests) == 0 and len(vertex.raw_requests) == 2  # /token, one call


async def test_a_run_with_a_tool_call_on_foundry(foundry, tmp_path):
    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert "ship on Friday" in _tool_result_sent(foundry)
    assert [r.path for r in foundry.raw_requests] == ["/anthropic/v1/messages"] * 2
    assert all(r.headers.get("api-key") == foundry.api_key or
               r.headers.get("x-api-key") == foundry.api_key for r in foundry.raw_requests)


async def test_a_refused_foundry_key_is_one_line(foundry, tmp_path):
    foundry.expired = True
    with pytest.raises(ResultError) as raised:
        await _run(tmp_path)
    line = str(raised.value)
    assert "\n" not in line
    assert "Microsoft Foundry refused the credentials (HTTP 401" in line
    assert "ANTHROPIC_FOUNDRY_API_KEY" in line


async def test_the_provider_in_options_env_chooses_it_over_the_process(bedrock, clean_env,
                                                                      tmp_path):
    """`options.env` is where the comparable SDK's callers put the CLI's variables."""
    clean_env.delenv("FUXI_USE_BEDROCK")
    result = _result(await _run(tmp_path, env={"FUXI_USE_BEDROCK": "1"}))
    assert result.subtype == "success", result.errors
    assert len(bedrock.raw_requests) == 2


def _counting_helper(folder: Path) -> str:
    """A helper command that prints `gw-key-<n>-…`, n counting its runs."""
    runs = folder / "helper-runs"
    return (f"echo run >> '{runs}'; printf 'gw-key-%s-Zq7Zq7Zq7\\n' "
            f"\"$(wc -l < '{runs}' | tr -d ' ')\"")


def _user_settings(data: dict[str, Any]) -> None:
    import os

    path = Path(os.environ["FUXI_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def gateway(clean_env: pytest.MonkeyPatch) -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as server:
        clean_env.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


async def test_the_api_key_helpers_key_is_sent_and_run_again_after_a_401(gateway, tmp_path):
    from fuxi_notebook.testing import Fault

    _user_settings({"apiKeyHelper": _counting_helper(tmp_path)})
    gateway.add(Fault(status=401, error_type="authentication_error",
                      message="invalid x-api-key"), *_script())
    messages = await _run(tmp_path, setting_sources=["user"])
    result = _result(messages)
    assert result.subtype == "success", result.errors
    keys = [h.get("x-api-key") for h in gateway.request_headers]
    bearers = [h.get("authorization") for h in gateway.request_headers]
    # refused, run again at once, then the new key for the rest (within its TTL)
    assert keys == ["gw-key-1-Zq7Zq7Zq7", "gw-key-2-Zq7Zq7Zq7", "gw-key-2-Zq7Zq7Zq7"]
    assert bearers == [f"Bearer {key}" for key in keys]
    assert (tmp_path / "helper-runs").read_text().count("run") == 2
    init = next(m for m in messages if getattr(m, "subtype", None) == "init")
    assert init.data["apiKeySource"] == "apiKeyHelper"
    # the key is a secret: nothing the run kept or showed holds it
    stored = json.dumps([getattr(m, "data", None) or repr(m) for m in messages])
    assert "gw-key-" not in stored


async def test_a_key_the_api_refuses_again_after_the_rerun_is_one_line(gateway, tmp_path):
    from fuxi_notebook.testing import Fault

    _user_settings({"apiKeyHelper": _counting_helper(tmp_path)})
    refused = Fault(status=401, error_type="authentication_error", message="invalid x-api-key")
    gateway.add(refused, refused)
    with pytest.raises(ResultError) as raised:
        await _run(tmp_path, setting_sources=["user"])
    line = str(raised.value)
    assert "\n" not in line and "apiKeyHelper of user settings" in line
    assert "gw-key-" not in line
    assert len(gateway.requests) == 2  # not retried beyond the one re-run


async def test_a_key_in_the_environment_wins_over_the_helper(gateway, clean_env, tmp_path):
    clean_env.setenv("ANTHROPIC_API_KEY", "env-key-0123456789")
    _user_settings({"apiKeyHelper": _counting_helper(tmp_path)})
    gateway.add(*_script())
    result = _result(await _run(tmp_path, setting_sources=["user"]))
    assert result.subtype == "success", result.errors
    assert not (tmp_path / "helper-runs").exists()


async def test_a_regional_bedrock_run_costs_the_regional_price(bedrock, tmp_path):
    from fuxi_notebook._internal.models.pricing import FIRST_PARTY, cost_usd

    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    (answered, usage), = result.model_usage.items()  # the id the responses named
    tokens = {"input_tokens": usage["inputTokens"], "output_tokens": usage["outputTokens"],
              "cache_creation_input_tokens": usage["cacheCreationInputTokens"],
              "cache_read_input_tokens": usage["cacheReadInputTokens"]}
    global_cost = cost_usd(answered, tokens, FIRST_PARTY)
    assert global_cost and result.total_cost_usd == pytest.approx(global_cost * 1.1)


async def test_a_foundry_run_has_no_made_up_cost(foundry, tmp_path):
    result = _result(await _run(tmp_path))
    assert result.subtype == "success", result.errors
    assert result.total_cost_usd is None
    assert all(entry["costUSD"] is None for entry in result.model_usage.values())


def test_a_helper_in_the_users_settings_counts_as_a_credential(clean_env, tmp_path):
    """The notebook's replay default and the chat's sign-in ask the same question."""
    from fuxi_notebook._internal.settings.key_helper_setting import can_run_live

    assert not can_run_live()
    _user_settings({"apiKeyHelper": "echo gw-key"})
    assert can_run_live()
    clean_env.chdir(tmp_path)  # a project's helper is code: it does not count untrusted
    _user_settings({})
    (tmp_path / ".fuxi").mkdir()
    (tmp_path / ".fuxi" / "settings.json").write_text('{"apiKeyHelper": "echo k"}')
    assert not can_run_live()
    clean_env.setenv("FUXI_USE_VERTEX", "1")
    assert can_run_live()


@pytest.mark.parametrize("provider", ["bedrock", "vertex", "foundry"])
async def test_a_prompt_the_provider_calls_too_long_is_compacted_and_sent_again(
        provider, request, tmp_path):
    """Each provider says "too long" its own way (Bedrock: "Input is too long for requested
    model."); the run compacts and goes on, as on the first-party API."""
    server = request.getfixturevalue(provider)
    agent = Agent(40)
    server.reset(agent.steps())
    server.context_window = 6_000  # smaller than the window the session believes in
    messages, error = await collect("count", FuxiAgentOptions(
        cwd=tmp_path, allowed_tools=["Bash"], context_window=60_000, persist_session=False))
    assert error is None, error
    assert messages[-1].result == "done after 40 calls"
    assert boundaries(messages) and agent.summaries
    assert any("too long" in e for e in server.errors)  # the provider did refuse one


@pytest.mark.parametrize("provider", ["bedrock", "vertex", "foundry"])
async def test_thinking_reaches_the_provider_and_its_blocks_come_back(provider, request,
                                                                      tmp_path):
    from fuxi_notebook.testing import thinking
    from fuxi_notebook.types import AssistantMessage, ThinkingBlock

    server = request.getfixturevalue(provider)
    server.reset([Turn([thinking("The note is short."), text("It says ship on Friday.")])])
    messages, error = await collect("What does it say?", FuxiAgentOptions(
        cwd=tmp_path, max_thinking_tokens=4000, persist_session=False))
    assert error is None, error
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    shown = [block for m in messages if isinstance(m, AssistantMessage) for block in m.content
             if isinstance(block, ThinkingBlock)]
    assert [block.thinking for block in shown] == ["The note is short."]
