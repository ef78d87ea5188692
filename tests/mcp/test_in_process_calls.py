"""A server `create_sdk_mcp_server` made is called directly, not over MCP (issue 36,
point 4: the protocol's machinery cost as much CPU as the rest of a built-in call); a
user's own `mcp` server object is still spoken to over MCP. Timeouts, interrupts and
closing behave as over MCP."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook._internal.mcp_servers import McpServers, create_sdk_mcp_server, tool
from fuxi_notebook._internal.mcp_servers.tool_search import SETTING


@pytest.fixture(autouse=True)
def _no_deferral(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "never")


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


async def test_a_server_made_here_needs_no_mcp_client(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp

    def no_client(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an in-process server was spoken to over MCP")

    monkeypatch.setattr(mcp, "Client", no_client)
    servers = McpServers({"calc": create_sdk_mcp_server("calculator", version="2.0.0",
                                                         tools=[add])}, cwd=tmp_path)
    await servers.start()
    try:
        [status] = servers.status()
        assert status["status"] == "connected"
        assert status["serverInfo"] == {"name": "calculator", "version": "2.0.0"}
        assert [t.name for t in servers.tools()] == ["mcp__calc__add"]
        assert servers.tools()[0].runs_in_process
        out = await servers.call("calc", "add", {"a": 1, "b": 2})
        assert (out.content, out.is_error) == ("3", False)
        out = await servers.call("calc", "nope", {})
        assert out.is_error and "Unknown tool: nope" in out.content
    finally:
        await servers.close()


async def test_a_users_own_mcp_server_object_is_spoken_to_over_mcp(tmp_path: Path) -> None:
    import mcp.types as types
    from mcp.server import Server

    contexts: list[Any] = []

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(
            name="hello", description="Says hello", input_schema={"type": "object"})])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        contexts.append(ctx)
        return types.CallToolResult(content=[types.TextContent(type="text", text="hello")])

    own = Server("own", version="0.1", on_list_tools=on_list_tools,
                 on_call_tool=on_call_tool)
    servers = McpServers({"own": {"type": "sdk", "name": "own", "instance": own}},
                         cwd=tmp_path)
    await servers.start()
    try:
        out = await servers.call("own", "hello", {})
        assert out.content == "hello" and len(contexts) == 1 and contexts[0] is not None
    finally:
        await servers.close()


async def test_a_busy_sync_handler_times_out_and_a_closed_server_fails_its_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, entered, stopped = threading.Event(), asyncio.Event(), asyncio.Event()

    @tool("busy", "Blocks its worker thread", {})
    def busy(args: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return {"content": [{"type": "text", "text": "late"}]}

    @tool("forever", "Never returns", {})
    async def forever(args: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {"content": []}

    servers = McpServers({"s": create_sdk_mcp_server("s", tools=[busy, forever])},
                         cwd=tmp_path)
    await servers.start()
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "200")
    try:
        out = await servers.call("s", "busy", {})
        assert out.is_error and "did not answer within 0.2 s" in out.content
    finally:
        release.set()
    monkeypatch.delenv("MCP_TOOL_TIMEOUT")
    running = asyncio.get_running_loop().create_task(servers.call("s", "forever", {}))
    await entered.wait()
    await servers.close()
    out = await running
    assert out.is_error and "is not running: the server was closed" in out.content
    await stopped.wait()  # the handler was cancelled too
    out = await servers.call("s", "forever", {})
    assert out.is_error and "is not running" in out.content
