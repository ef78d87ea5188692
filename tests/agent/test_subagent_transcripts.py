"""Subagent transcripts: each subagent's conversation is saved beside its session's
(`subagents/agent-<agentId>`), finished or interrupted, and read back with
`list_subagents` / `get_subagent_messages`."""

from __future__ import annotations

import asyncio

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    HookMatcher,
    ScriptedModel,
    ToolUseBlock,
    create_sdk_mcp_server,
    tool,
)
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.sessions.api import (
    delete_session_via_store,
    get_session_messages,
    get_subagent_messages,
    get_subagent_messages_from_store,
    list_subagents,
    list_subagents_from_store,
)
from fuxi_notebook._internal.sessions.store import (
    FileSessionStore,
    InMemorySessionStore,
    project_key_for_directory,
)

from .helpers import block_texts, collect, result_text, tool_results
from .subagent_helpers import agent_call, delegating, worker


def _agent_id(model: ScriptedModel) -> str:
    """The agent id the Agent call's result names (in the parent's last request)."""
    return result_text(tool_results(model.requests[-1].messages)[0]).rpartition(
        "agentId: ")[2]


async def test_a_subagents_conversation_is_saved_beside_the_session(tmp_path):
    (tmp_path / "app.cfg").write_text("x=1\n")
    model = delegating([text("Looking."), tool_use("Glob", {"pattern": "*.cfg"})],
                    [text("It is app.cfg.")])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                           agents=worker()))
    assert error is None
    session_id, agent_id = messages[-1].session_id, _agent_id(model)
    assert list_subagents(session_id, tmp_path) == [agent_id]
    assert list_subagents(session_id) == [agent_id]  # found in any project
    saved = get_subagent_messages(session_id, agent_id, tmp_path)
    assert [m.type for m in saved] == ["user", "assistant", "user", "assistant"]
    assert block_texts(saved[0].message)[0] == "find the config"
    assert saved[-1].message["content"] == [{"type": "text", "text": "It is app.cfg."}]
    assert all(m.session_id == session_id and m.parent_tool_use_id == "toolu_01"
               and m.parent_agent_id is None for m in saved)
    # the call the stream showed (tagged with the Agent call) is the saved message
    [shown_call] = [m for m in messages if isinstance(m, AssistantMessage)
                    and m.parent_tool_use_id == "toolu_01"
                    and isinstance(m.content[0], ToolUseBlock)]
    assert saved[1].uuid == shown_call.uuid
    assert get_subagent_messages(session_id, agent_id, tmp_path, limit=1, offset=1) == saved[1:2]
    assert get_subagent_messages(session_id, "nobody", tmp_path) == []
    # the session's own conversation has only the Agent call and its result
    assert "Looking." not in str([m.message for m in get_session_messages(session_id,
                                                                          tmp_path)])
    key = {"project_key": project_key_for_directory(tmp_path), "session_id": session_id,
           "subpath": f"subagents/agent-{agent_id}"}
    entries = FileSessionStore().read(key)
    assert entries is not None and all(
        e["isSidechain"] and e["agentId"] == agent_id and e["agentType"] == "worker"
        and e["session_id"] == session_id for e in entries)


async def test_subagent_transcripts_go_to_the_options_store_and_with_the_session(tmp_path):
    store = InMemorySessionStore()
    model = delegating([text("Done.")])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker(), session_store=store))
    session_id, agent_id = messages[-1].session_id, _agent_id(model)
    assert await list_subagents_from_store(store, session_id, tmp_path) == [agent_id]
    saved = await get_subagent_messages_from_store(store, session_id, agent_id, tmp_path)
    assert [block_texts(m.message)[-1] for m in saved] == ["find the config", "Done."]
    assert list_subagents(session_id, tmp_path) == [agent_id]  # the local copy, mirrored
    await delete_session_via_store(store, session_id, tmp_path)
    assert await list_subagents_from_store(store, session_id, tmp_path) == []


async def test_a_nested_subagent_names_the_agent_that_started_it(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_MAX_SUBAGENT_DEPTH", "2")
    model = ScriptedModel([[agent_call("outer")], [agent_call("inner")], [text("deep")],
                           [text("middle")], [text("top")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker()))
    session_id = messages[-1].session_id
    saved = {agent: get_subagent_messages(session_id, agent, tmp_path)
             for agent in list_subagents(session_id, tmp_path)}
    by_task = {block_texts(m[0].message)[0]: (agent, m) for agent, m in saved.items()}
    (outer_id, outer), (_, inner) = by_task["outer"], by_task["inner"]
    assert {(m.parent_tool_use_id, m.parent_agent_id) for m in outer} == {("toolu_01", None)}
    assert {(m.parent_tool_use_id, m.parent_agent_id) for m in inner} == {
        ("toolu_02", outer_id)}


async def test_an_interrupted_subagent_keeps_what_it_had_done(tmp_path):
    started, never = asyncio.Event(), asyncio.Event()

    @tool("wait", "Wait for a while", {})
    async def wait(args):
        started.set()
        await never.wait()
        return {"content": [{"type": "text", "text": "never"}]}

    model = ScriptedModel([[agent_call("wait for it")], [tool_use("mcp__probe__wait", {})],
                           [text("after")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(),
                               allowed_tools=["mcp__probe__wait"],
                               mcp_servers={"probe": create_sdk_mcp_server("probe", tools=[
                                   wait])})
    async with FuxiSDKClient(options) as client:
        await client.query("go")
        await asyncio.wait_for(started.wait(), timeout=10)  # the subagent's tool runs
        await client.interrupt()
        stopped = [m async for m in client.receive_response()]
    assert stopped[-1].subtype == "error_during_execution"
    session_id = stopped[-1].session_id
    [agent_id] = list_subagents(session_id, tmp_path)
    saved = get_subagent_messages(session_id, agent_id, tmp_path)
    assert block_texts(saved[0].message)[0] == "wait for it"
    assert saved[1].message["content"][0]["name"] == "mcp__probe__wait"


async def test_hooks_inside_a_subagent_see_the_sessions_transcript(tmp_path):
    paths: list[str | None] = []

    async def hook(input_data, tool_use_id, context):
        paths.append(input_data["transcript_path"])
        return {}

    model = delegating([tool_use("Glob", {"pattern": "*"})], [text("Found it.")])
    messages, _ = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, agents=worker(),
        hooks={"PreToolUse": [HookMatcher(None, [hook])]}))
    main = FileSessionStore().path({"project_key": project_key_for_directory(tmp_path),
                                    "session_id": messages[-1].session_id})
    assert paths == [str(main), str(main)]  # the Agent call, then the subagent's Glob
    assert main.is_file()
