"""The fake Messages API server, exercised through the real `anthropic` 2.x client."""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from fuxi_notebook._internal.models.script import Fault, Turn, load_script, text, thinking, tool_use
from fuxi_notebook.testing.cache import LOOKBACK, PromptCache, count_tokens
from fuxi_notebook.testing.fake_server import FakeMessagesServer

MODEL = "claude-sonnet-5-5"
HELLO = [{"role": "user", "content": "hello"}]
EPHEMERAL = {"type": "ephemeral"}


def _create(client: anthropic.AsyncAnthropic, **kwargs: Any) -> Any:
    params: dict[str, Any] = {"model": MODEL, "max_tokens": 100, "messages": HELLO}
    return client.messages.create(**{**params, **kwargs})


async def _collect(client: anthropic.AsyncAnthropic, into: list[Any], **kwargs: Any) -> None:
    """Stream raw events into `into` (so a test sees them even when the stream raises)."""
    stream = await _create(client, stream=True, **kwargs)
    async for event in stream:
        into.append(event)


# ------------------------------------------------------------------ streaming


async def test_raw_stream_events_carry_text_and_tool_input(server, client):
    server.add(Turn([text("Let me look at the file for you."),
                     tool_use("Read", {"file_path": "a.py", "limit": 10})]))
    events: list[Any] = []
    await _collect(client, events)
    types = [event.type for event in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    usage = events[0].message.usage
    assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens == 0
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert "".join(d.text for d in deltas if d.type == "text_delta") == (
        "Let me look at the file for you.")
    raw_json = "".join(d.partial_json for d in deltas if d.type == "input_json_delta")
    assert json.loads(raw_json) == {"file_path": "a.py", "limit": 10}
    assert events[-2].delta.stop_reason == "tool_use"


async def test_stream_helper_accumulates_thinking_text_and_tool_use(server, client):
    server.add(Turn([thinking("First I should read it.", signature="sig-123"),
                     text("Reading."), tool_use("Read", {"file_path": "b.py"}, id="toolu_X")]))
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = await stream.get_final_message()
    kinds = [block.type for block in message.content]
    assert kinds == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == "First I should read it."
    assert message.content[0].signature == "sig-123"
    assert message.content[2].input == {"file_path": "b.py"}
    assert message.content[2].id == "toolu_X"
    assert message.stop_reason == "tool_use" and message.model == MODEL
    assert message.id.startswith("msg_")


async def test_tool_ids_are_filled_in_and_unique(server, client):
    server.add(Turn([tool_use("A", {}), tool_use("B", {"x": [1, 2]})]))
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = await stream.get_final_message()
    ids = [block.id for block in message.content]
    assert all(i.startswith("toolu_") for i in ids) and len(set(ids)) == 2
    assert message.content[1].input == {"x": [1, 2]}


async def test_records_request_bodies_and_headers(server, client):
    server.add(Turn([text("one")]), Turn([text("two")]))
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    await _collect(client, [], tools=tools, system="Be brief.")
    async with client.messages.stream(model=MODEL, max_tokens=7, messages=HELLO) as stream:
        await stream.get_final_message()
    first, second = server.requests
    assert first["stream"] is True and first["tools"] == tools
    assert first["system"] == "Be brief." and first["messages"] == HELLO
    assert second["max_tokens"] == 7
    headers = server.request_headers
    assert headers[0]["authorization"] == "Bearer test-key"
    assert headers[1]["x-stainless-helper-method"] == "stream"


async def test_non_stream_request_gets_a_json_message(server, client):
    server.add(Turn([text("Plain answer."), tool_use("Grep", {"pattern": "x"})],
                    usage={"output_tokens": 77}))
    message = await _create(client)
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "Plain answer."
    assert message.content[1].input == {"pattern": "x"}
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens == 77
    assert "stream" not in server.requests[0]


async def test_turn_usage_and_stop_reason_overrides(server, client):
    server.add(Turn([text("cut short")], stop_reason="max_tokens",
                    usage={"input_tokens": 5000, "output_tokens": 9}))
    async with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = await stream.get_final_message()
    assert message.stop_reason == "max_tokens"
    assert message.usage.input_tokens == 5000 and message.usage.output_tokens == 9
    assert server.usage_log[0]["input_tokens"] == 5000


async def test_callable_step_sees_the_request(server, client):
    def echo(body: dict[str, Any]) -> Turn:
        return Turn([text(f"you said {body['messages'][-1]['content']}")])

    server.add(echo)
    message = await _create(client)
    assert message.content[0].text == "you said hello"


async def test_callable_step_that_raises_becomes_a_clear_500(server, client):
    def broken(body: dict[str, Any]) -> Turn:
        raise KeyError("missing")

    server.add(broken)
    with pytest.raises(anthropic.InternalServerError, match="script step raised"):
        await _create(client)
    assert "KeyError" in server.errors[0]


# ------------------------------------------------------------------ HTTP faults


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.InternalServerError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
async def test_status_fault_raises_the_matching_error(server, client, status, error_class,
                                                      error_type):
    server.add(Fault(status=status))
    with pytest.raises(error_class) as caught:
        await _collect(client, [])
    assert caught.value.status_code == status
    assert caught.value.type == error_type
    assert caught.value.request_id.startswith("req_")


async def test_fault_overrides_type_message_and_headers(server, client):
    server.add(Fault(status=429, retry_after=0.01, error_type="custom_error",
                     message="slow down", headers={"x-extra": "1"}))
    with pytest.raises(anthropic.RateLimitError) as caught:
        await _create(client)
    error = caught.value
    assert error.type == "custom_error" and error.api_message == "slow down"
    assert error.response.headers["retry-after"] == "0.01"
    assert error.response.headers["x-extra"] == "1"


async def test_client_retries_after_429_and_succeeds(server):
    server.add(Fault(status=429, retry_after=0.01), Turn([text("finally")]))
    async with anthropic.AsyncAnthropic(api_key="test-key", base_url=server.url,
                                        max_retries=1) as retrying:
        message = await retrying.messages.create(model=MODEL, max_tokens=5, messages=HELLO)
    assert message.content[0].text == "finally"
    assert len(server.requests) == 2
    assert [h["x-stainless-retry-count"] for h in server.request_headers] == ["0", "1"]


async def test_exhausted_script_is_a_clear_unretried_500(server):
    async with anthropic.AsyncAnthropic(api_key="test-key", base_url=server.url) as default:
        with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
            await default.messages.create(model=MODEL, max_tokens=5, messages=HELLO)
    assert len(server.requests) == 1  # x-should-retry: false beats the default retries
    assert server.errors == ["script exhausted at request 1"]


# ------------------------------------------------------------------ stream faults


async def test_cut_mid_block_raises_after_partial_events(server, client):
    server.add(Fault(cut_after_events=3))
    events: list[Any] = []
    with pytest.raises((httpx2.TransportError, anthropic.APIError)):
        await _collect(client, events)
    types = [event.type for event in events]
    assert types == ["message_start", "content_block_start", "content_block_delta"]


async def test_cut_in_non_stream_mode_is_a_connection_error(server, client):
    server.add(Fault(cut_after_events=2))
    with pytest.raises(anthropic.APIConnectionError):
        await _create(client)


async def test_stall_times_out_the_reader(server, client):
    server.add(Fault(stall_seconds=30, cut_after_events=1))
    events: list[Any] = []
    with pytest.raises((httpx2.TimeoutException, anthropic.APITimeoutError)):
        await _collect(client.with_options(timeout=0.3), events)
    assert [event.type for event in events] == ["message_start"]


async def test_error_event_raises_and_keeps_the_connection(server, client):
    server.add(Fault(error_event=True, cut_after_events=2), Turn([text("after")]))
    events: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        await _collect(client, events)
    assert caught.value.status_code == 200
    assert caught.value.type == "overloaded_error"
    assert len(events) == 2
    message = await _create(client)
    assert message.content[0].text == "after"


async def test_error_event_in_non_stream_mode_is_an_http_error(server, client):
    server.add(Fault(error_event=True))
    with pytest.raises(anthropic.OverloadedError):
        await _create(client)


async def test_json_script_with_a_fault_turn(server, client):
    server.reset(load_script(json.dumps({"steps": [
        {"fault": {"cut_after_events": 2, "turn": {"content": [{"type": "text", "text": "a"}]}}},
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]},
    ]})))
    events: list[Any] = []
    with pytest.raises((httpx2.TransportError, anthropic.APIError)):
        await _collect(client, events)
    assert events[1].content_block.text == ""
    message = await _create(client)
    assert message.content[0].input == {"command": "ls"}


