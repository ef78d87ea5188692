"""Compaction: a long session stays under the window, calls stay paired across the
boundary, `/compact`, PreCompact, FUXI.md's summary instructions, results cut to fit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, HookMatcher, ResultMessage
from fuxi_notebook._internal.context.compaction import SUMMARY_OPEN, asks_for_summary
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook._internal.models.wire_check import request_problem
from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.testing.cache import count_tokens
from fuxi_notebook.types import SystemMessage

from .helpers import Agent, collect, result_text
from .helpers import boundaries as _boundaries

WINDOW = 12_000


def _options(model: Any, tmp_path: Any, **extra: Any) -> FuxiAgentOptions:
    extra.setdefault("context_window", WINDOW)
    extra.setdefault("persist_session", False)
    return FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash"], **extra)


async def test_a_200_turn_session_stays_under_the_window_on_the_wire(fake_api, wire_model,
                                                                     tmp_path):
    agent = Agent(200)
    fake_api.context_window = WINDOW  # the fake API rejects a prompt over it, as the API does
    fake_api.add(*agent.steps())
    messages, error = await collect("count", _options(wire_model, tmp_path))
    assert error is None and fake_api.errors == []
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "done after 200 calls"
    assert result.num_turns == 201  # summary requests are not turns of the run
    boundaries = _boundaries(messages)
    assert len(boundaries) >= 5 and len(agent.summaries) == len(boundaries)
    for boundary in boundaries:
        meta = boundary.data["compact_metadata"]
        assert meta["trigger"] == "auto" and meta["pre_tokens"] > meta["post_tokens"]
        assert boundary.data["session_id"] == result.session_id
    requests = fake_api.requests
    assert max(count_tokens(r) for r in requests) <= WINDOW
    loop_requests = [r for r in requests if not asks_for_summary(r["messages"])]
    for request in loop_requests:  # every request is one the API accepts: calls paired
        assert request_problem(request) is None
    after = [r for r in loop_requests if _first_text(r).startswith(SUMMARY_OPEN)]
    assert after, "no request went on after a compaction"
    for request in after:  # the kept part starts with the model's turn, results follow
        assert [m["role"] for m in request["messages"][:3]] == ["user", "assistant", "user"]
        assert "Summary" in _first_text(request)


async def test_the_cache_read_share_recovers_within_two_turns_after_a_compaction(
        fake_api, wire_model, tmp_path):
    agent = Agent(80)  # enough turns for three compactions (deferred tools count nothing)
    fake_api.add(*agent.steps())
    await collect("count", _options(wire_model, tmp_path))
    shares = [_share(u) for u in fake_api.usage_log]
    kinds, opening = [], ""
    for request in fake_api.requests:  # "first": the first request after a compaction
        first = _first_text(request)
        if asks_for_summary(request["messages"]):
            kinds.append("summary")
        else:
            kinds.append("first" if first != opening and first.startswith(SUMMARY_OPEN)
                         else "loop")
            opening = first
    steady = sorted(s for s, k in zip(shares[2:], kinds[2:], strict=True) if k == "loop")
    typical = steady[len(steady) // 2]
    checked = 0
    for index, kind in enumerate(kinds):
        if kind == "summary":  # reads the prefix the previous request cached
            assert shares[index] > 0.5 * typical
        if kind == "first" and index + 2 < len(kinds) and kinds[index + 1] == "loop":
            assert shares[index + 1] >= 0.9 * typical, (shares[index - 1: index + 3], typical)
            checked += 1
    assert checked >= 3 and typical > 0.7


def _share(usage: dict[str, int]) -> float:
    total = (usage["input_tokens"] + usage["cache_read_input_tokens"]
             + usage["cache_creation_input_tokens"])
    return usage["cache_read_input_tokens"] / total


def _first_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else content[0].get("text", "")


async def test_the_summary_request_reuses_the_prefix_and_follows_fuxi_md(tmp_path):
    (tmp_path / "FUXI.md").write_text("# Summary instructions\nAlways keep the file names "
                                      "and the test results.\n")
    agent = Agent(30)
    model = ScriptedModel(agent.steps())
    messages, error = await collect("count", _options(model, tmp_path,
                                                      setting_sources=["project"]))
    assert error is None and _boundaries(messages)
    summary = agent.summaries[0]
    assert "Always keep the file names" in json.dumps(summary["system"])
    assert summary["tool_choice"] == {"type": "none"} and summary["tools"]
    ask = summary["messages"][-1]["content"][-1]["text"]
    assert "FUXI.md" in ask and "Do not call tools" in ask


async def test_pre_compact_hook_sees_the_trigger_and_can_keep_the_history(tmp_path):
    seen: list[dict[str, Any]] = []

    async def keep(data: dict[str, Any], _id: Any, _ctx: Any) -> dict[str, Any]:
        seen.append(data)
        return {"decision": "block", "reason": "archiving first"}

    agent = Agent(40)
    hooks = {"PreCompact": [HookMatcher(matcher="auto", hooks=[keep])]}
    messages, error = await collect("count", _options(ScriptedModel(agent.steps()), tmp_path,
                                                      hooks=hooks))
    assert error is None and seen and not _boundaries(messages) and not agent.summaries
    assert seen[0]["trigger"] == "auto" and seen[0]["custom_instructions"] is None
    assert seen[0]["hook_event_name"] == "PreCompact"
    notes = [m.data["content"] for m in messages if isinstance(m, SystemMessage)
             and m.subtype == "informational"]
    assert any("archiving first" in note for note in notes)


async def test_compact_as_a_prompt_compacts_with_instructions_and_the_session_goes_on(tmp_path):
    seen: list[dict[str, Any]] = []

    async def note(data: dict[str, Any], _id: Any, _ctx: Any) -> dict[str, Any]:
        seen.append(data)
        return {}

    agent = Agent(4)
    model = ScriptedModel([*agent.steps()[:5], agent, Turn([text("still here")])])
    options = _options(model, tmp_path, context_window=200_000,
                       hooks={"PreCompact": [HookMatcher(matcher="manual", hooks=[note])]})
    async with FuxiSDKClient(options) as client:
        await client.query("count")
        [m async for m in client.receive_response()]
        before = await client.get_context_usage()
        await client.query("/compact keep the seq numbers")
        compacting = [m async for m in client.receive_response()]
        after = await client.get_context_usage()
        await client.query("and now?")
        final = [m async for m in client.receive_response()]
        history = client.session.history
    (boundary,) = _boundaries(compacting)
    assert boundary.data["compact_metadata"]["trigger"] == "manual"
    assert compacting[-1].subtype == "success" and "Compacted" in compacting[-1].result
    assert seen[0]["custom_instructions"] == "keep the seq numbers"
    assert "keep the seq numbers" in agent.summaries[0]["messages"][-1]["content"][-1]["text"]
    assert after["totalTokens"] < before["totalTokens"] and after["rawMaxTokens"] == 200_000
    assert before["isAutoCompactEnabled"] is True and 0 < before["percentage"] < 100
    assert final[-1].result == "still here"
    assert history[0]["content"][0]["text"].startswith(SUMMARY_OPEN)
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


async def test_compact_with_nothing_to_compact_says_so(tmp_path):
    model = ScriptedModel([])
    messages, error = await collect("/compact", _options(model, tmp_path))
    assert error is None and messages[-1].subtype == "success"
    assert "Nothing to compact" in messages[-1].result and not _boundaries(messages)


async def test_compact_keeps_a_call_still_waiting_for_its_result(tmp_path):
    """A run cut by max_turns owes results; `/compact` keeps the call with them."""
    agent = Agent(10)
    model = ScriptedModel([*agent.steps()[:3], agent, Turn([text("resumed")])])
    options = _options(model, tmp_path, max_turns=2, context_window=200_000)
    async with FuxiSDKClient(options) as client:
        await client.query("count")
        first = [m async for m in client.receive_response()]
        await client.query("/compact")
        compacting = [m async for m in client.receive_response()]
        await client.query("go on")
        final = [m async for m in client.receive_response()]
        history = client.session.history
    assert first[-1].subtype == "error_max_turns" and _boundaries(compacting)
    assert final[-1].result == "resumed"
    calls = [b["id"] for b in history[1]["content"] if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for b in history[2]["content"] if b.get("type") == "tool_result"]
    assert calls and calls == results  # the waiting call and its (not-run) result, kept


async def test_a_result_that_would_overflow_the_window_is_cut_with_a_notice(tmp_path):
    agent = Agent(1, command="seq 1 40000")
    model = ScriptedModel(agent.steps())
    _, error = await collect("count", _options(model, tmp_path))
    assert error is None
    sent = model.requests[1].messages[-1]["content"][0]
    body = result_text(sent)
    assert "cut to fit the model's context window" in body
    assert len(body) < WINDOW * 3 and "40000" in body  # the end of the output is kept


async def test_a_prompt_the_api_calls_too_long_is_compacted_and_sent_again(fake_api, wire_model,
                                                                           tmp_path):
    agent = Agent(40)
    fake_api.context_window = 6_000  # smaller than the window the session believes in
    fake_api.add(*agent.steps())
    messages, error = await collect("count", _options(wire_model, tmp_path,
                                                      context_window=60_000))
    assert error is None and messages[-1].result == "done after 40 calls"
    assert _boundaries(messages) and any("prompt is too long" in e for e in fake_api.errors)


async def test_auto_compact_off_never_compacts_on_its_own(tmp_path):
    agent = Agent(30)
    messages, error = await collect("count", _options(ScriptedModel(agent.steps()), tmp_path,
                                                      auto_compact=False))
    assert error is None and not _boundaries(messages) and not agent.summaries


@pytest.mark.parametrize("window", [1_000, -5, "big"])
async def test_a_bad_context_window_is_a_clear_error(tmp_path, window):
    from fuxi_notebook.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="context_window"):
        await collect("hi", _options(ScriptedModel([]), tmp_path, context_window=window))


async def test_compact_is_recognised_after_context_blocks(tmp_path):
    """The notebook sends the kernel's context before the prompt: `/compact` still counts."""
    from fuxi_notebook._internal.common.reminders import reminder

    model = ScriptedModel([])
    content = [reminder("Variables: df (DataFrame)"), {"type": "text", "text": "/compact"}]
    messages, error = await collect(_single(content), _options(model, tmp_path))
    assert error is None and "Nothing to compact" in messages[-1].result
    assert model.requests == []


