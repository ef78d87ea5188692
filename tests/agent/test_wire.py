"""The loop on the real `anthropic` client against the fake server: wire shape and faults."""

from __future__ import annotations

import pytest

from fuxi_notebook import AssistantMessage, FuxiAgentOptions, FuxiSDKClient, ResultMessage
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.retry import RetryPolicy
from fuxi_notebook.testing import Fault, Turn, text, tool_use

from .helpers import collect, result_text, tool_results


def _options(model, tmp_path, **kw) -> FuxiAgentOptions:
    return FuxiAgentOptions(model=model, cwd=tmp_path, **kw)


async def test_wire_round_trip_pairs_results_and_uses_bearer_auth(fake_api, wire_model, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    fake_api.add(Turn([text("Reading."), tool_use("Read", {"file_path": "a.txt"})]),
                 Turn([text("It says alpha.")]))
    messages, error = await collect("read a.txt", _options(wire_model, tmp_path,
                                                           allowed_tools=["Read"]))
    assert error is None and messages[-1].result == "It says alpha."
    first, second = fake_api.requests
    assert first["stream"] is True and first["model"] == "claude-sonnet-5-5"
    assert [t["name"] for t in first["tools"]][:3] == ["Read", "Write", "Edit"]
    tool_id = second["messages"][1]["content"][1]["id"]
    (result,) = tool_results(second["messages"])
    assert result["tool_use_id"] == tool_id and "alpha" in result_text(result)
    assert fake_api.request_headers[0]["authorization"] == "Bearer test-key"
    assistant = [m for m in messages if isinstance(m, AssistantMessage)]
    assert len({m.message_id for m in assistant[:2]}) == 1  # one response, one id


@pytest.mark.parametrize("status", [429, 500, 529])
async def test_transient_http_errors_are_retried_honouring_retry_after(
        fake_api, wire_model, tmp_path, status):
    fake_api.add(Fault(status=status, retry_after=0.01), Turn([text("recovered")]))
    messages, error = await collect("go", _options(wire_model, tmp_path))
    assert error is None and messages[-1].result == "recovered"
    assert len(fake_api.requests) == 2


def test_retry_after_is_capped():
    policy = RetryPolicy(max_retry_after=2.0)
    assert policy.delay(0, retry_after=3600) == 2.0
    assert policy.delay(0, retry_after=0.5) == 0.5
    assert 0 < policy.delay(3) <= policy.max_delay


async def test_stream_cut_before_any_block_is_retried(fake_api, wire_model, tmp_path):
    fake_api.add(Fault(cut_after_events=3, turn=Turn([text("a long answer " * 20)])),
                 Turn([text("second try")]))
    messages, error = await collect("go", _options(wire_model, tmp_path))
    assert error is None and messages[-1].result == "second try"
    assert len(fake_api.requests) == 2


async def test_error_event_before_any_block_is_retried(fake_api, wire_model, tmp_path):
    fake_api.add(Fault(error_event=True, cut_after_events=2), Turn([text("fine")]))
    messages, _ = await collect("go", _options(wire_model, tmp_path))
    assert messages[-1].result == "fine" and len(fake_api.requests) == 2


async def test_stalled_stream_is_abandoned_and_retried(fake_api, fake_api_url_model, tmp_path):
    fake_api.add(Fault(stall_seconds=5, cut_after_events=1), Turn([text("after stall")]))
    messages, _ = await collect("go", _options(fake_api_url_model, tmp_path))
    assert messages[-1].result == "after stall" and len(fake_api.requests) == 2


async def test_stream_cut_after_a_completed_block_is_not_rerun(fake_api, wire_model, tmp_path):
    # text block completes (events 0-4), then the tool_use block is cut mid-input
    turn = Turn([text("Creating it."), tool_use("Bash", {"command": "touch x"})])
    fake_api.add(Fault(cut_after_events=7, turn=turn))
    messages, error = await collect("go", _options(wire_model, tmp_path, allowed_tools=["Bash"]))
    assert len(fake_api.requests) == 1  # a partially shown answer is never silently re-run
    assert not (tmp_path / "x").exists()
    texts = [m for m in messages if isinstance(m, AssistantMessage)]
    assert texts[0].content[0].text == "Creating it."
    assert messages[-1].subtype == "error_during_execution" and error is not None


async def test_non_retryable_errors_fail_at_once(fake_api, wire_model, tmp_path):
    fake_api.add(Fault(status=400, message="bad request body"))
    messages, _ = await collect("go", _options(wire_model, tmp_path))
    assert len(fake_api.requests) == 1
    assert messages[-1].subtype == "error_during_execution"
    assert "400" in messages[-1].errors[0] and "bad request body" in messages[-1].errors[0]


async def test_spend_limit_is_not_retried(fake_api, wire_model, tmp_path):
    fake_api.add(Fault(status=429, headers={"x-should-retry": "false"},
                       message="spend limit reached"))
    messages, _ = await collect("go", _options(wire_model, tmp_path))
    assert len(fake_api.requests) == 1 and "spend limit" in messages[-1].errors[0]


async def test_exhausted_retries_keep_the_conversation_valid(fake_api, wire_model, tmp_path):
    fake_api.add(*[Fault(status=529, retry_after=0.001)] * 4, Turn([text("back")]))
    async with FuxiSDKClient(_options(wire_model, tmp_path)) as client:
        await client.query("first")
        failed = [m async for m in client.receive_response()][-1]
        await client.query("second")
        ok = [m async for m in client.receive_response()][-1]
    assert failed.subtype == "error_during_execution" and "529" in failed.errors[0]
    assert ok.subtype == "success" and ok.result == "back"
    last = fake_api.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user"]  # no dangling assistant turn
    # the prompt the API never answered is left out (issue 35, finding 6)
    assert [b["text"] for b in last[0]["content"]] == ["second"]


async def test_refusal_is_not_retried_and_surfaced(fake_api, wire_model, tmp_path):
    fake_api.add(Turn([text("I can't help with that.")], stop_reason="refusal"))
    messages, _ = await collect("go", _options(wire_model, tmp_path))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.stop_reason == "refusal"
    assert len(fake_api.requests) == 1


async def test_one_client_per_event_loop_is_reused(fake_api, wire_model, tmp_path):
    fake_api.add(Turn([text("a")]), Turn([text("b")]))
    await collect("one", _options(wire_model, tmp_path))
    again = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=fake_api.url)
    await collect("two", _options(again, tmp_path))
    assert wire_model.client() is again.client()
    assert fake_api.connection_count == 1


