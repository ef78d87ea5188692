"""MCP servers in the loop (L7): `query()` and `FuxiSDKClient` with in-process and stdio
servers, as the comparable SDK's users write them: named tools, permission rules, kinds
from annotations (read-only calls run together), init status, lifetime."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from fuxi_notebook import (
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    create_sdk_mcp_server,
    tool,
)
from fuxi_notebook._internal.models.script import text, tool_use

from ..mcp.conftest import alive
from .helpers import collect, result_text, tool_results

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server_script.py"


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args):
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args):
    if args["b"] == 0:
        return {"content": [{"type": "text", "text": "Error: division by zero"}],
                "is_error": True}
    return {"content": [{"type": "text", "text": str(args["a"] / args["b"])}]}


def _calc() -> dict:
    return create_sdk_mcp_server("calculator", tools=[add, divide])


async def test_an_in_process_tool_is_called_under_its_mcp_name(tmp_path):
    model = ScriptedModel([[tool_use("mcp__calc__add", {"a": 2, "b": 40})], [text("42")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={"calc": _calc()},
                               allowed_tools=["mcp__calc__add"])
    messages, error = await collect("add", options)
    assert error is None
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["mcp_servers"] == [{"name": "calc", "status": "connected"}]
    assert {"mcp__calc__add", "mcp__calc__divide"} <= set(init.data["tools"])
    (result,) = tool_results(model.requests[1].messages)
    assert not result.get("is_error") and result_text(result) == "42"


async def test_tool_errors_come_back_as_is_error_results(tmp_path):
    model = ScriptedModel([[tool_use("mcp__calc__divide", {"a": 1, "b": 0})],
                           [tool_use("mcp__calc__divide", {"a": "one", "b": 2})],
                           [text("cannot")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={"calc": _calc()},
                               allowed_tools=["mcp__calc"])  # the whole server
    messages, _ = await collect("divide", options)
    (zero,) = tool_results(model.requests[1].messages)
    assert zero["is_error"] and "division by zero" in result_text(zero)
    (bad,) = tool_results(model.requests[2].messages)
    assert bad["is_error"] and "a" in result_text(bad)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"


async def test_an_mcp_tool_asks_unless_a_rule_allows_it(tmp_path):
    asked: list[str] = []

    async def decide(name, tool_input, context):
        from fuxi_notebook import PermissionResultDeny

        asked.append(name)
        return PermissionResultDeny(message="not now")

    model = ScriptedModel([[tool_use("mcp__calc__add", {"a": 1, "b": 1})], [text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={"calc": _calc()},
                               can_use_tool=decide)
    await collect("add", options)
    assert asked == ["mcp__calc__add"]
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"] and "not now" in result_text(result)


async def test_a_deny_rule_for_the_server_removes_its_tools(tmp_path):
    model = ScriptedModel([[text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={"calc": _calc()},
                               disallowed_tools=["mcp__calc"])
    messages, _ = await collect("hi", options)
    assert not [t for t in messages[0].data["tools"] if t.startswith("mcp__calc")]
    assert not [t for t in model.requests[0].tools if t["name"].startswith("mcp__")]


async def test_read_only_tools_run_together(tmp_path):
    both_in = asyncio.Event()
    inside = 0

    async def look(args):
        nonlocal inside
        inside += 1
        if inside == 2:
            both_in.set()
        await asyncio.wait_for(both_in.wait(), 10)  # only if the other call runs too
        return {"content": [{"type": "text", "text": args["what"]}]}

    looker = tool("look", "Look at something", {"what": str},
                  annotations={"readOnlyHint": True})(look)
    server = create_sdk_mcp_server("eyes", tools=[looker])
    model = ScriptedModel([[tool_use("mcp__eyes__look", {"what": "a"}),
                            tool_use("mcp__eyes__look", {"what": "b"})], [text("seen")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={"eyes": server},
                               allowed_tools=["mcp__eyes__look"])
    await collect("look twice", options)
    results = tool_results(model.requests[1].messages)
    assert [result_text(r) for r in results] == ["a", "b"]
    assert not any(r.get("is_error") for r in results)


async def _ended(pid: int) -> bool:
    """Whether `pid` is gone within 10 s (the process group is killed asynchronously)."""
    for _ in range(200):
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


def _stdio(tmp_path: Path) -> dict:
    return {"command": sys.executable,
            "args": [str(SERVER), "--child", str(tmp_path / "child")]}




async def test_a_client_keeps_a_stdio_server_across_queries_and_stops_it(tmp_path):
    model = ScriptedModel([[tool_use("mcp__demo__add", {"a": 1, "b": 2})], [text("3")],
                           [tool_use("mcp__demo__echo", {"text": "hi"})], [text("hi")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path,
                               mcp_servers={"demo": _stdio(tmp_path)},
                               allowed_tools=["mcp__demo__*"])
    async with FuxiSDKClient(options) as client:
        status = await client.get_mcp_status()
        (demo,) = status["mcpServers"]
        assert demo["status"] == "connected" and demo["serverInfo"]["name"] == "test-server"
        child = int((tmp_path / "child").read_text())
        for prompt in ("add", "echo"):
            await client.query(prompt)
            async for message in client.receive_response():
                last = message
            assert isinstance(last, ResultMessage) and last.subtype == "success"
        assert result_text(tool_results(model.requests[1].messages)[0]) == "3"
        assert result_text(tool_results(model.requests[3].messages)[0]) == "hi"
        assert alive(child)  # one server for both queries
    assert await _ended(child)  # disconnect killed the server's process group


async def test_a_server_that_fails_is_in_the_init_message_and_the_run_goes_on(tmp_path):
    model = ScriptedModel([[text("fine")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers={
        "gone": {"command": sys.executable, "args": [str(SERVER), "--exit-now", "no db"]}})
    messages, error = await collect("hi", options)
    assert error is None
    (gone,) = messages[0].data["mcp_servers"]
    assert gone["name"] == "gone" and gone["status"] == "failed" and "no db" in gone["error"]


async def test_a_client_switches_a_server_off_and_on_and_restarts_it(tmp_path):
    from fuxi_notebook.errors import ConfigurationError

    model = ScriptedModel([[tool_use("mcp__demo__echo", {"text": "a"})], [text("off")],
                           [tool_use("mcp__demo__echo", {"text": "b"})], [text("on")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["mcp__demo"],
                               mcp_servers={"demo": _stdio(tmp_path)})

    async def ask(client, prompt):
        await client.query(prompt)
        return [m async for m in client.receive_response()]

    async with FuxiSDKClient(options) as client:
        first = int((tmp_path / "child").read_text())
        await client.toggle_mcp_server("demo", False)
        assert (await client.get_mcp_status())["mcpServers"] == [
            {"name": "demo", "status": "disabled"}]
        await ask(client, "echo a")
        (off,) = tool_results(model.requests[1].messages)
        assert off["is_error"] and "disabled" in result_text(off)
        assert await _ended(first)  # switching off stopped the process group
        await client.toggle_mcp_server("demo", True)
        await ask(client, "echo b")
        (on,) = tool_results(model.requests[3].messages)
        assert result_text(on) == "b"
        second = int((tmp_path / "child").read_text())
        await client.reconnect_mcp_server("demo")
        assert int((tmp_path / "child").read_text()) != second  # a new process
        assert (await client.get_mcp_status())["mcpServers"][0]["status"] == "connected"
        try:
            await client.reconnect_mcp_server("nope")
        except ConfigurationError as error:
            assert "demo" in str(error)
        else:
            raise AssertionError("an unknown server must be refused")


async def test_client_methods_without_a_meaning_here_say_why(tmp_path):
    import pytest

    from fuxi_notebook.errors import ConfigurationError

    async with FuxiSDKClient(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path)) as client:
        with pytest.raises(ConfigurationError, match="no background task 't1'"):
            await client.stop_task("t1")
        with pytest.raises(ConfigurationError, match="checkpointing"):
            await client.rewind_files("m1")
        with pytest.raises(ConfigurationError, match="no MCP server 'x'"):
            await client.toggle_mcp_server("x", False)


async def test_the_tools_option_narrows_built_ins_not_mcp_tools(tmp_path):
    model = ScriptedModel([[text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, tools=[],
                               mcp_servers={"calc": _calc()})
    messages, _ = await collect("hi", options)
    assert sorted(messages[0].data["tools"]) == ["mcp__calc__add", "mcp__calc__divide"]


def test_a_script_that_never_disconnects_leaves_no_server_behind(tmp_path):
    import os
    import subprocess
    import time

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "forgets.py"
    script.write_text(
        "import asyncio, sys\n"
        "from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, ScriptedModel\n"
        "async def main():\n"
        "    options = FuxiAgentOptions(model=ScriptedModel([]), mcp_servers={'demo': {\n"
        f"        'command': sys.executable, 'args': [{str(SERVER)!r}, '--child',\n"
        f"        {str(tmp_path / 'child')!r}]}}}})\n"
        "    client = FuxiSDKClient(options)\n"
        "    await client.connect()  # and never disconnect()\n"
        "loop = asyncio.new_event_loop()\n"
        "loop.run_until_complete(main())\n"
        "sys.exit(0)  # the loop is left as it is: nothing cancels the server's task\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    child = int((tmp_path / "child").read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:  # evidence: the pid is gone
        time.sleep(0.05)
    assert not alive(child)
