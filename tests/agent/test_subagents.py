"""Subagents (L8): the Agent tool, what returns to the parent, what the parent's stream
carries, hooks, usage and budget, and how a subagent's tools and permissions are set."""

from __future__ import annotations

import pytest

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ResultMessage,
    ScriptedModel,
    SubagentStartHookInput,
    SubagentStopHookInput,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from fuxi_notebook._internal.models.pricing import cost_usd
from fuxi_notebook._internal.models.script import text, tool_use

from .helpers import collect, result_text, tool_results
from .subagent_helpers import WORKER_PROMPT, agent_call, delegating, is_subagent, task_of, worker


async def test_the_final_text_returns_as_the_agent_calls_result(tmp_path):
    (tmp_path / "app.cfg").write_text("x=1\n")
    model = delegating([text("Looking."), tool_use("Glob", {"pattern": "*.cfg"})],
                    [text("The config is app.cfg.")])
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, agents=worker(tools=["Glob", "Read"])))
    assert error is None and messages[-1].result == "all done"
    child_first, child_second, parent_last = model.requests[1:]
    assert is_subagent(child_first) and not is_subagent(parent_last)
    assert child_first.system[0]["text"].startswith(WORKER_PROMPT)
    assert [t["name"] for t in child_first.tools] == ["Read", "Glob"]  # narrowed
    assert child_first.messages == [{"role": "user", "content": [
        {"type": "text", "text": "find the config", "cache_control": {"type": "ephemeral"}}]}]
    assert "app.cfg" in result_text(tool_results(child_second.messages)[0])
    (result,) = tool_results(parent_last.messages)
    assert not result.get("is_error")
    answer, _, agent_line = result_text(result).rpartition("\n\n")
    assert answer == "The config is app.cfg." and agent_line.startswith("agentId: ")
    # only the final text came back: the subagent's steps are not in the parent's history
    assert "Looking." not in str(parent_last.messages)


@pytest.mark.parametrize("forward", [False, True])
async def test_inner_messages_carry_the_agent_calls_id(tmp_path, forward):
    model = delegating([text("Looking."), tool_use("Glob", {"pattern": "*"})], [text("Found.")])
    messages, _ = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, agents=worker(), forward_subagent_text=forward))
    agent_id = next(m.content[0].id for m in messages if isinstance(m, AssistantMessage)
                    and isinstance(m.content[0], ToolUseBlock) and m.content[0].name == "Agent")
    inner = [m for m in messages if getattr(m, "parent_tool_use_id", None) == agent_id]
    kinds = [(type(m).__name__, type(m.content[0]).__name__) for m in inner]
    calls_and_results = [("AssistantMessage", "ToolUseBlock"), ("UserMessage", "ToolResultBlock")]
    if forward:
        assert kinds == [("AssistantMessage", "TextBlock"), *calls_and_results,
                         ("AssistantMessage", "TextBlock")]
    else:
        assert kinds == calls_and_results
    # they come between the Agent call and its result, and nothing else leaks out
    order = [m for m in messages if isinstance(m, AssistantMessage | UserMessage)]
    start = next(i for i, m in enumerate(order) if m.parent_tool_use_id == agent_id)
    assert isinstance(order[start - 1].content[0], ToolUseBlock)
    assert order[start + len(inner)].content[0].tool_use_id == agent_id
    assert sum(isinstance(m, SystemMessage) and m.subtype == "init" for m in messages) == 1
    assert sum(isinstance(m, ResultMessage) for m in messages) == 1


async def test_unknown_subagent_type_is_an_error_naming_the_agents(tmp_path):
    model = ScriptedModel([[agent_call("x", "nobody")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker()))
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"]
    assert result_text(result) == ("Unknown subagent_type 'nobody'. Available agents: "
                                   "general-purpose, worker.")


async def test_a_subagent_that_does_not_finish_is_an_error_result(tmp_path):
    model = delegating([tool_use("Glob", {"pattern": "*"})], [tool_use("Glob", {"pattern": "*"})])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(maxTurns=1)))
    (result,) = tool_results(model.requests[-1].messages)
    assert result["is_error"]
    assert result_text(result).startswith(
        "The worker agent did not finish (error_max_turns): Reached maximum number of turns (1)")


