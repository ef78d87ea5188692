"""Subagents in the background (`run_in_background: true`, or `background=True` in the
definition), as the comparable SDK runs them: the Agent call returns at once, a
TaskStartedMessage names the task, the run goes on; when the agent ends, a
TaskNotificationMessage follows and the model is woken by a turn whose prompt is the
notification (origin `task-notification`). `stop_task` stops one (no turn), and nothing
outlives `disconnect()` or the end of a `query()`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fuxi_notebook import (
    AgentDefinition,
    ConfigurationError,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    create_sdk_mcp_server,
    get_subagent_messages,
    list_subagents,
    query,
    tool,
)
from fuxi_notebook.testing import Turn, text, tool_use

from .subagent_helpers import answered, is_subagent


class _Gate:
    """An MCP tool the background agent calls, which waits until the test opens it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.entered = asyncio.Event()
        self.cancelled = False

        @tool("wait", "Waits for the gate", {})
        async def wait(args: dict[str, Any]) -> dict[str, Any]:
            self.entered.set()
            try:
                await self.open.wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
            return {"content": [{"type": "text", "text": "opened"}]}

        self.server = create_sdk_mcp_server("gate", tools=[wait])


def _model(background_flag: bool = True) -> ScriptedModel:
    def step(request: Any) -> Turn:
        last = str(request.messages[-1]["content"])
        if is_subagent(request):
            return Turn([text("Hi from the greeter.")] if answered(request)
                        else [tool_use("mcp__gate__wait", {})])
        if "<task-notification>" in last:
            return Turn([text("The greeter has said hi.")])
        if "anything new?" in last:
            return Turn([text("Nothing new.")])
        if answered(request):
            return Turn([text("The greeter is at work; I will tell you when it is done.")])
        return Turn([tool_use("Agent", {"description": "greet", "prompt": "say hi",
                                        "subagent_type": "greeter",
                                        "run_in_background": background_flag})])
    return ScriptedModel([step] * 8)


def _options(tmp_path: Any, gate: _Gate, model: ScriptedModel, **extra: Any) -> FuxiAgentOptions:
    return FuxiAgentOptions(
        model=model, cwd=tmp_path, allowed_tools=["mcp__gate__wait"],
        mcp_servers={"gate": gate.server},
        agents={"greeter": AgentDefinition(description="Greets.", prompt="You greet.",
                                           **extra)})


async def test_query_returns_then_the_finished_agent_wakes_the_model(tmp_path):
    gate, model = _Gate(), _model()
    seen: list[Any] = []
    async for message in query(prompt="greet someone", options=_options(tmp_path, gate, model)):
        seen.append(message)
        if isinstance(message, ResultMessage) and message.origin is None:
            assert not gate.open.is_set()  # the first result came while the agent ran
            gate.open.set()
    kinds = [type(m).__name__ for m in seen if isinstance(m, TaskStartedMessage | ResultMessage
                                                           | TaskNotificationMessage)]
    assert kinds == ["TaskStartedMessage", "ResultMessage", "TaskNotificationMessage",
                     "ResultMessage"]
    started = next(m for m in seen if isinstance(m, TaskStartedMessage))
    notified = next(m for m in seen if isinstance(m, TaskNotificationMessage))
    first, woken = [m for m in seen if isinstance(m, ResultMessage)]
    assert started.task_type == "local_agent" and notified.task_id == started.task_id
    assert notified.status == "completed" and notified.tool_use_id == started.tool_use_id
    assert first.result.startswith("The greeter is at work") and first.origin is None
    assert woken.result == "The greeter has said hi."
    assert woken.origin == {"kind": "task-notification"}
    prompt = model.requests[-1].messages[-1]["content"]
    said = " ".join(b.get("text", "") for b in prompt if b.get("type") == "text")
    assert f"<task-id>{started.task_id}</task-id>" in said and "Hi from the greeter." in said
    call_result = next(m for m in seen if type(m).__name__ == "UserMessage"
                       and m.parent_tool_use_id is None)
    assert "running in the background" in str(call_result.content[0].content)