def _cache_read_share(fake_api) -> float:
    """Of the input tokens after the first request, the share read from the cache."""
    later = fake_api.usage_log[1:]
    read = sum(u["cache_read_input_tokens"] for u in later)
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"]
                + u["cache_creation_input_tokens"] for u in later)
    return read / total


async def test_prompt_cache_reads_most_of_a_long_session(fake_api, wire_model, tmp_path):
    turns = [Turn([tool_use("Glob", {"pattern": f"*{i}*"})]) for i in range(10)]
    fake_api.add(*turns, Turn([text("done")]))
    await collect("go", _options(wire_model, tmp_path, allowed_tools=["Glob"]))
    assert _cache_read_share(fake_api) > 0.8


async def test_connection_errors_are_retried_then_reported(tmp_path):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    retry = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.001)
    model = AnthropicModel("claude-sonnet-5-5", api_key="k", base_url=f"http://127.0.0.1:{port}",
                           retry=retry)
    attempts = []
    original = model.client

    def counting_client():
        attempts.append(1)
        return original()

    model.client = counting_client  # count attempts at the exact seam
    messages, _ = await collect("go", _options(model, tmp_path))
    assert len(attempts) == 3
    assert messages[-1].subtype == "error_during_execution"
    assert "could not reach the API" in messages[-1].errors[0]


async def test_prompt_cache_reads_most_of_a_session_with_many_parallel_calls(
        fake_api, wire_model, tmp_path):
    # each turn asks for twelve reads at once: 24 new blocks, more than the API looks back
    # (20) from a breakpoint, so only the breakpoint on the previous turn finds the history
    for number in range(12):
        (tmp_path / f"f{number}.txt").write_text(f"line of file {number}\n" * 40)
    calls = [tool_use("Read", {"file_path": f"f{n}.txt"}) for n in range(12)]
    fake_api.add(*[Turn(list(calls)) for _ in range(8)], Turn([text("done")]))
    await collect("go", _options(wire_model, tmp_path, allowed_tools=["Read"]))
    assert _cache_read_share(fake_api) > 0.8


