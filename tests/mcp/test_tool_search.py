"""Tool search: when MCP tools are deferred, ToolSearch's answer, and the wire accepting it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions, ResultMessage
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.mcp_servers import McpServers, create_sdk_mcp_server, tool
from fuxi_notebook._internal.mcp_servers.tool_search import (
    DEFER_MIN_CHARS,
    DEFER_MIN_TOOLS,
    SETTING,
    TOOL_SEARCH,
    ToolSearchTool,
    should_defer,
    with_tool_search,
)
from fuxi_notebook._internal.tools.registry import ToolRegistry
from fuxi_notebook.testing import Turn, text, tool_use


class Fake:
    """A stand-in MCP tool: what tool search reads."""

    def __init__(self, name: str, description: str = "", size: int = 0) -> None:
        self.name, self.mcp_name = name, name.rsplit("__", 1)[-1]
        self.description = description + " " * size
        self.input_schema: dict[str, Any] = {"type": "object"}
        self.defer_loading = False


def fakes(count: int) -> list[Fake]:
    return [Fake(f"mcp__s__tool_{i:02d}", f"tool number {i}") for i in range(count)]


def test_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING, raising=False)
    assert not should_defer(fakes(DEFER_MIN_TOOLS))
    assert should_defer(fakes(DEFER_MIN_TOOLS + 1))
    assert should_defer([Fake("mcp__s__big", size=DEFER_MIN_CHARS)])
    assert not should_defer([])
    assert should_defer(fakes(1), "always") and not should_defer(fakes(50), "never")
    assert should_defer(fakes(4), "3") and not should_defer(fakes(3), "3")
    monkeypatch.setenv(SETTING, "always")
    assert should_defer(fakes(1))


def test_deferred_tools_are_sent_with_defer_loading() -> None:
    offered = with_tool_search(fakes(3), "always")
    assert offered[-1].name == TOOL_SEARCH and offered[-1].kind == "read"
    definitions = ToolRegistry(offered).definitions()
    assert [d.get("defer_loading") for d in definitions] == [True, True, True, None]
    plain = with_tool_search(fakes(3), "never")
    assert all("defer_loading" not in d for d in ToolRegistry(plain).definitions())


async def test_search_answers_with_tool_references() -> None:
    tools = [Fake("mcp__gh__create_issue", "Create a GitHub issue"),
             Fake("mcp__gh__list_issues", "List issues of a repository"),
             Fake("mcp__slack__send", "Send a Slack message about an issue")]
    search = ToolSearchTool(tools)
    assert "mcp__gh__create_issue" in search.description
    out = await search.run({"query": "create issue"}, None)  # type: ignore[arg-type]
    names = [b["tool_name"] for b in out.content]
    assert names[0] == "mcp__gh__create_issue" and set(names) == {t.name for t in tools}
    assert all(b["type"] == "tool_reference" for b in out.content)
    out = await search.run({"query": "issue", "max_results": 1}, None)  # type: ignore[arg-type]
    assert len(out.content) == 1
    out = await search.run({"query": "select:mcp__slack__send, list_issues, nope"},
                           None)  # type: ignore[arg-type]
    assert [b["tool_name"] for b in out.content] == ["mcp__slack__send",
                                                     "mcp__gh__list_issues"]
    out = await search.run({"query": "weather"}, None)  # type: ignore[arg-type]
    assert isinstance(out.content, str) and "No deferred tool matches" in out.content


def _many_tools() -> list[Any]:
    def make(number: int) -> Any:
        @tool(f"tool_{number:02d}", f"Tool number {number} of a large set", {"x": int})
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": f"tool {number} got {args['x']}"}]}

        return handler

    return [make(n) for n in range(DEFER_MIN_TOOLS + 5)]


async def test_a_run_through_the_fake_api_loads_a_deferred_tool(
        fake_api: Any, wire_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING, raising=False)
    servers = McpServers({"big": create_sdk_mcp_server("big", tools=_many_tools())},
                         cwd=tmp_path)
    await servers.start()
    fake_api.add(Turn([tool_use(TOOL_SEARCH, {"query": "select:mcp__big__tool_07"})]),
                 Turn([tool_use("mcp__big__tool_07", {"x": 5})]),
                 Turn([text("done")]))
    session = build_session(FuxiAgentOptions(model=wire_model, cwd=tmp_path,
                                       allowed_tools=["mcp__big"]),
                      extra_tools=servers.tools())
    messages = [m async for m in run_prompt(Run(session), "use tool 7")]
    await servers.close()
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    assert fake_api.errors == []
    first, second, third = fake_api.requests
    deferred = {t["name"]: t.get("defer_loading", False) for t in first["tools"]}
    assert deferred[TOOL_SEARCH] is False and deferred["Read"] is False
    assert all(deferred[f"mcp__big__tool_{n:02d}"] for n in range(DEFER_MIN_TOOLS + 5))
    [search_result] = [b for b in second["messages"][-1]["content"]
                       if b["type"] == "tool_result"]
    assert search_result["content"] == [{"type": "tool_reference",
                                         "tool_name": "mcp__big__tool_07"}]
    [call_result] = [b for b in third["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "tool 7 got 5" in json.dumps(call_result["content"])
    assert first["tools"] == third["tools"]  # the tool list, and so the cache prefix, holds


def _post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    request = urllib.request.Request(f"{url}/v1/messages", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json",
                                              "x-api-key": "test-key"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _body(reference: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-sonnet-5-5", "max_tokens": 100, "tools": tools, "messages": [
        {"role": "user", "content": "find the tool"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                           "name": TOOL_SEARCH, "input": {"query": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "tool_reference",
                                                   "tool_name": reference}]}]}]}


TOOLS = [{"name": TOOL_SEARCH, "description": "search", "input_schema": {"type": "object"}},
         {"name": "mcp__s__x", "description": "x", "input_schema": {"type": "object"},
          "defer_loading": True}]


def test_the_fake_api_checks_tool_references_and_deferral(fake_api: Any) -> None:
    fake_api.add(Turn([text("ok")]))
    status, _ = _post(fake_api.url, _body("mcp__s__x", TOOLS))
    assert status == 200
    status, answer = _post(fake_api.url, _body("mcp__s__unknown", TOOLS))
    assert status == 400 and "'mcp__s__unknown', which is not among the request's tools" in (
        answer)
    all_deferred = [{**t, "defer_loading": True} for t in TOOLS]
    status, answer = _post(fake_api.url, _body("mcp__s__x", all_deferred))
    assert status == 400 and "at least one tool must not have defer_loading" in answer
    bad_name = [*TOOLS, {"name": "get.weather", "input_schema": {"type": "object"}}]
    status, answer = _post(fake_api.url, _body("mcp__s__x", bad_name))
    assert status == 400 and "tools.2.name" in answer
