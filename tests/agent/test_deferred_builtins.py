"""Built-in tools most sessions never call (web fetch and search, the task list) are sent
deferred, behind ToolSearch, as a large MCP tool set already is: the default request
carries the rest in full. The model still reaches them: a call of a deferred tool runs,
ToolSearch loads one with a `tool_reference` the API accepts, and the prompt cache share
stays where it was. Explicitly chosen tools, FUXI_TOOL_SEARCH=never, or a rule that takes
ToolSearch away send everything in full."""

from __future__ import annotations

from fuxi_notebook import FuxiAgentOptions, ResultMessage, ScriptedModel, query
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .helpers import tool_results

DEFERRED = {"WebFetch", "WebSearch", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"}


def _definitions(**options) -> dict[str, dict]:
    session = build_session(FuxiAgentOptions(model=ScriptedModel([]), **options))
    return {d["name"]: d for d in session.tool_definitions}


def test_the_default_request_defers_web_and_task_tools_behind_tool_search(tmp_path):
    tools = _definitions(cwd=tmp_path)
    assert {n for n, d in tools.items() if d.get("defer_loading")} == DEFERRED
    assert list(tools)[-1] == "ToolSearch" and not tools["ToolSearch"].get("defer_loading")
    for name in DEFERRED:
        assert f"\n{name}" in tools["ToolSearch"]["description"]
    for name in ("Read", "Write", "Edit", "Glob", "Grep", "Bash", "AskUserQuestion"):
        assert not tools[name].get("defer_loading")


def test_chosen_tools_never_and_a_rule_against_tool_search_send_them_in_full(tmp_path,
                                                                            monkeypatch):
    chosen = _definitions(cwd=tmp_path, tools=["Read", "WebFetch", "TaskCreate"])
    assert list(chosen) == ["Read", "WebFetch", "TaskCreate"]
    assert not any(d.get("defer_loading") for d in chosen.values())
    taken = _definitions(cwd=tmp_path, disallowed_tools=["ToolSearch"])
    assert "ToolSearch" not in taken and not any(d.get("defer_loading") for d in taken.values())
    monkeypatch.setenv("FUXI_TOOL_SEARCH", "never")
    never = _definitions(cwd=tmp_path)
    assert "ToolSearch" not in never and not any(d.get("defer_loading") for d in never.values())


async def test_the_model_reaches_deferred_tools_on_the_wire(tmp_path):
    """Over the real client against the fake API (which checks each request as the API
    does, `tool_reference`s included): a direct call of a deferred tool runs, and
    ToolSearch loads one by name."""
    with FakeMessagesServer() as server:
        server.add(Turn([tool_use("TaskCreate", {"subject": "Check the logs",
                                                 "description": "Read them all"})]),
                   Turn([tool_use("ToolSearch", {"query": "select:WebFetch"})]),
                   Turn([text("Found it.")]))
        model = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=server.url)
        messages = [m async for m in query(prompt="plan", options=FuxiAgentOptions(
            model=model, cwd=tmp_path))]
        requests, errors = server.requests, server.errors
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Found it."
    assert errors == []  # every request was one the API accepts
    created, = tool_results(requests[1]["messages"])
    assert not created.get("is_error")
    loaded, = tool_results(requests[2]["messages"])
    assert loaded["content"] == [{"type": "tool_reference", "tool_name": "WebFetch"}]
    assert [t.get("defer_loading") for t in requests[0]["tools"] if t["name"] == "WebFetch"] == [
        True]


async def test_the_cache_share_stays_at_least_ninety_percent(tmp_path):
    for index in range(10):
        (tmp_path / f"file{index}.txt").write_text(f"line {index}\n" * 30)
    steps = [Turn([tool_use("Read", {"file_path": f"file{i}.txt"})]) for i in range(9)]
    with FakeMessagesServer([*steps, Turn([text("All read.")])]) as server:
        model = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=server.url)
        async for _ in query(prompt="Read every file.", options=FuxiAgentOptions(
                model=model, cwd=tmp_path, allowed_tools=["Read"])):
            pass
        later = server.usage_log[1:]
    read = sum(u["cache_read_input_tokens"] for u in later)
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"]
                + u["cache_creation_input_tokens"] for u in later)
    assert read / total >= 0.9