class BadImage:
    """A tool whose result claims PNG bytes it does not have (as a broken plugin might)."""

    name = "Snapshot"
    description = "returns an image"
    input_schema = {"type": "object"}  # noqa: RUF012
    kind = "read"

    async def run(self, input, ctx):
        import base64

        from fuxi_notebook._internal.tools.base import ToolOutput

        data = base64.b64encode(b"this is text, not a PNG").decode()
        return ToolOutput(content=[{"type": "text", "text": "the screen:"}, {
            "type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": data}}])


async def test_content_the_api_rejects_is_replaced_and_the_conversation_goes_on(
        fake_api, wire_model, tmp_path):
    """Issue 8, finding 7: a 400 caused by what the run added must not poison the session."""
    from fuxi_notebook._internal.agent.assemble import build_session
    from fuxi_notebook._internal.agent.loop.loop import run_prompt
    from fuxi_notebook._internal.agent.loop.run import Run

    fake_api.add(Turn([tool_use("Snapshot", {})]), Turn([text("I could not see it.")]),
                 Turn([text("still here")]))
    session = build_session(_options(wire_model, tmp_path), extra_tools=[BadImage()])
    first = [m async for m in run_prompt(Run(session), "look")]
    assert first[-1].subtype == "success" and first[-1].result == "I could not see it."
    banner = next(m for m in first if getattr(m, "subtype", "") == "informational")
    assert "rejected" in banner.data["content"] and "replaced by a note" in banner.data["content"]
    # the rejected request, then the repaired one carrying the note instead of the image
    assert len(fake_api.requests) == 3
    assert [e for e in fake_api.errors if "image" in e] and len(fake_api.errors) == 1
    [result] = tool_results(fake_api.requests[2]["messages"])
    assert "image removed" in result_text(result) and "the screen:" in result_text(result)
    second = [m async for m in run_prompt(Run(session), "and now?")]
    assert second[-1].subtype == "success" and second[-1].result == "still here"


async def test_a_rejection_not_caused_by_the_run_changes_nothing(fake_api, wire_model, tmp_path):
    fake_api.add(Turn([text("earlier")]), Fault(status=400, message="unrelated"))
    async with FuxiSDKClient(_options(wire_model, tmp_path)) as client:
        await client.query("one")
        [m async for m in client.receive_response()]
        await client.query("two")
        failed = [m async for m in client.receive_response()][-1]
    assert failed.subtype == "error_during_execution" and "unrelated" in failed.errors[0]
    assert len(fake_api.requests) == 2  # nothing of this run could be repaired: no retry


async def test_a_prompt_the_api_never_answered_is_not_sent_again(fake_api, wire_model,
                                                                 tmp_path):
    """Issue 35, finding 6: a request that fails (401) leaves its prompt out of the
    conversation, its transcript included; tool results it carried are owed again."""
    from fuxi_notebook import get_session_messages

    fake_api.add(Turn([tool_use("Read", {"file_path": "a.txt"})]),
                 Turn([tool_use("Read", {"file_path": "a.txt"})]),
                 Fault(status=401), Turn([text("answered")]))
    (tmp_path / "a.txt").write_text("alpha\n")
    options = _options(wire_model, tmp_path, allowed_tools=["Read"], max_turns=1)
    async with FuxiSDKClient(options) as client:
        await client.query("read it")  # a second call is not run (max turns): owed
        first = [m async for m in client.receive_response()]
        await client.query("FAILED PROMPT")
        failed = [m async for m in client.receive_response()]
        await client.query("second prompt")
        second = [m async for m in client.receive_response()]
        session_id = client.session.id
    assert first[-1].subtype == "error_max_turns" and failed[-1].is_error
    assert "401" in str(failed[-1].errors) and second[-1].result == "answered"
    sent = fake_api.requests[-1]["messages"]
    assert "FAILED PROMPT" not in str(sent) and "second prompt" in str(sent)
    owed = tool_results(sent)[-1]  # owed since the first prompt, sent once
    assert "maximum number of turns" in result_text(owed)
    assert str(sent).count(owed["tool_use_id"]) == 2  # its call and its one result
    stored = get_session_messages(session_id, directory=str(tmp_path))
    assert "FAILED PROMPT" not in str([m.message for m in stored])