async def test_its_transcript_is_saved_whole(tmp_path, monkeypatch):
    monkeypatch.delenv("FUXI_SKIP_SESSION_PERSISTENCE", raising=False)
    gate, model = _Gate(), _model()
    session_id = None
    async for message in query(prompt="greet", options=_options(tmp_path, gate, model)):
        if isinstance(message, ResultMessage):
            session_id = message.session_id
            gate.open.set()
    [agent] = list_subagents(session_id, tmp_path)
    saved = get_subagent_messages(session_id, agent, tmp_path)
    assert [m.type for m in saved] == ["user", "assistant", "user", "assistant"]
    assert saved[-1].message["content"][0]["text"] == "Hi from the greeter."


async def test_a_definition_may_ask_for_the_background(tmp_path):
    gate, model = _Gate(), _model(background_flag=False)
    options = _options(tmp_path, gate, model, background=True)
    results = []
    async for message in query(prompt="greet", options=options):
        if isinstance(message, ResultMessage):
            results.append(message)
            gate.open.set()
    assert [r.origin for r in results] == [None, {"kind": "task-notification"}]


async def test_a_client_takes_the_woken_turn_and_stop_task_stops_one(tmp_path):
    gate, model = _Gate(), _model()
    async with FuxiSDKClient(_options(tmp_path, gate, model)) as client:
        await client.query("greet someone")
        first = [m async for m in client.receive_response()]
        [started] = [m for m in first if isinstance(m, TaskStartedMessage)]
        await asyncio.wait_for(gate.entered.wait(), 10)
        with pytest.raises(ConfigurationError, match=started.task_id):
            await client.stop_task("no-such-task")
        await client.stop_task(started.task_id)
        news = []
        async for message in client.receive_messages():
            news.append(message)
            if isinstance(message, TaskNotificationMessage):
                break
        requests = len(model.requests)
        await client.query("anything new?")
        after = [m async for m in client.receive_response()]
    assert [type(m).__name__ for m in news] == ["TaskUpdatedMessage", "TaskNotificationMessage"]
    assert isinstance(news[0], TaskUpdatedMessage) and news[0].status == "killed"
    assert news[1].status == "stopped" and gate.cancelled
    assert after[-1].origin is None and len(model.requests) == requests + 1  # no woken turn


async def test_disconnect_stops_a_running_background_agent(tmp_path):
    gate, model = _Gate(), _model()
    async with FuxiSDKClient(_options(tmp_path, gate, model)) as client:
        await client.query("greet someone")
        [m async for m in client.receive_response()]
        await asyncio.wait_for(gate.entered.wait(), 10)
    assert gate.cancelled
    assert not [t for t in asyncio.all_tasks() if "_body" in repr(t) or "body()" in repr(t)]


async def test_query_stops_an_agent_over_the_wait_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_BACKGROUND_WAIT_MS", "50")
    gate, model = _Gate(), _model()
    seen = [m async for m in query(prompt="greet", options=_options(tmp_path, gate, model))]
    notified = [m for m in seen if isinstance(m, TaskNotificationMessage)]
    assert [n.status for n in notified] == ["stopped"] and gate.cancelled
    assert [r.origin for r in seen if isinstance(r, ResultMessage)] == [None]  # no turn


async def test_without_a_host_for_it_the_agent_runs_in_the_foreground(tmp_path):
    gate, model = _Gate(), _model()
    gate.open.set()
    async with FuxiSDKClient(_options(tmp_path, gate, model), background=False) as client:
        await client.query("greet someone")
        messages = [m async for m in client.receive_response()]
    assert not [m for m in messages if isinstance(m, TaskStartedMessage)]
    call_result = next(m for m in messages if type(m).__name__ == "UserMessage"
                       and m.parent_tool_use_id is None)
    text_ = str(call_result.content[0].content)
    assert "Hi from the greeter." in text_ and "ran in the foreground" in text_
