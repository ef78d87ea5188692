"""Subagent transcripts read back through the sessions API, as the comparable SDK's e2e
test_subagent_session_reads checks them: after a run whose model calls the Agent tool
(with `run_in_background: false`, as that test's prompt asks), both the local files
(`list_subagents` / `get_subagent_messages`) and a `SessionStore`
(`list_subagents_from_store` / `get_subagent_messages_from_store`) attribute every message
of the subagent to that Agent call's id, and to no parent agent."""

from __future__ import annotations

import pytest

from fuxi_notebook import (
    AgentDefinition,
    AssistantMessage,
    FuxiAgentOptions,
    InMemorySessionStore,
    ResultMessage,
    ScriptedModel,
    ToolUseBlock,
    get_subagent_messages,
    get_subagent_messages_from_store,
    list_subagents,
    list_subagents_from_store,
    query,
)
from fuxi_notebook.testing import text, tool_use

AGENT_TOOLS = {"Agent", "Task"}


@pytest.fixture(autouse=True)
def _sessions_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "home"))
    monkeypatch.delenv("FUXI_SKIP_SESSION_PERSISTENCE", raising=False)


async def test_subagent_messages_carry_the_agent_calls_id_locally_and_in_a_store(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the e2e test reads the local files of the cwd
    store = InMemorySessionStore()
    script = ScriptedModel([
        [tool_use("Agent", {"description": "greet", "prompt": "say hi",
                            "subagent_type": "greeter", "run_in_background": False})],
        [text("Hi there, nice to meet you!")],
        [text("DONE")]])
    options = FuxiAgentOptions(
        model=script, session_store=store, max_turns=4, allowed_tools=sorted(AGENT_TOOLS),
        agents={"greeter": AgentDefinition(
            description="Replies with a short greeting. Use for greeting tasks.",
            prompt="Reply with one short friendly sentence. Do not use any tools.",
            model="haiku", background=False)})
    session_id, calls = None, set()
    async for message in query(prompt="Use the Agent tool once, then reply DONE.",
                               options=options):
        if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
            calls |= {b.id for b in message.content
                      if isinstance(b, ToolUseBlock) and b.name in AGENT_TOOLS}
        elif isinstance(message, ResultMessage):
            assert not message.is_error, message
            session_id = message.session_id
    assert session_id and len(calls) == 1

    local = {agent: get_subagent_messages(session_id, agent) for agent in
             list_subagents(session_id)}
    mirrored = {agent: await get_subagent_messages_from_store(store, session_id, agent)
                for agent in await list_subagents_from_store(store, session_id)}
    for found in (local, mirrored):
        assert len(found) == 1
        [messages] = found.values()
        assert [m.type for m in messages] == ["user", "assistant"]
        assert {m.parent_tool_use_id for m in messages} == calls
        assert all(m.parent_agent_id is None for m in messages)
    assert set(local) == set(mirrored)
