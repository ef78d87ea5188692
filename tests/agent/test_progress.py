"""Progress while a run is busy: the reporter a tool calls (from any thread), and the
session's usage rising while a response streams, still counting each response once."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, ResultMessage, ScriptedModel, StreamEvent
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.retry import RetryPolicy
from fuxi_notebook._internal.models.script import Fault, Turn, text, tool_use
from fuxi_notebook._internal.models.usage import UsageTotals
from fuxi_notebook._internal.tools.base import DeclaredTool, ToolContext, ToolOutput
from fuxi_notebook._internal.tools.progress import calling, current_call, report_output, reporter

PRICED = "claude-opus-5"
START = {"input_tokens": 100, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5}


# --- the reporter ------------------------------------------------------------------------


def test_the_reporter_exists_only_within_a_call_and_works_from_another_thread():
    assert reporter() is None and current_call() is None
    report_output("nobody listens")  # outside a call: nothing happens, nothing raises
    kept: list[str] = []
    heard: list[tuple[str, str, float]] = []

    def listener(tool_use_id: str, text: str, elapsed: float) -> None:
        heard.append((tool_use_id, text, elapsed))
        raise RuntimeError("a broken frontend")  # must not reach the tool

    with calling("toolu_7", kept.append, listener):
        assert current_call() == "toolu_7"
        sink = reporter()
        assert sink is not None
        report_output("first")
        thread = threading.Thread(target=sink, args=("from a thread",))  # no context there
        thread.start()
        thread.join()
    assert reporter() is None and current_call() is None
    assert kept == ["first", "from a thread"]
    assert [(i, t) for i, t, _ in heard] == [("toolu_7", "first"), ("toolu_7", "from a thread")]
    assert all(elapsed >= 0 for _, _, elapsed in heard)


# --- UsageTotals: streaming counts are replaced, never added ------------------------------


def _added(*usages: dict[str, Any], model: str = PRICED) -> UsageTotals:
    """The totals as plain `add` computes them: what streaming must end up equal to."""
    totals = UsageTotals()
    for usage in usages:
        totals.add(model, usage)
    return totals


def _same(actual: UsageTotals, expected: UsageTotals) -> None:
    assert actual.tokens == expected.tokens
    assert actual.cost_usd == expected.cost_usd  # exactly: no rounding left behind
    assert actual.model_usage() == expected.model_usage()
    assert actual.unpriced_responses == expected.unpriced_responses


def test_a_streaming_count_is_shown_replaced_and_settled_once():
    totals = _added({"input_tokens": 3, "output_tokens": 4})
    before = totals.snapshot()
    totals.streaming("r1", PRICED, {**START, "output_tokens": 1})
    assert totals.since(before)["input_tokens"] == 100
    assert totals.cost_since(before) > 0
    totals.streaming("r1", PRICED, {**START, "output_tokens": 50})  # cumulative: replaces
    assert totals.since(before) == {**START, "output_tokens": 50}
    totals.add(PRICED, {"input_tokens": 7})  # e.g. the classifier, meanwhile: kept
    totals.settle("r1", PRICED, {**START, "output_tokens": 60})
    _same(totals, _added({"input_tokens": 3, "output_tokens": 4}, {"input_tokens": 7},
                         {**START, "output_tokens": 60}))
    totals.settle("r1", PRICED, None)  # settling twice changes nothing
    assert totals.since(before)["output_tokens"] == 60


def test_a_dropped_streaming_count_leaves_the_totals_as_they_were():
    totals = _added({"input_tokens": 3})
    totals.streaming("r1", "unknown-model", {"input_tokens": 999})
    assert totals.total_cost_usd is None and "unknown-model" in totals.by_model
    totals.settle("r1")
    _same(totals, _added({"input_tokens": 3}))
    assert "unknown-model" not in totals.by_model and totals.total_cost_usd is not None


def test_two_responses_streaming_at_once_are_kept_apart():
    totals = UsageTotals()
    totals.streaming("a", PRICED, {"input_tokens": 10})
    totals.streaming("b", PRICED, {"input_tokens": 1000})
    assert totals.tokens["input_tokens"] == 1010
    totals.settle("a", PRICED, {"input_tokens": 10, "output_tokens": 2})
    assert totals.tokens["input_tokens"] == 1010 and totals.tokens["output_tokens"] == 2
    totals.settle("b", PRICED, {"input_tokens": 1000, "output_tokens": 5})
    _same(totals, _added({"input_tokens": 10, "output_tokens": 2},
                         {"input_tokens": 1000, "output_tokens": 5}))


# --- the loop: usage while a response streams ---------------------------------------------


def _responses(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool]]:
    """Each response's usage as the stream reported it (message_start, then the cumulative
    message_delta counts), and whether it reached message_stop."""
    found: list[tuple[dict[str, Any], bool]] = []
    for event in events:
        if event["type"] == "message_start":
            found.append((dict(event["message"]["usage"]), False))
        elif event["type"] == "message_delta":
            found[-1][0].update({k: v for k, v in event["usage"].items() if v is not None})
        elif event["type"] == "message_stop":
            found[-1] = (found[-1][0], True)
    return found


async def test_usage_rises_while_a_response_streams_and_counts_once(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a")
    model = ScriptedModel([Turn([tool_use("Glob", {"pattern": "*.txt"})], usage={
        "output_tokens": 30}), Turn([text("There is one file.")], usage={"output_tokens": 7})],
        name=PRICED, usage=dict(START))
    options = FuxiAgentOptions(model=model, cwd=tmp_path, include_partial_messages=True,
                               allowed_tools=["Glob"])
    run = Run(build_session(options))
    usage = run.session.usage
    seen: list[tuple[str, dict[str, int], float | None]] = []
    messages = []
    async for message in run_prompt(run, "how many files?"):
        messages.append(message)
        if isinstance(message, StreamEvent):  # the loop is paused right after this event
            seen.append((message.event["type"], usage.since(run.usage_at_start),
                         usage.cost_since(run.usage_at_start)))
    starts = [tokens for kind, tokens, _ in seen if kind == "message_start"]
    deltas = [tokens for kind, tokens, _ in seen if kind == "message_delta"]
    first = {**START, "output_tokens": 30}
    # the input is counted as soon as message_start arrives, before any content
    assert starts[0] == {**START, "output_tokens": 1}
    assert seen[0][2] is not None and seen[0][2] > 0
    assert deltas[0] == first  # the output once message_delta says it
    # the second response adds to the first (settled once), while it streams too
    assert starts[1] == {key: first[key] + START.get(key, 0) for key in first} | {
        "output_tokens": 31}
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    expected = _added(first, {**START, "output_tokens": 7})
    _same(usage, expected)
    assert result.usage == expected.tokens and result.total_cost_usd == expected.cost_usd


def _wire(url: str, *, retries: int) -> AnthropicModel:
    retry = RetryPolicy(max_retries=retries, base_delay=0.001, max_delay=0.01, stall_timeout=60)
    return AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=url, retry=retry)


async def test_an_interrupt_mid_stream_keeps_what_streamed_once(fake_api, tmp_path: Path):
    turn = Turn([text("North sold the most")], usage={"output_tokens": 9})
    # message_start, block start, one text delta, block stop, message_delta; then silence
    fake_api.add(Fault(stall_seconds=30, cut_after_events=5, turn=turn),
                 Turn([text("fine")], usage={"output_tokens": 3}))
    options = FuxiAgentOptions(model=_wire(fake_api.url, retries=0), cwd=tmp_path,
                               include_partial_messages=True)
    events: list[dict[str, Any]] = []
    async with FuxiSDKClient(options) as client:
        assert client.session is not None
        usage = client.session.usage
        await client.query("who sold the most?")
        async for message in client.receive_messages():
            if isinstance(message, StreamEvent):
                events.append(message.event)
                if message.event["type"] == "message_delta":
                    break
        [(streamed, _)] = _responses(events)
        assert usage.tokens["output_tokens"] == 9 and usage.tokens == _added(streamed).tokens
        await client.interrupt()
        rest = [m async for m in client.receive_response()]
        assert rest[-1].subtype == "error_during_execution"
        _same(usage, _added(streamed, model="claude-sonnet-5-5"))  # kept, not counted twice
        assert rest[-1].usage == usage.tokens
        await client.query("go on")
        after = [m async for m in client.receive_response()]
    assert after[-1].result == "fine"
    second = [u for u, done in _responses(
        [m.event for m in after if isinstance(m, StreamEvent)]) if done]
    _same(usage, _added(streamed, *second, model="claude-sonnet-5-5"))


async def test_a_retried_attempt_is_replaced_not_added(fake_api, tmp_path: Path):
    cut = Turn([text("a long answer " * 20)], usage={"input_tokens": 5000})
    fake_api.add(Fault(cut_after_events=3, turn=cut), Turn([text("second try")]))
    options = FuxiAgentOptions(model=_wire(fake_api.url, retries=2), cwd=tmp_path,
                               include_partial_messages=True)
    run = Run(build_session(options))
    usage = run.session.usage
    inputs: list[int] = []
    events: list[dict[str, Any]] = []
    async for message in run_prompt(run, "go"):
        if isinstance(message, StreamEvent):
            events.append(message.event)
            inputs.append(usage.tokens["input_tokens"])
    assert len(fake_api.requests) == 2 and message.result == "second try"
    assert inputs[0] == 5000  # the first attempt counted while it streamed
    responses = _responses(events)
    assert [done for _, done in responses] == [False, True]
    _same(usage, _added(responses[1][0], model="claude-sonnet-5-5"))  # its count replaced


async def test_a_failed_stream_counts_nothing(fake_api, tmp_path: Path):
    broken = Turn([text("never finished")], usage={"input_tokens": 5000})
    fake_api.add(Fault(error_event=True, cut_after_events=2, turn=broken))
    options = FuxiAgentOptions(model=_wire(fake_api.url, retries=0), cwd=tmp_path,
                               include_partial_messages=True)
    run = Run(build_session(options))
    usage = run.session.usage
    inputs = []
    async for message in run_prompt(run, "go"):
        if isinstance(message, StreamEvent):
            inputs.append(usage.tokens["input_tokens"])
    assert inputs and inputs[0] == 5000
    assert message.subtype == "error_during_execution"
    _same(usage, UsageTotals())  # as before streaming counted: a failed request adds nothing


class _BadImage(DeclaredTool):
    """A tool whose result the API rejects (the bytes are not a PNG)."""

    name = "Snapshot"
    description = "Takes a snapshot."
    kind = "read"

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {}}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        data = base64.b64encode(b"this is text, not a PNG").decode()
        return ToolOutput(content=[{"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": data}}])


async def test_a_rejected_and_repaired_request_counts_each_response_once(fake_api, tmp_path):
    fake_api.add(Turn([tool_use("Snapshot", {})], usage={"output_tokens": 11}),
                 Turn([text("I could not see it.")], usage={"output_tokens": 5}))
    options = FuxiAgentOptions(model=_wire(fake_api.url, retries=2), cwd=tmp_path,
                               include_partial_messages=True)
    run = Run(build_session(options, extra_tools=[_BadImage()]))
    messages = [m async for m in run_prompt(run, "look")]
    assert messages[-1].subtype == "success" and len(fake_api.requests) == 3  # one rejected
    responses = _responses([m.event for m in messages if isinstance(m, StreamEvent)])
    assert [done for _, done in responses] == [True, True]
    _same(run.session.usage, _added(*(u for u, _ in responses), model="claude-sonnet-5-5"))
    assert messages[-1].usage == run.session.usage.tokens
