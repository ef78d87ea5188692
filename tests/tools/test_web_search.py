"""WebSearch through the real `anthropic` client against the fake Messages API server.

The fake streams server tool blocks as the API does (`server_tool_use` input as JSON
deltas, `web_search_tool_result` whole in its `content_block_start`, citations as
`citations_delta`), and rejects a search tool given both domain lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions, PermissionResultDeny
from fuxi_notebook._internal.common import switches
from fuxi_notebook._internal.models.base import ModelRequest
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook._internal.models.wire_check import request_problem
from fuxi_notebook._internal.permissions.engine import PermissionEngine
from fuxi_notebook._internal.tools.base import ToolContext, ToolError
from fuxi_notebook._internal.tools.web.fetch_tool import web_tools
from fuxi_notebook._internal.tools.web.search import WebSearchTool, merge_domains
from fuxi_notebook.errors import ConfigurationError, ModelError
from fuxi_notebook.testing import Fault, Turn, text

MODEL = "claude-sonnet-5-5"
RELEASE = "https://www.python.org/downloads/release/python-3140/"
NEWS = "https://docs.python.org/3/whatsnew/3.14.html"


def search_call(query: str, id: str = "srvtoolu_01") -> dict[str, Any]:
    return {"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}}


def results(tool_use_id: str = "srvtoolu_01") -> dict[str, Any]:
    return {"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": [
        {"type": "web_search_result", "title": "Python Release Python 3.14.0", "url": RELEASE,
         "encrypted_content": "EqgfCioIARgBIiQ3YTAw", "page_age": "October 7, 2025"},
        {"type": "web_search_result", "title": "What's new in Python 3.14", "url": NEWS,
         "encrypted_content": "EpoBCioIARgBIiQ5ZjIw"}]}


def cited(value: str, url: str, title: str) -> dict[str, Any]:
    return {"type": "text", "text": value, "citations": [
        {"type": "web_search_result_location", "url": url, "title": title,
         "encrypted_index": "Eo8BCioIAhgBIiQy", "cited_text": "Python 3.14.0 ..."}]}


def answer_turn(**usage: Any) -> Turn:
    return Turn([text("I'll search for that."), search_call("python 3.14 release date"),
                 results(), text("Python 3.14.0 was released "),
                 cited("on October 7, 2025", RELEASE, "Python Release Python 3.14.0"),
                 text(".")],
                usage={"output_tokens": 40, "server_tool_use": {"web_search_requests": 1},
                       **usage})


class Usage:
    """An `add_usage` that records what it is given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, model: str, usage: dict[str, Any]) -> None:
        self.calls.append((model, usage))


def search_tool(model: Any, usage: Usage | None = None, **kw: Any) -> WebSearchTool:
    return WebSearchTool(lambda: (model, MODEL), usage or Usage(), **kw)


async def run(tool: WebSearchTool, **input: Any):
    return await tool.run(input, ToolContext(cwd=Path.cwd()))


async def test_search_sends_the_server_tool_and_returns_results_and_cited_summary(
        fake_api, wire_model):
    fake_api.add(answer_turn())
    usage = Usage()
    out = await run(search_tool(wire_model, usage), query=" python 3.14 release ",
                    allowed_domains=["Python.org/"])
    (request,) = fake_api.requests
    assert request["model"] == MODEL and request["stream"] is True
    assert request["tools"] == [{"type": "web_search_20250305", "name": "web_search",
                                 "max_uses": 5, "allowed_domains": ["python.org"]}]
    assert request["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Search the web for: python 3.14 release"}]}]
    assert "web_search tool" in request["system"][0]["text"]
    assert out.content == "\n".join([
        "Web search: 'python 3.14 release'",
        "Searches run: 'python 3.14 release date'",
        "",
        "Results:",
        f"1. [Python Release Python 3.14.0]({RELEASE}) (October 7, 2025)",
        f"2. [What's new in Python 3.14]({NEWS})",
        "",
        "Summary:",
        "I'll search for that.",
        "",
        "Python 3.14.0 was released on October 7, 2025[1].",
        "",
        "Use WebFetch with one of these URLs to read a page."])
    assert not out.is_error
    ((model, counted),) = usage.calls
    assert model == MODEL and counted["output_tokens"] == 40
    assert counted["server_tool_use"] == {"web_search_requests": 1}
    assert counted["input_tokens"] == fake_api.usage_log[0]["input_tokens"]