async def _single(content: list[dict[str, Any]]) -> Any:
    yield {"type": "user", "message": {"role": "user", "content": content}}


async def test_the_task_list_survives_compaction_and_a_rebuilt_conversation(tmp_path):
    from fuxi_notebook._internal.tools.task_list import TaskList

    plan = [[tool_use("TaskCreate", {"subject": "Load the data"}),
             tool_use("TaskCreate", {"subject": "Fit the model"})],
            [tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})]]
    agent = Agent(3)
    model = ScriptedModel([*plan, *agent.steps()[:4], agent, [text("ok")]])
    options = _options(model, tmp_path, context_window=200_000)
    async with FuxiSDKClient(options) as client:
        await client.query("plan and count")
        [m async for m in client.receive_response()]
        await client.query("/compact")
        [m async for m in client.receive_response()]
        history = client.session.history
        live = client.session.conversation.tasks.checklist()
    assert "Fit the model" in history[0]["content"][0]["text"]
    rebuilt = TaskList.from_history(history)  # a conversation rebuilt from its records
    assert rebuilt.checklist() == live
    assert [t.status for t in rebuilt.visible()] == ["completed", "pending"]


async def test_a_compacted_session_resumes_from_its_summary(tmp_path):
    from fuxi_notebook import InMemorySessionStore

    store = InMemorySessionStore()
    agent = Agent(30)
    model = ScriptedModel(agent.steps())
    messages, error = await collect("count", _options(model, tmp_path, persist_session=True,
                                                      session_store=store))
    assert error is None and _boundaries(messages)
    session_id = messages[-1].session_id
    later = ScriptedModel([Turn([text("resumed")])])
    again, error = await collect("go on", _options(later, tmp_path, persist_session=True,
                                                   session_store=store, resume=session_id))
    assert error is None and again[-1].result == "resumed"
    sent = later.requests[0].messages
    assert sent[0]["content"][0]["text"].startswith(SUMMARY_OPEN)  # not the whole past
    assert request_problem(later.requests[0].to_wire()) is None
