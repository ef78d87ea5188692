"""A real stdio MCP server process: tools, results, failures, and no process left behind."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from fuxi_notebook._internal.mcp_servers import McpServers
from fuxi_notebook._internal.mcp_servers.tool_search import SETTING

from .conftest import alive, stdio_config


@pytest.fixture(autouse=True)
def _no_deferral(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "never")


@pytest.fixture
async def servers(tmp_path: Path):
    servers = McpServers({"st": stdio_config()}, cwd=tmp_path)
    await servers.start()
    yield servers
    await servers.close()


def _by_name(servers: McpServers) -> dict[str, object]:
    return {t.name: t for t in servers.tools()}


async def test_tools_are_listed_named_and_declared(servers: McpServers) -> None:
    [status] = servers.status()
    assert status["status"] == "connected"
    assert status["serverInfo"]["name"] == "test-server"
    tools = _by_name(servers)
    assert {"mcp__st__echo", "mcp__st__add", "mcp__st__get_weather"} <= set(tools)
    echo, add, weather = (tools[n] for n in ("mcp__st__echo", "mcp__st__add",
                                             "mcp__st__get_weather"))
    assert echo.kind == "read" and add.kind == "execute"  # readOnlyHint -> read
    assert weather.mcp_name == "get.weather" and weather.kind == "read"
    assert echo.input_schema["type"] == "object" and "text" in echo.input_schema["properties"]
    assert echo.always_allow({}) == "mcp__st__echo"
    info = {t["name"]: t for t in status["tools"]}
    assert info["echo"]["annotations"] == {"readOnly": True}


async def test_calls_return_text_and_errors(servers: McpServers) -> None:
    tools = _by_name(servers)
    out = await tools["mcp__st__echo"].run({"text": "hello"}, None)
    assert (out.content, out.is_error) == ("hello", False)
    out = await tools["mcp__st__add"].run({"a": 2, "b": 3}, None)
    assert out.content == "5"  # MCPServer's {"result": 5} copy is not repeated
    out = await tools["mcp__st__get_weather"].run({"city": "Oslo"}, None)
    assert out.content == "sunny in Oslo"
    out = await tools["mcp__st__fail"].run({"message": "no luck"}, None)
    assert out.is_error and "no luck" in out.content


async def test_images_good_and_mislabelled(servers: McpServers) -> None:
    tools = _by_name(servers)
    out = await tools["mcp__st__picture"].run({}, None)
    [image] = out.content
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    out = await tools["mcp__st__mislabelled"].run({}, None)
    assert "declared image/png, but its bytes are image/jpeg" in out.content


async def test_a_command_that_does_not_exist_fails_with_a_readable_error(tmp_path: Path) -> None:
    servers = McpServers({"gone": {"command": "no-such-mcp-command-here"}}, cwd=tmp_path)
    await servers.start()
    [status] = servers.status()
    assert status["status"] == "failed"
    assert status["error"] == "command not found: no-such-mcp-command-here"
    assert servers.tools() == []
    out = await servers.call("gone", "anything", {})
    assert out.is_error and "MCP server 'gone' is not running: command not found" in out.content
    await servers.close()


async def test_a_server_that_exits_at_once_reports_its_stderr(tmp_path: Path) -> None:
    servers = McpServers({"quit": stdio_config("--exit-now", "missing API token")},
                         cwd=tmp_path, start_timeout=30)
    await servers.start()
    [status] = servers.status()
    assert status["status"] == "failed"
    assert status["error"] == "the process exited with code 2; stderr: missing API token"
    await servers.close()


async def test_a_start_timeout_fails_the_server_and_stops_its_process(tmp_path: Path) -> None:
    # waits for a file nobody creates: never answers the handshake
    servers = McpServers({"stuck": stdio_config("--wait-for", str(tmp_path / "never"))},
                         cwd=tmp_path, start_timeout=0.5)
    await servers.start()
    [status] = servers.status()
    assert status["status"] == "failed" and "did not start within 0.5 s" in status["error"]
    pid = servers.pid("stuck")
    assert pid is not None and not alive(pid)


async def test_servers_start_concurrently(tmp_path: Path) -> None:
    # each server serves only once the other one has started: a sequential start hangs
    a, b = tmp_path / "a", tmp_path / "b"
    servers = McpServers({"one": stdio_config("--touch", str(a), "--wait-for", str(b)),
                          "two": stdio_config("--touch", str(b), "--wait-for", str(a))},
                         cwd=tmp_path)
    await servers.start()
    assert [s["status"] for s in servers.status()] == ["connected", "connected"]
    await servers.start()  # idempotent
    names = set(_by_name(servers))
    assert {"mcp__one__echo", "mcp__two__echo"} <= names
    await servers.close()


async def test_a_server_killed_mid_session_gives_a_clear_error(servers: McpServers) -> None:
    tools = _by_name(servers)
    pid = servers.pid("st")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    out = await tools["mcp__st__echo"].run({"text": "are you there"}, None)
    assert out.is_error
    assert out.content.startswith("MCP server 'st' is not running: ")
    [status] = servers.status()
    assert status["status"] == "failed" and status["error"] in out.content
    assert status["error"] == "the process was killed by SIGKILL"
    out = await tools["mcp__st__echo"].run({"text": "again"}, None)
    assert out.is_error and "not running" in out.content
    assert servers.tools() == []


async def test_a_server_that_dies_during_a_call_fails_that_call(servers: McpServers) -> None:
    out = await _by_name(servers)["mcp__st__crash"].run({}, None)
    assert out.is_error
    assert "the process exited with code 3" in out.content
    assert "crashing on purpose" in out.content


async def test_a_call_over_the_timeout_is_an_error(servers: McpServers,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "200")
    out = await _by_name(servers)["mcp__st__slow"].run({"seconds": 60}, None)
    assert out.is_error and "did not answer within 0.2 s" in out.content
    monkeypatch.delenv("MCP_TOOL_TIMEOUT")
    out = await _by_name(servers)["mcp__st__echo"].run({"text": "still fine"}, None)
    assert out.content == "still fine"


async def test_close_leaves_no_process_and_is_idempotent(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    servers = McpServers({"st": stdio_config("--child", str(pidfile))}, cwd=tmp_path)
    await servers.start()
    pid, child = servers.pid("st"), int(pidfile.read_text())
    assert pid is not None and alive(pid) and alive(child)
    await servers.close()
    assert not alive(pid) and not alive(child)
    await servers.close()
    out = await servers.call("st", "echo", {"text": "x"})
    assert out.is_error and "the server was closed" in out.content


async def test_a_server_ignoring_eof_and_sigterm_is_killed(tmp_path: Path) -> None:
    servers = McpServers({"st": stdio_config("--stubborn")}, cwd=tmp_path)
    await servers.start()
    pid = servers.pid("st")
    assert pid is not None and alive(pid)
    await servers.close()
    assert not alive(pid)


async def test_close_from_another_task(tmp_path: Path) -> None:
    import asyncio

    servers = McpServers({"st": stdio_config()}, cwd=tmp_path)
    await asyncio.get_running_loop().create_task(servers.start())  # as one notebook cell
    pid = servers.pid("st")
    await asyncio.get_running_loop().create_task(servers.close())  # as another
    assert pid is not None and not alive(pid)


async def test_close_now_kills_without_awaiting(tmp_path: Path) -> None:
    servers = McpServers({"st": stdio_config()}, cwd=tmp_path)
    await servers.start()
    pid = servers.pid("st")
    assert pid is not None
    servers.close_now()
    out = await servers.call("st", "echo", {"text": "x"})
    assert out.is_error and "not running" in out.content
    await servers.close()
    assert not alive(pid)


async def test_env_and_cwd_reach_the_server(tmp_path: Path) -> None:
    script = tmp_path / "envcheck.py"
    script.write_text(
        "import os, sys\n"
        "sys.stderr.write(os.environ['MCP_TEST_VALUE'] + ' ' + os.getcwd())\n"
        "sys.exit(5)\n")
    work = tmp_path / "work"
    work.mkdir()
    servers = McpServers({"e": {"command": sys.executable, "args": [str(script)],
                                "env": {"MCP_TEST_VALUE": "from-config"}, "cwd": "work"}},
                         cwd=tmp_path)
    await servers.start()
    [status] = servers.status()
    assert status["error"] == f"the process exited with code 5; stderr: from-config {work}"
