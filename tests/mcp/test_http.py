"""Real HTTP MCP servers on 127.0.0.1 (streamable HTTP and HTTP+SSE), in subprocesses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fuxi_notebook._internal.mcp_servers import McpServers
from fuxi_notebook._internal.mcp_servers.tool_search import SETTING


@pytest.fixture(autouse=True)
def _no_deferral(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "never")


async def test_streamable_http_lists_and_calls(http_server: tuple[subprocess.Popen[str], str],
                                               tmp_path: Path) -> None:
    _, url = http_server
    servers = McpServers({"web": {"type": "http", "url": url,
                                  "headers": {"X-Test": "yes"}}}, cwd=tmp_path)
    await servers.start()
    [status] = servers.status()
    assert status["status"] == "connected" and status["serverInfo"]["name"] == "test-server"
    tools = {t.name: t for t in servers.tools()}
    out = await tools["mcp__web__echo"].run({"text": "over http"}, None)
    assert (out.content, out.is_error) == ("over http", False)
    assert tools["mcp__web__echo"].kind == "read"
    out = await tools["mcp__web__header"].run({"name": "X-Test"}, None)
    assert out.content == "yes"  # the configured headers are sent
    out = await tools["mcp__web__fail"].run({"message": "remote no"}, None)
    assert out.is_error and "remote no" in out.content
    await servers.close()
    await servers.close()


async def test_a_stopped_http_server_gives_a_clear_error(
        http_server: tuple[subprocess.Popen[str], str], tmp_path: Path) -> None:
    proc, url = http_server
    servers = McpServers({"web": {"type": "http", "url": url}}, cwd=tmp_path)
    await servers.start()
    proc.kill()
    proc.wait()
    out = await servers.call("web", "echo", {"text": "hello?"})
    assert out.is_error
    assert out.content.startswith(f"MCP server 'web' is not running: cannot reach {url}")
    assert servers.status()[0]["status"] == "failed"
    await servers.close()


async def test_an_unreachable_url_fails_to_start(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    servers = McpServers({"web": {"type": "http", "url": url}}, cwd=tmp_path)
    await servers.start()
    [status] = servers.status()
    assert status["status"] == "failed"
    assert status["error"].startswith(f"cannot reach {url}: ConnectError")
    await servers.close()


async def test_sse_transport(sse_server: str, tmp_path: Path) -> None:
    servers = McpServers({"old": {"type": "sse", "url": sse_server}}, cwd=tmp_path)
    await servers.start()
    assert servers.status()[0]["status"] == "connected"
    out = await servers.call("old", "add", {"a": 20, "b": 22})
    assert out.content == "42"
    await servers.close()
