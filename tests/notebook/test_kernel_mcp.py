"""MCP servers and `@fuxi_tool` functions in `%%fuxi` cells, in a real ipykernel.

A stdio server (tests/mcp/server_script.py, a real process) is named with `--mcp-config`;
it starts once for the kernel, serves later cells without restarting, and `%fuxi reset`
stops it. A function decorated in the kernel is offered as `mcp__notebook__<name>`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fuxi_notebook.testing import Turn, text, tool_use

from ..mcp.conftest import alive
from .kernel_harness import wait_until

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server_script.py"


def _config(work: Path) -> str:
    """A server that touches `started` when it starts and keeps a child process (whose
    pid it writes to `child`), so a restart and an orphan can both be seen."""
    return json.dumps({"mcpServers": {"demo": {
        "command": sys.executable,
        "args": [str(SERVER), "--touch", str(work / "started"), "--child", str(work / "child")]}}})




def test_a_stdio_server_serves_cells_and_reset_stops_it(fresh, api):
    config = fresh.work / "servers.json"
    config.write_text(_config(fresh.work))
    api.add(Turn([tool_use("mcp__demo__add", {"a": 2, "b": 40})]), Turn([text("42")]))
    first = fresh.run("%%fuxi --mcp-config servers.json --allowed-tools mcp__demo__add\nadd")
    assert first.status == "ok", first.messages
    tools = [t["name"] for t in api.requests[0]["tools"]]
    assert {"mcp__demo__add", "mcp__demo__echo", "mcp__demo__get_weather"} <= set(tools)
    answer = api.requests[1]["messages"][-1]["content"][0]
    assert answer["type"] == "tool_result" and not answer.get("is_error")
    assert "42" in json.dumps(answer["content"])
    child = int((fresh.work / "child").read_text())
    assert alive(child)
    (fresh.work / "started").unlink()

    api.add(Turn([tool_use("mcp__demo__echo", {"text": "again"})]), Turn([text("ok")]))
    second = fresh.run("%%fuxi --mcp-config servers.json --allowed-tools mcp__demo__echo\nagain")
    assert second.status == "ok", second.messages
    assert not (fresh.work / "started").exists()  # the same process served it

    listing = fresh.run("%fuxi tools")
    table = listing.displays[0]["data"]["text/plain"]
    assert "mcp__demo__add · execute · MCP server demo" in table
    assert "mcp__demo__echo · read · MCP server demo" in table  # readOnlyHint
    assert "MCP server demo: connected" in table

    fresh.run("%fuxi reset")
    wait_until(lambda: not alive(child))  # the server's whole process group ended


def test_a_server_that_cannot_start_is_reported_and_the_cell_goes_on(fresh, api):
    api.add(Turn([text("no tools, fine")]))
    broken = json.dumps({"broken": {"command": "/no/such/server-binary"}})
    result = fresh.run(f"%%fuxi --mcp-config '{broken}'\nhello")
    assert result.status == "ok", result.messages
    assert not any(t["name"].startswith("mcp__broken") for t in api.requests[0]["tools"])
    listing = fresh.run("%fuxi tools").displays[0]["data"]["text/plain"]
    assert "MCP server broken: failed" in listing and "/no/such/server-binary" in listing


def test_a_bad_mcp_config_is_a_usage_error(fresh, api):
    result = fresh.run("%%fuxi --mcp-config '{\"x\": {\"type\": \"carrier-pigeon\"}}'\nhi")
    assert result.reply["content"]["ename"] == "UsageError"
    assert "--mcp-config" in result.reply["content"]["evalue"]
    assert "x" in result.reply["content"]["evalue"]
    assert not api.requests
    missing = fresh.run("%%fuxi --mcp-config nowhere.json\nhi")
    assert missing.reply["content"]["ename"] == "UsageError"


def test_a_kernel_function_becomes_a_tool(fresh, api):
    defined = fresh.run(
        "from fuxi_notebook import fuxi_tool\n"
        "@fuxi_tool\n"
        "def region_total(region: str, scale: int = 1) -> int:\n"
        "    '''Total sales of one region.'''\n"
        "    return {'north': 40, 'south': 2}[region] * scale\n")
    assert defined.status == "ok", defined.messages
    assert fresh.run("print(region_total('north'))").stdout.strip() == "40"
    api.add(Turn([tool_use("mcp__notebook__region_total", {"region": "south"})]),
            Turn([text("2")]))
    result = fresh.run("%%fuxi --allowed-tools mcp__notebook__region_total\nsouth?")
    assert result.status == "ok", result.messages
    offered = {t["name"]: t for t in api.requests[0]["tools"]}
    schema = offered["mcp__notebook__region_total"]["input_schema"]
    assert schema["required"] == ["region"]
    assert offered["mcp__notebook__region_total"]["description"].startswith("Total sales")
    answer = api.requests[1]["messages"][-1]["content"][0]
    assert not answer.get("is_error") and "2" in json.dumps(answer["content"])
    fresh.run("from fuxi_notebook._internal.mcp_servers.functions import forget_all; forget_all()")


def test_shutting_the_kernel_down_leaves_no_server_process(api, tmp_path):
    from .kernel_harness import KernelHarness

    kernel = KernelHarness(cwd=str(tmp_path), env={
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0001",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5"})
    try:
        assert kernel.run("%load_ext fuxi_notebook").status == "ok"
        (tmp_path / "servers.json").write_text(_config(tmp_path))
        api.reset()
        api.add(Turn([text("ok")]))
        result = kernel.run("%%fuxi --mcp-config servers.json\nhi")
        assert result.status == "ok", result.messages
        child = int((tmp_path / "child").read_text())
        assert alive(child)
        kernel._running = False
        kernel.kc.stop_channels()
        kernel.km.shutdown_kernel(now=False)  # as "Shut Down Kernel" asks it to
        wait_until(lambda: not alive(child))
    finally:
        if kernel.km.is_alive():
            kernel.close()
