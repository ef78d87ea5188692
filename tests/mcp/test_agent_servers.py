"""MCP servers an AgentDefinition defines inline (`mcpServers=[{name: config}]`), as the
comparable SDK's AgentDefinition takes them: started for each call of that agent, its
tools offered to it alone, stopped when the call ends; a name entry keeps choosing among
the parent's servers. An agent file may not define one (a server is a command to run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuxi_notebook import (
    AgentDefinition,
    FuxiAgentOptions,
    ResultMessage,
    ScriptedModel,
    create_sdk_mcp_server,
    query,
    tool,
)
from fuxi_notebook.testing import text, tool_use

from ..agent.helpers import tool_results
from .conftest import alive, stdio_config


@tool("double", "Doubles a number", {"n": int})
async def double(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["n"] * 2)}]}


def _agent_call(prompt: str) -> dict[str, Any]:
    return tool_use("Agent", {"description": "a task", "prompt": prompt,
                              "subagent_type": "calc"})


def _names(request: Any) -> list[str]:
    return [t["name"] for t in request.tools]


async def _run(options: FuxiAgentOptions) -> list:
    return [m async for m in query(prompt="go", options=options)]


async def test_an_inline_server_is_the_agents_alone_and_lives_for_its_call(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    script = ScriptedModel([
        [_agent_call("double 21")],
        [tool_use("mcp__calc__double", {"n": 21})],
        [text("42")],
        [text("The agent says 42.")]])
    options = FuxiAgentOptions(
        model=script, cwd=tmp_path, allowed_tools=["mcp__calc__double", "mcp__proc__echo"],
        agents={"calc": AgentDefinition(
            description="Calculates.", prompt="You calculate.",
            mcpServers=[{"calc": create_sdk_mcp_server("calc", tools=[double])},
                        {"proc": stdio_config("--child", str(pidfile))}])})
    messages = await _run(options)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "The agent says 42."
    parent, child = script.requests[0], script.requests[1]
    assert not any(n.startswith("mcp__") for n in _names(parent))
    assert {"mcp__calc__double", "mcp__proc__echo"} <= set(_names(child))
    [doubled] = tool_results(script.requests[2].messages)
    assert doubled["content"] == "42" and not doubled.get("is_error")
    assert pidfile.exists() and not alive(int(pidfile.read_text()))  # stopped with the call
    assert "calc" not in str(messages[0].data["mcp_servers"])  # not the session's servers


async def test_a_name_entry_still_picks_among_the_parents_servers(tmp_path):
    script = ScriptedModel([[_agent_call("look")], [text("seen")], [text("done")]])
    options = FuxiAgentOptions(
        model=script, cwd=tmp_path,
        mcp_servers={"shared": create_sdk_mcp_server("shared", tools=[double]),
                     "other": create_sdk_mcp_server("other", tools=[double])},
        agents={"calc": AgentDefinition(description="Calculates.", prompt="You calculate.",
                                        mcpServers=["shared"])})
    await _run(options)
    child = _names(script.requests[1])
    assert "mcp__shared__double" in child and "mcp__other__double" not in child


async def test_an_agent_file_may_not_define_a_server(tmp_path):
    folder = tmp_path / ".fuxi" / "agents"
    folder.mkdir(parents=True)
    marker = tmp_path / "ran"
    (folder / "calc.md").write_text(
        "---\nname: calc\ndescription: Calculates.\n---\nYou calculate.\n")
    from fuxi_notebook._internal.agent.subagents import files

    real = files.parse_agent_file

    def with_inline(text_: str, *, default_name: str) -> tuple[str, AgentDefinition]:
        name, definition = real(text_, default_name=default_name)
        definition.mcpServers = [{"evil": {"command": "touch", "args": [str(marker)]}}]
        return name, definition  # what a parser reading nested front matter would give

    import pytest
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "parse_agent_file", with_inline)
        script = ScriptedModel([[_agent_call("go")], [text("stopped")]])
        await _run(FuxiAgentOptions(model=script, cwd=tmp_path, setting_sources=["project"]))
    [refused] = tool_results(script.requests[1].messages)
    assert refused["is_error"] and "only an AgentDefinition in options.agents" in str(
        refused["content"])
    assert not marker.exists() and not Path(tmp_path / "evil").exists()
