"""Permissions of the first version, end to end through `query()`: rules, bypass, callback."""

from __future__ import annotations

import pytest

from fuxi_notebook import (
    FuxiAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ScriptedModel,
)
from fuxi_notebook._internal.common import switches
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook.errors import ConfigurationError

from .helpers import collect, result_text, tool_results


def _touch(name: str) -> dict:
    return tool_use("Bash", {"command": f"touch {name}"})


async def test_tool_without_rule_or_callback_is_denied_with_how_to_allow(tmp_path):
    model = ScriptedModel([[_touch("sentinel")], [text("ok")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert not (tmp_path / "sentinel").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"]
    assert "allowed_tools" in result_text(result) and "can_use_tool" in result_text(result)
    assert messages[-1].permission_denials == [{
        "tool_name": "Bash", "tool_use_id": "toolu_01",
        "tool_input": {"command": "touch sentinel"}}]


async def test_deny_rule_wins_over_allow_and_bypass(tmp_path, monkeypatch):
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    model = ScriptedModel([[_touch("sentinel")], [text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, permission_mode="bypassPermissions",
                               allowed_tools=["Bash"], disallowed_tools=["Bash(touch *)"])
    await collect("go", options)
    assert not (tmp_path / "sentinel").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert "denied by the rule 'Bash(touch *)'" in result_text(result)


async def test_bare_disallowed_tool_is_not_offered(tmp_path):
    model = ScriptedModel([[text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, disallowed_tools=["Bash"]))
    offered = [t["name"] for t in model.requests[0].tools]
    assert "Bash" not in offered and "Read" in offered


async def test_bypass_permissions_runs_everything_in_a_declared_sandbox(tmp_path, monkeypatch):
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")
    model = ScriptedModel([[_touch("sentinel")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                         permission_mode="bypassPermissions"))
    assert (tmp_path / "sentinel").exists()


async def test_bypass_permissions_is_refused_as_root_without_is_sandbox(tmp_path, monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    options = FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path,
                               permission_mode="bypassPermissions")
    with pytest.raises(ConfigurationError, match="IS_SANDBOX=1"):
        await collect("go", options)


async def test_bash_prefix_rule_never_allows_compound_commands(tmp_path):
    model = ScriptedModel([
        [tool_use("Bash", {"command": "touch first && cp /dev/null evil"})],
        [tool_use("Bash", {"command": "touch ok && touch ok2"})],
        [text("done")],
    ])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                         allowed_tools=["Bash(touch *)"]))
    assert not (tmp_path / "evil").exists() and not (tmp_path / "first").exists()
    assert (tmp_path / "ok").exists() and (tmp_path / "ok2").exists()  # every part allowed


async def test_can_use_tool_allow_with_updated_input(tmp_path):
    seen = []

    async def approve(name, tool_input, context):
        seen.append((name, tool_input, context.tool_use_id))
        return PermissionResultAllow(updated_input={"command": "touch changed"})

    model = ScriptedModel([[_touch("original")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, can_use_tool=approve))
    assert seen == [("Bash", {"command": "touch original"}, "toolu_01")]
    assert (tmp_path / "changed").exists() and not (tmp_path / "original").exists()


async def test_can_use_tool_deny_message_reaches_the_model(tmp_path):
    async def refuse(name, tool_input, context):
        return PermissionResultDeny(message="Not on a Friday.")

    model = ScriptedModel([[_touch("sentinel")], [text("ok")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       can_use_tool=refuse))
    assert not (tmp_path / "sentinel").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"] and result_text(result) == "Not on a Friday."
    assert messages[-1].subtype == "success"


async def test_deny_with_interrupt_ends_the_run_and_skips_the_rest(tmp_path):
    async def refuse(name, tool_input, context):
        return PermissionResultDeny(message="Stop.", interrupt=True)

    from fuxi_notebook._internal.agent.assemble import build_session
    from fuxi_notebook._internal.agent.loop.loop import run_prompt
    from fuxi_notebook._internal.agent.loop.run import Run

    model = ScriptedModel([[_touch("first"), _touch("second")], [text("next prompt")]])
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path, can_use_tool=refuse))
    messages = [m async for m in run_prompt(Run(session), "go")]
    assert messages[-1].subtype == "error_during_execution"
    assert not (tmp_path / "first").exists() and not (tmp_path / "second").exists()
    assert len(model.requests) == 1
    # both calls are answered before the next prompt: the denial, then "not executed"
    [m async for m in run_prompt(Run(session), "go on")]
    answers = [b for b in model.requests[1].messages[-1]["content"]
               if b.get("type") == "tool_result"]
    first, second = answers
    assert first["is_error"] and result_text(first) == "Stop."
    assert second["is_error"] and "Not executed" in result_text(second)
    assert not (tmp_path / "second").exists()


async def test_always_allow_update_lasts_for_the_session(tmp_path):
    asked = []

    async def approve_always(name, tool_input, context):
        asked.append(tool_input["command"])
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(
            type="addRules", behavior="allow", destination="session",
            rules=[PermissionRuleValue("Bash", "touch *")])])

    model = ScriptedModel([[_touch("a")], [_touch("b")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, can_use_tool=approve_always))
    assert asked == ["touch a"]
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()


async def test_dont_ask_denies_without_calling_back(tmp_path):
    async def never(name, tool_input, context):  # pragma: no cover - must not run
        raise AssertionError("callback called in dontAsk")

    model = ScriptedModel([[_touch("x")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, permission_mode="dontAsk",
                                         can_use_tool=never))
    (result,) = tool_results(model.requests[1].messages)
    assert "dontAsk" in result_text(result)