def test_port_in_use_is_reported_by_start(server):
    with pytest.raises(OSError):
        FakeMessagesServer(port=server.port).start()


# ------------------------------------------------------------------ HTTP behaviour


async def test_keep_alive_reuses_one_connection(server, client):
    server.add(*(Turn([text(str(n))]) for n in range(3)))
    for _ in range(3):
        await _collect(client, [])
    assert server.connection_count == 1


async def test_concurrent_requests(server, client):
    server.add(*(Turn([text("x" * 200)]) for _ in range(12)))
    messages = await asyncio.gather(*(_create(client) for _ in range(12)))
    assert all(m.content[0].text == "x" * 200 for m in messages)
    assert len(server.requests) == 12


async def test_count_tokens_uses_the_same_estimate(server, client):
    tools = [{"name": "Read", "input_schema": {"type": "object"}}]
    result = await client.messages.count_tokens(model=MODEL, messages=HELLO, tools=tools)
    body = server.count_token_requests[0]
    assert result.input_tokens == count_tokens(body) > 1
    assert server.requests == []


def _raw_request(server: FakeMessagesServer, path: str, headers: dict[str, str]) -> tuple[
        int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        connection.request("POST", path, body=b"{}", headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_missing_credentials_and_unknown_paths_are_rejected(server):
    status, body = _raw_request(server, "/v1/messages", {})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    status, body = _raw_request(server, "/v1/other", {"x-api-key": "k"})
    assert status == 404 and body["type"] == "error"
    assert server.requests == []


async def test_reset_clears_script_records_and_cache(server, client):
    server.add(Turn([text("a")]), Turn([text("b")]))
    await _create(client)
    server.reset([Turn([text("fresh")])])
    assert server.requests == [] and server.usage_log == [] and server.remaining == 1
    assert (await _create(client)).content[0].text == "fresh"


def test_lifecycle():
    server = FakeMessagesServer()
    with pytest.raises(RuntimeError):
        _ = server.url
    server.start()
    assert server.url.startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError):
        server.start()
    server.stop()
    server.stop()
    with server:  # restartable, on a fresh port
        assert server.url.startswith("http://127.0.0.1:")
    assert not [t for t in threading.enumerate() if t.name == "fake-messages-api"]


# ------------------------------------------------------------------ prompt cache


def _tools(mark_last: bool) -> list[dict[str, Any]]:
    tools = [{"name": name, "description": f"The {name} tool.",
              "input_schema": {"type": "object"}} for name in ("Read", "Write", "Grep")]
    if mark_last:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    return tools


def _marked(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `blocks` with a breakpoint on the last one."""
    return [*blocks[:-1], {**blocks[-1], "cache_control": EPHEMERAL}]


def _usage(message: Any) -> tuple[int, int, int]:
    usage = message.usage
    return (usage.input_tokens, usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens)


async def test_second_request_reads_the_first_requests_prefix(server, client):
    server.add(Turn([text("Reading.")]), Turn([text("Done.")]))
    question = [text("Please read the file a.py and summarise it for me.")]
    first = [{"role": "user", "content": _marked(question)}]
    reply = [text("Reading."), tool_use("Read", {"file_path": "a.py"}, id="toolu_1")]
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"}]
    second = [{"role": "user", "content": question},
              {"role": "assistant", "content": reply},
              {"role": "user", "content": _marked(result)}]
    uncached1, created1, read1 = _usage(await _create(client, messages=first,
                                                      tools=_tools(True)))
    uncached2, created2, read2 = _usage(await _create(client, messages=second,
                                                      tools=_tools(True)))
    assert read1 == 0 and created1 == count_tokens(server.requests[0]) and uncached1 == 0
    assert read2 == created1 > 0
    assert created2 == count_tokens(server.requests[1]) - read2 > 0 and uncached2 == 0
    assert [u["cache_read_input_tokens"] for u in server.usage_log] == [0, read2]


async def test_no_breakpoints_means_no_cache_counts(server, client):
    server.add(Turn([text("a")]), Turn([text("b")]))
    for _ in range(2):
        message = await _create(client, tools=_tools(False), system="You are helpful.")
        assert _usage(message) == (count_tokens(server.requests[-1]), 0, 0)


def _blocks(count: int) -> list[dict[str, Any]]:
    return [text(f"block number {n} of the conversation") for n in range(count)]


@pytest.mark.parametrize(("gap", "hit"), [(LOOKBACK, True), (LOOKBACK + 1, False)])
def test_lookback_limits_how_far_back_a_hit_is_found(gap, hit):
    cache = PromptCache()
    blocks = _blocks(gap + 1)
    first = {"model": MODEL, "messages": [{"role": "user", "content": _marked(blocks[:1])}]}
    second = {"model": MODEL, "messages": [{"role": "user", "content": _marked(blocks)}]}
    created = cache.account(first)["cache_creation_input_tokens"]
    usage = cache.account(second)
    assert usage["cache_read_input_tokens"] == (created if hit else 0)
    assert sum(usage.values()) == count_tokens(second)


def test_system_string_blocks_and_model_change():
    cache = PromptCache()
    body = {"model": MODEL, "system": [{"type": "text", "text": "rules", "cache_control":
                                        EPHEMERAL}], "messages": HELLO}
    assert cache.account(body)["cache_creation_input_tokens"] > 0
    assert cache.account(body)["cache_read_input_tokens"] > 0
    assert cache.account({**body, "model": "other"})["cache_read_input_tokens"] == 0


def test_prefixes_below_the_minimum_are_not_cached():
    cache = PromptCache(min_tokens=10_000)
    body = {"model": MODEL, "messages": [{"role": "user", "content": _marked(_blocks(3))}]}
    for _ in range(2):
        assert cache.account(body) == {"input_tokens": count_tokens(body),
                                       "cache_creation_input_tokens": 0,
                                       "cache_read_input_tokens": 0}


def test_role_is_part_of_the_prefix():
    cache = PromptCache()
    block = _marked([text("same words")])
    cache.account({"model": MODEL, "messages": [{"role": "user", "content": block}]})
    other = cache.account({"model": MODEL, "messages": [
        {"role": "user", "content": [text("x")]}, {"role": "assistant", "content": block}]})
    assert other["cache_read_input_tokens"] == 0


# ------------------------------------------------------------------ command line


async def test_cli_serves_a_script_until_terminated(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"content": [{"type": "text", "text": "hi"}]}]}))
    assert isinstance(load_script(script)[0], Turn)
    process = subprocess.Popen(
        [sys.executable, "-m", "fuxi_notebook.testing", "serve", "--script", str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        line = await asyncio.to_thread(process.stdout.readline)
        if not line:
            pytest.fail(f"no URL line; stderr: {process.communicate(timeout=10)[1]}")
        assert line.startswith("FAKE_API_URL=http://127.0.0.1:")
        url = line.strip().split("=", 1)[1]
        async with anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0) as sdk:
            message = await sdk.messages.create(model=MODEL, max_tokens=5, messages=HELLO)
        assert message.content[0].text == "hi"
    finally:
        process.terminate()
        stdout, stderr = await asyncio.to_thread(process.communicate, timeout=10)
    assert process.returncode == 0, stderr
    assert stdout == ""
    assert "served 1 requests" in stderr


@pytest.mark.parametrize("provider", ["bedrock", "vertex", "foundry"])
async def test_cli_serves_a_script_behind_a_providers_wire(tmp_path: Path, provider: str,
                                                           monkeypatch: pytest.MonkeyPatch):
    """`serve --provider`: the second line is the environment a query needs, and a query
    made with nothing else reaches the fake through the provider's own client."""
    from fuxi_notebook import FuxiAgentOptions, ResultMessage, query

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"content": [{"type": "text", "text": "hi"}]}]}))
    process = subprocess.Popen(
        [sys.executable, "-m", "fuxi_notebook.testing", "serve", "--script", str(script),
         "--provider", provider],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        url = await asyncio.to_thread(process.stdout.readline)
        env_line = await asyncio.to_thread(process.stdout.readline)
        if not env_line:
            pytest.fail(f"no env line; stderr: {process.communicate(timeout=10)[1]}")
        assert url.startswith("FAKE_API_URL=http://127.0.0.1:")
        env = json.loads(env_line.removeprefix("FAKE_API_ENV="))
        assert env[f"FUXI_USE_{provider.upper()}"] == "1"
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        if provider == "bedrock":
            monkeypatch.setenv("FUXI_MODEL", "global.anthropic.claude-sonnet-5-5-v1:0")
        results = [m async for m in query(prompt="hello", options=FuxiAgentOptions(
            cwd=tmp_path)) if isinstance(m, ResultMessage)]
        assert results[0].result == "hi", results[0].errors
    finally:
        process.terminate()
        _, stderr = await asyncio.to_thread(process.communicate, timeout=10)
    assert process.returncode == 0, stderr
    assert "served 1 requests" in stderr and "errors: none" in stderr
    if provider == "vertex":  # its key file lived in a folder of its own, now removed
        assert not Path(env["GOOGLE_APPLICATION_CREDENTIALS"]).exists()