async def test_init_lists_the_agents_and_no_agents_means_no_agent_tool(tmp_path):
    model = ScriptedModel([[text("a")], [text("b")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker()))
    init = messages[0].data
    assert init["agents"] == ["general-purpose", "worker"] and "Agent" in init["tools"]
    description = next(t for t in model.requests[0].tools if t["name"] == "Agent")["description"]
    assert "- worker: Does one piece of work. (tools: all of yours)" in description
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert messages[0].data["agents"] == [] and "Agent" not in messages[0].data["tools"]


async def test_the_general_purpose_agent_is_offered_when_tools_name_agent(tmp_path):
    model = ScriptedModel([[agent_call("look", "general-purpose")], [text("seen")],
                           [text("done")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       tools=["Read", "Agent"]))
    assert messages[0].data["agents"] == ["general-purpose"]
    assert [t["name"] for t in model.requests[1].tools] == ["Read"]  # the parent's, no Agent
    assert result_text(tool_results(model.requests[2].messages)[0]).startswith("seen")


async def test_the_task_alias_runs_the_agent_tool_and_agent_rules_cover_it(tmp_path):
    seen: list[str] = []

    async def pre(input_data, tool_use_id, context):
        seen.append(input_data["tool_name"])
        return {}

    model = ScriptedModel([[agent_call("find", name="Task")], [text("from the alias")],
                           [text("done")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(),
                                         hooks={"PreToolUse": [HookMatcher("Agent", [pre])]}))
    assert seen == ["Agent"]
    assert result_text(tool_results(model.requests[-1].messages)[0]).startswith("from the alias")
    model = ScriptedModel([[text("no agents here")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker(), disallowed_tools=["Task"]))
    assert "Agent" not in messages[0].data["tools"]


async def test_inherited_tools_lose_agent_and_disallowed_tools(tmp_path):
    model = delegating([tool_use("Bash", {"command": "rm -f gone.txt"})], [text("could not")])
    (tmp_path / "gone.txt").write_text("x")
    await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, allowed_tools=["Bash"],
        agents=worker(disallowedTools=["Edit", "Bash(rm *)"])))
    child = model.requests[1]
    assert [t["name"] for t in child.tools] == [
        "Read", "Write", "Glob", "Grep", "Bash", "AskUserQuestion", "WebFetch", "WebSearch",
        "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"]
    denied = tool_results(model.requests[2].messages)[0]
    assert denied["is_error"] and "Bash(rm *)" in result_text(denied)
    assert (tmp_path / "gone.txt").exists()


async def test_hooks_fire_with_agent_ids(tmp_path):
    events: list[tuple[str, dict]] = []

    def record(event):
        async def callback(input_data, tool_use_id, context):
            events.append((event, input_data))
            return {}
        return callback

    hooks = {event: [HookMatcher(matcher, [record(event)])] for event, matcher in (
        ("SubagentStart", "worker"), ("SubagentStop", "worker"), ("PreToolUse", None),
        ("Stop", None), ("UserPromptSubmit", None))}
    model = delegating([tool_use("Glob", {"pattern": "*"})], [text("Found it.")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(),
                                         hooks=hooks))
    names = [event for event, _ in events]
    assert names == ["UserPromptSubmit", "PreToolUse", "SubagentStart", "PreToolUse",
                     "SubagentStop", "Stop"]  # prompt and Stop hooks are the parent's only
    data = dict(events)
    start, stop = data["SubagentStart"], data["SubagentStop"]
    assert set(start) >= SubagentStartHookInput.__required_keys__
    assert set(stop) >= SubagentStopHookInput.__required_keys__
    assert start["agent_type"] == stop["agent_type"] == "worker"
    assert start["agent_id"] == stop["agent_id"]
    assert stop["stop_hook_active"] is False and stop["agent_transcript_path"] is None
    assert stop["last_assistant_message"] == "Found it."
    outer, inner = [d for e, d in events if e == "PreToolUse"]
    assert outer["tool_name"] == "Agent" and "agent_id" not in outer
    assert (inner["tool_name"], inner["agent_id"], inner["agent_type"]) == (
        "Glob", start["agent_id"], "worker")


async def test_a_subagent_stop_hook_can_make_it_go_on(tmp_path):
    calls: list[bool] = []

    async def not_yet(input_data, tool_use_id, context):
        calls.append(input_data["stop_hook_active"])
        if input_data["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "also check the tests"}

    model = delegating([text("first answer")], [text("checked the tests too")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(), hooks={
        "SubagentStop": [HookMatcher("worker", [not_yet])]}))
    assert calls == [False, True]
    assert "SubagentStop hook feedback: also check the tests" in str(model.requests[2].messages)
    assert result_text(tool_results(model.requests[-1].messages)[0]).startswith(
        "checked the tests too")


async def test_usage_and_cost_of_the_subagent_count_in_the_parents_result(tmp_path):
    usage = {"input_tokens": 1000}
    model = ScriptedModel([[agent_call("a")], [tool_use("Glob", {"pattern": "*"})],
                           [text("sub done")], [text("done")]],
                          name="claude-sonnet-5-5", usage=usage)
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker(model="haiku")))
    assert [r.model for r in model.requests] == ["claude-sonnet-5-5", "claude-haiku-5-5",
                                                 "claude-haiku-5-5", "claude-sonnet-5-5"]
    result = messages[-1]
    assert result.usage["input_tokens"] == 4000
    assert set(result.model_usage) == {"claude-sonnet-5-5", "claude-haiku-5-5"}
    sonnet, haiku = result.model_usage["claude-sonnet-5-5"], result.model_usage["claude-haiku-5-5"]
    assert sonnet["inputTokens"] == haiku["inputTokens"] == 2000
    assert haiku["costUSD"] == pytest.approx(cost_usd("claude-haiku-5-5", {
        "input_tokens": 2000, "output_tokens": haiku["outputTokens"]}))
    assert result.total_cost_usd == pytest.approx(sonnet["costUSD"] + haiku["costUSD"])


async def test_a_tiny_budget_stops_the_subagent_and_the_parent(tmp_path):
    usage = {"input_tokens": 1000}  # $0.002 a response, plus a few output tokens
    model = ScriptedModel([[agent_call("a")], [tool_use("Glob", {"pattern": "*"})],
                           [text("never")]], name="claude-sonnet-5-5", usage=usage)
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, agents=worker(), max_budget_usd=0.003))
    assert len(model.requests) == 2  # the subagent stopped before its second request
    result = messages[-1]
    assert error is not None and result.subtype == "error_max_budget_usd"
    assert result.total_cost_usd > 0.003  # the subagent's response is in it
    assert result.model_usage["claude-sonnet-5-5"]["inputTokens"] == 2000
    agent_result = next(m for m in messages if isinstance(m, UserMessage)
                        and m.parent_tool_use_id is None)
    assert agent_result.content[0].is_error
    assert "did not finish (error_max_budget_usd)" in agent_result.content[0].content