async def test_both_domain_lists_are_refused_before_sending(fake_api, wire_model):
    with pytest.raises(ToolError, match="cannot be used together"):
        await run(search_tool(wire_model), query="news", allowed_domains=["a.com"],
                  blocked_domains=["b.com"])
    assert fake_api.requests == []


async def test_session_domains_are_merged_into_every_search(fake_api, wire_model):
    fake_api.add(answer_turn(), answer_turn())
    blocking = search_tool(wire_model, blocked_domains=["pinterest.com"])
    await run(blocking, query="cats", blocked_domains=["reddit.com", "pinterest.com"])
    limited = search_tool(wire_model, allowed_domains=["python.org"])
    await run(limited, query="release", allowed_domains=["docs.python.org"])
    first, second = (r["tools"][0] for r in fake_api.requests)
    assert first["blocked_domains"] == ["pinterest.com", "reddit.com"]
    assert "allowed_domains" not in first
    assert second["allowed_domains"] == ["docs.python.org"]
    with pytest.raises(ToolError, match="among the domains this session allows"):
        await run(limited, query="release", allowed_domains=["example.com"])
    assert len(fake_api.requests) == 2


def test_merge_domains():
    assert merge_domains((None, None), (None, None)) == (None, None)
    assert merge_domains((["python.org"], None), (None, ["ads.com"])) == (["python.org"], None)
    assert merge_domains((None, ["x.com"]), (["a.org", "x.com", "m.x.com"], None)) == (
        ["a.org"], None)
    with pytest.raises(ToolError, match=r"blocking docs\.python\.org"):
        merge_domains((["python.org"], None), (None, ["docs.python.org"]))
    with pytest.raises(ToolError, match="Every allowed domain"):
        merge_domains((None, ["python.org"]), (["docs.python.org"], None))


def test_session_domain_configuration_is_checked():
    with pytest.raises(ConfigurationError, match="not both"):
        WebSearchTool(lambda: (None, MODEL), Usage(), allowed_domains=["a.com"],  # type: ignore
                      blocked_domains=["b.com"])
    with pytest.raises(ConfigurationError, match="not a domain"):
        WebSearchTool(lambda: (None, MODEL), Usage(), allowed_domains=["a b"])  # type: ignore


async def test_search_errors_without_results_are_an_error(fake_api, wire_model):
    fake_api.add(Turn([search_call("q"), {
        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
        "content": {"type": "web_search_tool_result_error", "error_code": "too_many_requests"}}]))
    usage = Usage()
    with pytest.raises(ToolError, match=r"(?s)found nothing.*too_many_requests"):
        await run(search_tool(wire_model, usage), query="anything")
    assert len(usage.calls) == 1  # the request still costs


async def test_api_failure_is_a_tool_error(fake_api, wire_model):
    fake_api.add(Fault(status=400, message="bad search", headers={"x-should-retry": "false"}))
    with pytest.raises(ToolError, match="web search request failed: API error 400"):
        await run(search_tool(wire_model), query="anything")


async def test_paused_turn_is_continued_and_each_request_counted(fake_api, wire_model):
    fake_api.add(Turn([search_call("first")], stop_reason="pause_turn"),
                 Turn([results(), text("Done.")]))
    usage = Usage()
    out = await run(search_tool(wire_model, usage), query="two steps")
    first, second = fake_api.requests
    assert second["tools"] == first["tools"] and second["messages"][0] == first["messages"][0]
    assert second["messages"][1]["role"] == "assistant"
    assert second["messages"][1]["content"][0]["type"] == "server_tool_use"
    assert second["messages"][1]["content"][0]["input"] == {"query": "first"}
    assert "Summary:\nDone." in out.content and RELEASE in out.content
    assert len(usage.calls) == 2


