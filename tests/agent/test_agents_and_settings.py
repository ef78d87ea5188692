"""Agents and setting sources as the comparable SDK's e2e test_agents_and_settings checks
them, renamed (`.claude/` → `.fuxi/`): the init message lists the agents defined in code
and in the project's agents folder, and reports the `outputStyle` of the local settings
file with the default setting sources, with all three named, and not with user only."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook import (
    AgentDefinition,
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    query,
)
from fuxi_notebook.testing import text


def _agent_file(root: Path) -> None:
    folder = root / ".fuxi" / "agents"
    folder.mkdir(parents=True)
    (folder / "fs-test-agent.md").write_text(
        "---\nname: fs-test-agent\ndescription: A filesystem test agent for SDK testing\n"
        "tools: Read\n---\n\n# Filesystem Test Agent\n\nYou are a simple test agent.\n")


async def _client_messages(options: FuxiAgentOptions) -> list:
    async with FuxiSDKClient(options) as client:
        await client.query("What is 2 + 2?")
        return [m async for m in client.receive_response()]


def _init(messages: list) -> dict:
    return next(m.data for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")


async def test_agents_from_code_are_in_the_init_message_of_query_and_client(tmp_path):
    agents = {f"large-agent-{i}": AgentDefinition(description=f"Large test agent #{i}",
                                                  prompt="x" * 13 * 1024) for i in range(20)}
    options = FuxiAgentOptions(model=ScriptedModel([[text("4")], [text("4")]]), cwd=tmp_path,
                               agents=agents, max_turns=1)
    from_query = [m async for m in query(prompt="What is 2 + 2?", options=options)]
    from_client = await _client_messages(options)
    for messages in (from_query, from_client):
        assert set(agents) <= set(_init(messages)["agents"])


async def test_agents_in_the_project_folder_load_and_the_run_answers(tmp_path):
    _agent_file(tmp_path)
    options = FuxiAgentOptions(model=ScriptedModel([[text("Hello there, friend")]]),
                               cwd=tmp_path, setting_sources=["project"], max_turns=1)
    messages = await _client_messages(options)
    kinds = {type(m).__name__ for m in messages}
    assert {"SystemMessage", "AssistantMessage", "ResultMessage"} <= kinds
    assert "fs-test-agent" in _init(messages)["agents"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Hello there, friend"
    assert any(isinstance(m, AssistantMessage) for m in messages)


@pytest.mark.parametrize(("sources", "style"), [
    (None, "local-test-style"),
    (["user", "project", "local"], "local-test-style"),
    (["user", "project"], "default"),
    (["user"], "default"),
])
async def test_the_local_settings_output_style_follows_the_setting_sources(tmp_path, sources,
                                                                          style):
    (tmp_path / ".fuxi").mkdir()
    (tmp_path / ".fuxi" / "settings.local.json").write_text('{"outputStyle": "local-test-style"}')
    options = FuxiAgentOptions(model=ScriptedModel([[text("4")]]), cwd=tmp_path,
                               setting_sources=sources, max_turns=1)
    init = _init(await _client_messages(options))
    assert init["output_style"] == style
    assert "local-test-style" not in init["available_output_styles"]  # reported, not invented


async def test_user_only_sources_leave_out_the_projects_commands(tmp_path):
    folder = tmp_path / ".fuxi" / "commands"
    folder.mkdir(parents=True)
    (folder / "testcmd.md").write_text("---\ndescription: Test command\n---\n\nA test command.\n")
    for sources, offered in ((["user"], False), (["project"], True)):
        options = FuxiAgentOptions(model=ScriptedModel([[text("4")]]), cwd=tmp_path,
                                   setting_sources=sources, max_turns=1)
        commands = _init(await _client_messages(options))["slash_commands"]
        assert ("testcmd" in commands) is offered, (sources, commands)