async def test_approvals_inside_a_subagent_name_it_and_always_allow_reaches_the_parent(tmp_path):
    asked: list[tuple[str, str | None]] = []

    async def approve(tool_name, tool_input, context):
        asked.append((tool_name, context.agent_id))
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(
            type="addRules", behavior="allow", rules=[PermissionRuleValue("Bash", "touch *")],
            destination="session")])

    model = ScriptedModel([[agent_call("a")], [tool_use("Bash", {"command": "touch one"})],
                           [text("made one")], [tool_use("Bash", {"command": "touch two"})],
                           [text("done")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker(), can_use_tool=approve))
    assert len(asked) == 1 and asked[0][0] == "Bash" and asked[0][1]  # the parent's was allowed
    assert (tmp_path / "one").exists() and (tmp_path / "two").exists()
    assert messages[-1].subtype == "success"


async def test_an_interrupting_denial_inside_a_subagent_ends_the_parents_run(tmp_path):
    async def deny(tool_name, tool_input, context):
        return PermissionResultDeny(message="Stop everything.", interrupt=True)

    model = delegating([tool_use("Bash", {"command": "make deploy"})])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker(), can_use_tool=deny))
    assert len(model.requests) == 2  # neither the subagent nor the parent asked again
    result = messages[-1]
    assert result.subtype == "error_during_execution" and result.terminal_reason == "aborted_tools"
    assert [d["tool_name"] for d in result.permission_denials] == ["Bash"]
    agent_result = next(m for m in messages if isinstance(m, UserMessage)
                        and m.parent_tool_use_id is None)
    assert agent_result.content[0].is_error


