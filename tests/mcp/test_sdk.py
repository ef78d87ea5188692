"""In-process servers from `@tool` and `create_sdk_mcp_server`, as users write them."""

from __future__ import annotations

import base64
import subprocess
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pytest

from fuxi_notebook._internal.mcp_servers import McpServers, create_sdk_mcp_server, tool
from fuxi_notebook._internal.mcp_servers.schema import input_json_schema
from fuxi_notebook._internal.mcp_servers.tool_search import SETTING

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


@pytest.fixture(autouse=True)
def _no_deferral(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "never")


@tool("add", "Add two numbers", {"a": float, "b": float},
      annotations={"readOnlyHint": True})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["a"] / args["b"])}]}


@tool("refuse", "Says no", {})
async def refuse(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "no"}], "is_error": True}


@tool("thread_name", "Where a sync handler runs", {}, annotations={"read_only_hint": True})
def thread_name(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": threading.current_thread().name}]}


@tool("shapes", "Every kind of content", {})
async def shapes(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [
        {"type": "text", "text": "intro"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "the notes"}},
        {"type": "resource", "resource": {"uri": "file:///x.bin", "blob": "AAAA",
                                          "mimeType": "application/octet-stream"}},
        {"type": "resource_link", "uri": "file:///big.csv", "name": "big.csv",
         "description": "a large table"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
    ], "structuredContent": {"rows": 3}}


@tool("only_structured", "Structured content, no blocks", {"n": int})
async def only_structured(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [], "structured_content": {"double": args["n"] * 2}}


@pytest.fixture
async def servers(tmp_path: Path):
    calc = create_sdk_mcp_server("calculator", version="2.0.0",
                                 tools=[add, divide, refuse, thread_name, shapes,
                                        only_structured])
    servers = McpServers({"calc": calc}, cwd=tmp_path)
    await servers.start()
    yield servers
    await servers.close()


async def test_listing_status_and_kinds(servers: McpServers) -> None:
    [status] = servers.status()
    assert status["status"] == "connected"
    assert status["serverInfo"] == {"name": "calculator", "version": "2.0.0"}
    tools = {t.name: t for t in servers.tools()}
    assert tools["mcp__calc__add"].kind == "read"
    assert tools["mcp__calc__thread_name"].kind == "read"  # snake_case hint accepted
    assert tools["mcp__calc__divide"].kind == "execute"
    assert tools["mcp__calc__add"].input_schema == {
        "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]}


async def test_calls_validation_and_errors(servers: McpServers) -> None:
    out = await servers.call("calc", "add", {"a": 1, "b": 2.5})
    assert (out.content, out.is_error) == ("3.5", False)
    out = await servers.call("calc", "add", {"a": "one"})
    assert out.is_error and "Invalid input for tool 'add'" in out.content
    assert "'b' is a required property" in out.content
    out = await servers.call("calc", "divide", {"a": 1, "b": 0})
    assert out.is_error and "ZeroDivisionError" in out.content
    out = await servers.call("calc", "nope", {})
    assert out.is_error and "Unknown tool: nope" in out.content
    out = await servers.call("calc", "refuse", {})
    assert (out.content, out.is_error) == ("no", True)


async def test_a_sync_handler_runs_off_the_event_loop(servers: McpServers) -> None:
    out = await servers.call("calc", "thread_name", {})
    assert out.content != threading.current_thread().name


async def test_content_is_converted(servers: McpServers) -> None:
    out = await servers.call("calc", "shapes", {})
    blocks = out.content
    assert isinstance(blocks, list)
    assert blocks[0] == {"type": "text", "text": "intro"}
    assert blocks[1]["type"] == "image" and blocks[1]["source"]["media_type"] == "image/png"
    texts = [b["text"] for b in blocks[2:]]
    assert texts[0] == "the notes"
    assert "file:///x.bin" in texts[1] and "left out" in texts[1]
    assert texts[2] == "[resource link: big.csv <file:///big.csv>, a large table]"
    assert "audio" in texts[3] and "left out" in texts[3]
    assert texts[4] == 'structured content:\n{"rows": 3}'


async def test_structured_content_alone_is_sent_as_json(servers: McpServers) -> None:
    out = await servers.call("calc", "only_structured", {"n": 21})
    assert out.content == '{"double": 42}'


async def test_calls_run_concurrently_and_an_interrupted_call_is_cancelled(
        tmp_path: Path) -> None:
    import asyncio

    released, entered, stopped = asyncio.Event(), asyncio.Event(), asyncio.Event()

    @tool("wait", "Waits until released", {}, annotations={"readOnlyHint": True})
    async def wait(args: dict[str, Any]) -> dict[str, Any]:
        await released.wait()
        return {"content": [{"type": "text", "text": "released"}]}

    @tool("release", "Releases the waiter", {}, annotations={"readOnlyHint": True})
    async def release(args: dict[str, Any]) -> dict[str, Any]:
        released.set()
        return {"content": [{"type": "text", "text": "done"}]}

    @tool("forever", "Never returns", {})
    async def forever(args: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {"content": []}

    servers = McpServers({"c": create_sdk_mcp_server("c", tools=[wait, release, forever])},
                         cwd=tmp_path)
    await servers.start()
    # one call waits for the other: served one at a time, this would never finish
    first, second = await asyncio.gather(servers.call("c", "wait", {}),
                                         servers.call("c", "release", {}))
    assert (first.content, second.content) == ("released", "done")
    running = asyncio.get_running_loop().create_task(servers.call("c", "forever", {}))
    await entered.wait()
    running.cancel()  # the user interrupts
    with pytest.raises(asyncio.CancelledError):
        await running
    await stopped.wait()  # the handler was cancelled too
    assert (await servers.call("c", "release", {})).content == "done"
    await servers.close()


class Point(TypedDict):
    x: int
    label: NotRequired[str]


def test_input_schema_forms() -> None:
    schema = input_json_schema({
        "name": str, "count": int, "ratio": float, "on": bool, "tags": list[str],
        "meta": dict, "maybe": int | None, "mode": Literal["a", "b"],
        "note": Annotated[str, "what it is for"], "point": Point, "other": complex})
    props = schema["properties"]
    assert schema["required"] == list(props)
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["meta"] == {"type": "object"}
    assert props["maybe"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["mode"] == {"enum": ["a", "b"]}
    assert props["note"] == {"type": "string", "description": "what it is for"}
    assert props["point"]["required"] == ["x"]
    assert props["other"] == {"type": "string"}  # unknown types become strings
    assert input_json_schema(Point)["required"] == ["x"]
    full = {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}
    assert input_json_schema(full) == full


def test_import_stays_light() -> None:
    code = ("import sys, fuxi_notebook, fuxi_notebook._internal.mcp_servers as m; "
            "m.parse_mcp_servers({'a': {'command': 'x'}}); m.McpServers; m.tool; "
            "print('mcp' in sys.modules)")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    assert found.stdout.strip() == "False"
