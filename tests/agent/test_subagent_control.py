"""Subagents running together: concurrency, the concurrency limit, interrupts, and a run
through the real `anthropic` client against the fake Messages API."""

from __future__ import annotations

import asyncio

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    HookMatcher,
    ScriptedModel,
    UserMessage,
)
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.models.script import Turn, text, tool_use

from .helpers import collect, result_text, tool_results
from .subagent_helpers import Gate, Hold, agent_call, says, two_step, worker


async def test_two_agent_calls_of_one_response_run_at_the_same_time(tmp_path):
    gate = Gate(2)  # each subagent waits here for the other: only concurrent runs pass
    meet = two_step(lambda request: [tool_use("Meet", {})], says("met for"))
    model = ScriptedModel([[agent_call("task A"), agent_call("task B")], meet, meet, meet, meet,
                           [text("both done")]])
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker()),
                      extra_tools=[gate])
    messages = [m async for m in run_prompt(Run(session), "go")]
    assert messages[-1].result == "both done"
    results = tool_results(model.requests[-1].messages)
    assert [r["tool_use_id"] for r in results] == ["toolu_01", "toolu_02"]  # model's order
    assert [result_text(r).split("\n\n")[0] for r in results] == ["met for task A",
                                                                  "met for task B"]
    inner = [m for m in messages if isinstance(m, UserMessage) and m.parent_tool_use_id]
    assert {m.parent_tool_use_id for m in inner} == {"toolu_01", "toolu_02"}
    assert all(result_text({"content": m.content[0].content}) == "met" for m in inner)


async def test_a_call_over_the_concurrency_limit_gets_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_MAX_CONCURRENT_SUBAGENTS", "1")
    hold = Hold()

    async def release(input_data, tool_use_id, context):
        # the refused call's failure is the evidence both ran together: let the first end
        if "limit reached" in input_data["error"]:
            hold.release.set()
        return {}

    held = two_step(lambda request: [tool_use("Hold", {})], says("finished"))
    model = ScriptedModel([[agent_call("one"), agent_call("two")], held, held,
                           [text("done")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(), hooks={
        "PostToolUseFailure": [HookMatcher("Agent", [release])]})
    session = build_session(options, extra_tools=[hold])
    [m async for m in run_prompt(Run(session), "go")]
    first, second = tool_results(model.requests[-1].messages)
    assert result_text(first).startswith("finished one") and not first.get("is_error")
    assert second["is_error"] and result_text(second).startswith(
        "Concurrent subagent limit reached (1 running")


async def test_interrupt_stops_every_subagent_and_answers_every_call(tmp_path):
    hold = Hold()
    hold.expected = 2
    held = two_step(lambda request: [tool_use("Hold", {})], says("never"))
    model = ScriptedModel([[agent_call("one"), agent_call("two")], held, held,
                           [text("after the interrupt")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker())
    client = FuxiSDKClient(options)
    await client.connect()
    client.session = build_session(options, extra_tools=[hold])  # the probe tool joins the session
    try:
        await client.query("start both")
        await asyncio.wait_for(hold.all_started.wait(), timeout=10)  # both subagents hold
        await client.interrupt()
        stopped = [m async for m in client.receive_response()]
        assert stopped[-1].subtype == "error_during_execution"
        assert hold.cancelled == 2
        await client.query("go on")
        after = [m async for m in client.receive_response()]
    finally:
        await client.disconnect()
    assert after[-1].result == "after the interrupt"
    first, second = tool_results(model.requests[-1].messages)[:2]
    assert [first["tool_use_id"], second["tool_use_id"]] == ["toolu_01", "toolu_02"]
    for result in (first, second):
        assert result["is_error"]
        assert "Interrupted by the user after" in result_text(result)
        assert "Hold:" in result_text(result)  # what the subagent had done so far


async def test_a_subagent_through_the_real_client_and_the_fake_api(fake_api, wire_model,
                                                                    tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\nship on Friday\n")
    fake_api.add(
        Turn([text("I'll ask the reader."), agent_call("What does notes.md say?", "reader")]),
        Turn([tool_use("Read", {"file_path": "notes.md"})]),
        Turn([text("It says: ship on Friday.")]),
        Turn([text("The notes say to ship on Friday.")]))
    agents = {"reader": worker(tools=["Read"])["worker"]}
    messages, error = await collect("What do my notes say?", FuxiAgentOptions(
        model=wire_model, cwd=tmp_path, agents=agents))
    assert error is None and messages[-1].result == "The notes say to ship on Friday."
    requests = fake_api.requests
    assert len(requests) == 4
    assert [t["name"] for t in requests[1]["tools"]] == ["Read"]
    assert requests[1]["messages"][0]["content"][0]["text"] == "What does notes.md say?"
    agent_id = next(m.content[0].id for m in messages if isinstance(m, AssistantMessage)
                    and m.content[0].type == "tool_use" and m.content[0].name == "Agent")
    inner = [m for m in messages if getattr(m, "parent_tool_use_id", None) == agent_id]
    assert [type(m).__name__ for m in inner] == ["AssistantMessage", "UserMessage"]
    assert "ship on Friday" in str(inner[1].content[0].content)
    last_user = requests[3]["messages"][-1]["content"][0]
    assert last_user["tool_use_id"] == agent_id
    assert str(last_user["content"]).startswith("It says: ship on Friday.")