async def test_a_definitions_mode_applies_only_under_the_default_mode(tmp_path):
    model = delegating([tool_use("Write", {"file_path": "x.txt", "content": "x"})], [text("no")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, permission_mode="acceptEdits",
                                         agents=worker(permissionMode="plan")))
    assert (tmp_path / "x.txt").exists()  # acceptEdits in the parent is not overridden
    model = delegating([tool_use("Write", {"file_path": "y.txt", "content": "y"})], [text("no")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Write"],
                                         agents=worker(permissionMode="plan")))
    assert not (tmp_path / "y.txt").exists()  # plan: the write needed approval
    model = delegating([tool_use("Write", {"file_path": "z.txt", "content": "z"})], [text("no")])
    with pytest.warns(UserWarning, match="would approve more than its parent's 'plan'"):
        await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                             permission_mode="plan",
                                             agents=worker(permissionMode="acceptEdits")))
    assert not (tmp_path / "z.txt").exists()  # a definition does not lift the parent's plan


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions", "auto"])
async def test_a_definition_in_code_does_not_widen_the_parents_mode(tmp_path, monkeypatch,
                                                                     mode):
    """Issue 18, finding 7: a parent in default mode, no rule, no can_use_tool; the
    subagent's definition asks for a wider mode (bypass with IS_SANDBOX=1 as root)."""
    from fuxi_notebook._internal.common import switches

    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    model = delegating([tool_use("Write", {"file_path": "x.txt", "content": "x"})],
                       [text("tried")])
    with pytest.warns(UserWarning, match=f"asks for permissionMode '{mode}', which would "
                                         "approve more than its parent's 'default'"):
        await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                             agents=worker(permissionMode=mode)))
    assert not (tmp_path / "x.txt").exists()  # default mode, nobody to approve: denied


@pytest.mark.parametrize(("child", "parent", "widens"), [
    ("plan", "default", False), ("dontAsk", "default", False), ("default", "plan", True),
    ("acceptEdits", "default", True), ("auto", "acceptEdits", True),
    ("acceptEdits", "auto", True), ("default", "acceptEdits", False),
    ("bypassPermissions", "auto", True), ("acceptEdits", "bypassPermissions", False),
    ("plan", "dontAsk", True), ("dontAsk", "plan", True), ("auto", "default", True),
])
def test_which_modes_widen_which(child, parent, widens):
    from fuxi_notebook._internal.permissions.modes import widens as widening

    assert widening(child, parent) is widens


async def test_depth_limit_and_nesting(tmp_path, monkeypatch):
    model = delegating([text("leaf")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker()))
    assert "Agent" not in [t["name"] for t in model.requests[1].tools]
    monkeypatch.setenv("FUXI_MAX_SUBAGENT_DEPTH", "2")
    model = ScriptedModel([[agent_call("outer")], [agent_call("inner")], [text("deep")],
                           [text("middle")], [text("top")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       agents=worker()))
    assert task_of(model.requests[2]) == "inner"
    outer_id, inner_id = "toolu_01", "toolu_02"
    nested_call = next(m for m in messages if isinstance(m, AssistantMessage)
                       and m.content[0].id == inner_id)
    assert nested_call.parent_tool_use_id == outer_id
    nested_result = next(m for m in messages if isinstance(m, UserMessage)
                         and m.content[0].tool_use_id == inner_id)
    assert nested_result.parent_tool_use_id == outer_id
    assert result_text(tool_results(model.requests[3].messages)[0]).startswith("deep")
    assert messages[-1].result == "top"


async def test_isolation_and_a_background_no_host_takes_are_noted_in_the_result(tmp_path):
    """Without an owner that takes a result later (here a client made with
    background=False, as the ACP agent's is), a background agent runs in the foreground."""
    from fuxi_notebook import FuxiSDKClient

    model = ScriptedModel([[agent_call("a", run_in_background=True, isolation="worktree")],
                           [text("fine")], [text("done")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker())
    async with FuxiSDKClient(options, background=False) as client:
        await client.query("go")
        [m async for m in client.receive_response()]
    content = result_text(tool_results(model.requests[-1].messages)[0])
    assert "fine" in content and "ran in the foreground (not in the background)" in content
    assert "isolation 'worktree' is not supported here" in content


async def test_a_bad_definition_is_a_configuration_error(tmp_path):
    from fuxi_notebook.errors import ConfigurationError
    from fuxi_notebook.options import AgentDefinition

    bad = {"worker": AgentDefinition(description="d", prompt="p", maxTurns=0)}
    with pytest.raises(ConfigurationError, match="maxTurns"):
        await collect("go", FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path, agents=bad))
    bad = {"worker": AgentDefinition(description="d", prompt="p", disallowedTools=["Agent(x)"])}
    with pytest.raises(ConfigurationError, match=r"disallowedTools.*does not take a specifier"):
        await collect("go", FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path, agents=bad))
    messages, _ = await collect("go", FuxiAgentOptions(
        model=ScriptedModel([[text("ok")]]), cwd=tmp_path,
        agents={"w": {"description": "as a dict", "prompt": "p"}}))
    assert messages[0].data["agents"] == ["general-purpose", "w"]
    assert any(isinstance(b, TextBlock) for m in messages if isinstance(m, AssistantMessage)
               for b in m.content)
