"""MCP tools and the permission rules: hints never approve, rules and the user do.

An MCP server's `readOnlyHint` makes its tool a `read` (it runs alongside other reads),
but a server chooses its own hints: in the default mode an MCP call still needs an allow
rule (`mcp__server`, `mcp__server__*`, `mcp__server__tool`) or the user's yes. Deny and
ask rules take the same forms; a bare deny removes the tools from what the model sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import types

from fuxi_notebook import FuxiAgentOptions
from fuxi_notebook._internal.common import switches
from fuxi_notebook._internal.mcp_servers.adapter import McpTool
from fuxi_notebook._internal.permissions.engine import PermissionEngine
from fuxi_notebook._internal.tools.base import ToolOutput
from fuxi_notebook._internal.tools.builtin import builtin_tools

from .test_declarations import Custom, Recorder


async def _never(server: str, tool: str, args: dict[str, Any]) -> ToolOutput:
    raise AssertionError("permission tests never call the server")


def mcp_tool(server: str, name: str, *, read_only: bool) -> McpTool:
    hints = types.ToolAnnotations(read_only_hint=True) if read_only else None
    spec = types.Tool(name=name, description=name, input_schema={"type": "object"},
                      annotations=hints)
    return McpTool(f"mcp__{server}__{name}", server, spec, _never)


TOOLS = [mcp_tool("srv", "lookup", read_only=True), mcp_tool("srv", "delete", read_only=False),
         mcp_tool("other", "lookup", read_only=True), Custom("peek", "read")]


async def decide(cwd: Path, tool: str, **options: Any) -> str:
    """"allow", "deny", or "ask" (the call reached `can_use_tool`)."""
    engine = PermissionEngine(FuxiAgentOptions(**options), cwd=cwd,
                              tools=[*builtin_tools(), *TOOLS])
    recorder = Recorder()
    engine.can_use_tool = recorder
    decision = await engine.decide(tool, {}, "toolu_1")
    return "ask" if recorder.contexts else decision.behavior


def test_the_hint_sets_the_kind() -> None:
    assert TOOLS[0].kind == "read" and TOOLS[1].kind == "execute"


async def test_a_read_only_hint_does_not_approve_a_call(tmp_path: Path) -> None:
    assert await decide(tmp_path, "mcp__srv__lookup") == "ask"
    assert await decide(tmp_path, "peek") == "allow"  # a local read tool would run
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path, tools=TOOLS)
    assert (await engine.decide("mcp__srv__lookup", {}, "t")).behavior == "deny"  # nobody asked


@pytest.mark.parametrize("tool", ["mcp__srv__lookup", "mcp__srv__delete"])
@pytest.mark.parametrize(("rule", "expected"), [
    ("mcp__srv", "allow"), ("mcp__srv__*", "allow"), ("mcp__other", "ask"),
    ("mcp__srv__unrelated", "ask")])
async def test_allow_rules_name_the_server_or_the_tool(tmp_path: Path, tool: str, rule: str,
                                                       expected: str) -> None:
    assert await decide(tmp_path, tool, allowed_tools=[rule]) == expected
    assert await decide(tmp_path, tool, allowed_tools=[tool]) == "allow"


@pytest.mark.parametrize(("mode", "lookup", "delete"), [
    ("acceptEdits", "ask", "ask"),   # MCP calls are not file edits
    ("dontAsk", "deny", "deny"),
    ("plan", "ask", "ask"),
    ("bypassPermissions", "allow", "allow")])
async def test_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, lookup: str,
                     delete: str) -> None:
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    assert await decide(tmp_path, "mcp__srv__lookup", permission_mode=mode) == lookup
    assert await decide(tmp_path, "mcp__srv__delete", permission_mode=mode) == delete


async def test_plan_mode_with_a_rule_runs_only_the_read_only_tool(tmp_path: Path) -> None:
    assert await decide(tmp_path, "mcp__srv__lookup", permission_mode="plan",
                        allowed_tools=["mcp__srv"]) == "allow"
    assert await decide(tmp_path, "mcp__srv__delete", permission_mode="plan",
                        allowed_tools=["mcp__srv"]) == "ask"


@pytest.mark.parametrize(("rule", "removed"), [
    ("mcp__srv", {"mcp__srv__lookup", "mcp__srv__delete"}),
    ("mcp__srv__*", {"mcp__srv__lookup", "mcp__srv__delete"}),
    ("mcp__srv__delete", {"mcp__srv__delete"}),
    ("mcp__*", {"mcp__srv__lookup", "mcp__srv__delete", "mcp__other__lookup"})])
async def test_deny_rules_remove_tools(tmp_path: Path, rule: str, removed: set[str]) -> None:
    engine = PermissionEngine(FuxiAgentOptions(disallowed_tools=[rule]), cwd=tmp_path,
                              tools=TOOLS)
    names = {t.name for t in TOOLS if t.name.startswith("mcp__")}
    assert {n for n in names if not engine.offered(n)} == removed
    for name in removed:  # and a call that comes anyway is denied, even with an allow
        assert await decide(tmp_path, name, disallowed_tools=[rule],
                            allowed_tools=[name]) == "deny"


async def test_a_bare_ask_rule_asks_even_when_allowed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    settings = '{"permissions": {"ask": ["mcp__srv__delete", "Read"]}}'
    assert await decide(tmp_path, "mcp__srv__delete", settings=settings,
                        allowed_tools=["mcp__srv"]) == "ask"
    assert await decide(tmp_path, "mcp__srv__delete", settings=settings,
                        permission_mode="bypassPermissions") == "ask"
    assert await decide(tmp_path, "mcp__srv__lookup", settings=settings,
                        allowed_tools=["mcp__srv"]) == "allow"
    glob = '{"permissions": {"ask": ["mcp__srv"]}}'
    assert await decide(tmp_path, "mcp__srv__lookup", settings=glob,
                        allowed_tools=["mcp__srv"]) == "ask"
    # a bare ask rule for a built-in read asks too, even inside the working directory
    (tmp_path / "a.txt").write_text("x")
    engine = PermissionEngine(FuxiAgentOptions(settings=settings), cwd=tmp_path,
                              tools=builtin_tools())
    recorder = Recorder()
    engine.can_use_tool = recorder
    await engine.decide("Read", {"file_path": "a.txt"}, "t")
    assert recorder.contexts and recorder.contexts[0].hard_ask


async def test_always_allow_adds_the_tool_rule(tmp_path: Path) -> None:
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path, tools=TOOLS)
    [update] = engine.suggestions("mcp__srv__lookup", {})
    assert [str(r) for r in update.rules or []] == ["mcp__srv__lookup"]
    engine.apply([update])
    assert (await engine.decide("mcp__srv__lookup", {}, "t")).behavior == "allow"
    assert (await engine.decide("mcp__srv__delete", {}, "t")).behavior == "deny"