async def test_scripted_model_streams_server_blocks_the_same_way():
    model = ScriptedModel([answer_turn()], name=MODEL)
    out = await run(search_tool(model), query="python 3.14")
    assert "[1]" in out.content and RELEASE in out.content
    (request,) = model.requests
    assert request.tools[0]["type"] == "web_search_20250305"


def test_turn_events_stream_server_blocks_as_the_api_does():
    from fuxi_notebook._internal.models.script import turn_events

    events = turn_events(answer_turn(), message_id="m", model=MODEL, usage={},
                         tool_ids=lambda: "toolu_x")
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert starts[1] == {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
                         "input": {}}
    assert starts[2] == results()  # the whole result block at once
    deltas = [e["delta"]["type"] for e in events if e["type"] == "content_block_delta"
              and e["index"] == 4]
    assert deltas[-1] == "citations_delta"
    unnamed = turn_events(Turn([{"type": "server_tool_use", "name": "web_search",
                                 "input": {}}]), message_id="m", model=MODEL, usage={},
                          tool_ids=lambda: "toolu_7")
    assert unnamed[1]["content_block"]["id"] == "srvtoolu_7"


def test_wire_check_rejects_what_the_api_rejects_for_server_tools():
    def problem(tool: dict[str, Any]) -> str | None:
        found = request_problem({"messages": [{"role": "user", "content": "hi"}],
                                 "tools": [tool]})
        return found and found[1]

    search = {"type": "web_search_20250305", "name": "web_search"}
    assert problem(search) is None
    assert problem({**search, "allowed_domains": ["a"], "blocked_domains": ["b"]})
    assert "does not match any of the expected tags" in problem(
        {"type": "web_search_2025", "name": "web_search"})
    assert "should be 'web_search'" in problem({**search, "name": "search"})
    assert "greater than 0" in problem({**search, "max_uses": 0})


async def test_fake_server_rejects_both_domain_lists(fake_api, wire_model):
    tool = {"type": "web_search_20250305", "name": "web_search",
            "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}
    request = ModelRequest(model=MODEL, max_tokens=100, tools=[tool],
                           messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(ModelError, match="400"):
        async for _ in wire_model.stream(request):
            pass


# --- declaration and permissions ----------------------------------------------------------


async def decide(tmp_path: Path, **options: Any) -> str:
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        return PermissionResultDeny(message="no")

    tools = web_tools(lambda: (None, MODEL), Usage())  # type: ignore[arg-type]
    engine = PermissionEngine(FuxiAgentOptions(**options), cwd=tmp_path, tools=tools)
    engine.can_use_tool = can_use_tool
    decision = await engine.decide("WebSearch", {"query": "news"}, "toolu_1")
    return "ask" if asked else decision.behavior


@pytest.mark.parametrize("options, expected", [
    ({}, "ask"),
    ({"permission_mode": "acceptEdits"}, "ask"),
    ({"permission_mode": "plan"}, "ask"),
    ({"allowed_tools": ["WebFetch(domain:*)"]}, "ask"),
    ({"allowed_tools": ["WebSearch"]}, "allow"),
    ({"permission_mode": "bypassPermissions"}, "allow"),
    ({"permission_mode": "dontAsk"}, "deny"),
    ({"allowed_tools": ["WebSearch"], "disallowed_tools": ["WebSearch"]}, "deny"),
])
async def test_web_search_asks_unless_a_rule_or_bypass_allows_it(tmp_path, monkeypatch,
                                                                 options, expected):
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    assert await decide(tmp_path, **options) == expected


def test_declaration():
    tool = search_tool(None)
    assert tool.kind == "network" and tool.always_allow({"query": "x"}) == "WebSearch"
    assert tool.reach({"query": "x"}).url is None and not tool.reach({"query": "x"}).paths


def test_each_web_search_is_priced_on_top_of_the_tokens():
    from fuxi_notebook._internal.models.pricing import WEB_SEARCH_USD, cost_usd

    tokens = {"input_tokens": 1_000, "output_tokens": 100}
    plain = cost_usd("claude-sonnet-5-5", tokens)
    searched = cost_usd("claude-sonnet-5-5", {**tokens,
                                              "server_tool_use": {"web_search_requests": 3}})
    assert plain is not None and searched == pytest.approx(plain + 3 * WEB_SEARCH_USD)
