"""Permission updates as strictly as the comparable SDK 0.2.189 checks them, renamed: an
update missing what its type needs is refused with one line (a ValueError from
`to_dict()`, as there), and the updates of one answer apply all together or not at all,
whether a `can_use_tool` answer or a PermissionRequest hook's `updatedPermissions` brings
them."""

from __future__ import annotations

from typing import Any

import pytest

from fuxi_notebook import (
    FuxiAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionRuleValue,
    PermissionUpdate,
    ScriptedModel,
)
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.options import PermissionUpdateError

from .agent.helpers import collect, result_text, tool_results

_BASH_LS = [PermissionRuleValue("Bash", "ls *")]


@pytest.mark.parametrize(("update", "line"), [
    (PermissionUpdate("addRules", rules=_BASH_LS), "addRules needs behavior"),
    (PermissionUpdate("replaceRules", behavior="deny"), "replaceRules needs rules"),
    (PermissionUpdate("removeRules", rules=[PermissionRuleValue("")], behavior="allow"),
     "removeRules rule"),
    (PermissionUpdate("setMode"), "setMode needs mode"),
    (PermissionUpdate("setMode", mode="yolo"), "setMode needs mode"),  # type: ignore[arg-type]
    (PermissionUpdate("addDirectories"), "addDirectories needs directories"),
    (PermissionUpdate("removeDirectories", directories="/tmp"),  # type: ignore[arg-type]
     "removeDirectories needs directories"),
    (PermissionUpdate("grantAll"), "type 'grantAll' is not one of"),  # type: ignore[arg-type]
    (PermissionUpdate("addRules", rules=_BASH_LS, behavior="allow",
                      destination="cloud"),  # type: ignore[arg-type]
     "destination 'cloud' is not one of"),
])
def test_an_update_missing_what_it_needs_is_one_line_and_a_value_error(update, line):
    with pytest.raises(ValueError, match=line) as raised:
        update.to_dict()
    assert isinstance(raised.value, ConfigurationError) and "\n" not in str(raised.value)


def test_the_wire_form_goes_both_ways():
    updates = [
        PermissionUpdate("addRules", rules=[PermissionRuleValue("Bash", "ls *"),
                                            PermissionRuleValue("Read")],
                         behavior="allow", destination="userSettings"),
        PermissionUpdate("setMode", mode="acceptEdits", destination="session"),
        PermissionUpdate("addDirectories", directories=["/data"])]
    wires = [update.to_dict() for update in updates]
    assert wires[0] == {"type": "addRules", "destination": "userSettings", "behavior": "allow",
                        "rules": [{"toolName": "Bash", "ruleContent": "ls *"},
                                  {"toolName": "Read"}]}
    assert wires[1] == {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    assert [PermissionUpdate.from_dict(wire) for wire in wires] == updates
    with pytest.raises(PermissionUpdateError, match="addRules needs behavior"):
        PermissionUpdate.from_dict({"type": "addRules", "rules": [{"toolName": "Bash"}]})


def test_the_updates_of_one_answer_apply_all_or_none(tmp_path):
    session = build_session(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path))
    engine = session.permissions
    before = ([r.text for r in engine.rules["allow"]], engine.mode, list(engine.roots))
    for bad in (PermissionUpdate("setMode", mode="nope"),  # type: ignore[arg-type]
                PermissionUpdate("addRules", rules=[PermissionRuleValue("Bash(")],
                                 behavior="allow")):  # a rule that does not parse
        with pytest.raises(PermissionUpdateError) as raised:
            engine.apply([PermissionUpdate("addRules", rules=_BASH_LS, behavior="allow"),
                          PermissionUpdate("addDirectories", directories=[str(tmp_path)]),
                          bad])
        assert "\n" not in str(raised.value)
        assert ([r.text for r in engine.rules["allow"]], engine.mode,
                list(engine.roots)) == before
        assert session.conversation.permission_updates == []  # nothing remembered


def _touch(name: str) -> dict[str, Any]:
    return tool_use("Bash", {"command": f"touch {name}"})


async def test_an_approval_whose_updates_cannot_apply_denies_the_call(tmp_path):
    async def approve(name, tool_input, context):
        return PermissionResultAllow(updated_permissions=[
            PermissionUpdate("addRules", rules=[PermissionRuleValue("Bash", "touch *")],
                             behavior="allow"),
            PermissionUpdate("addRules", rules=[PermissionRuleValue("Bash", "rm *")])])

    model = ScriptedModel([[_touch("a")], [text("ok")]])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                           can_use_tool=approve))
    assert error is None and messages[-1].subtype == "success"  # the run goes on
    assert not (tmp_path / "a").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"]
    assert result_text(result) == (
        "The approval callback's updated_permissions were refused (addRules needs "
        "behavior, one of allow, deny, ask (got None)), so Bash was not run.")


async def test_a_permission_request_hooks_updates_apply_and_last(tmp_path):
    asked: list[str] = []

    async def grant(input_data, tool_use_id, context):
        asked.append(input_data["tool_input"]["command"])
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
            "behavior": "allow", "updatedPermissions": [{
                "type": "addRules", "behavior": "allow", "destination": "session",
                "rules": [{"toolName": "Bash", "ruleContent": "touch *"}]}]}}}

    model = ScriptedModel([[_touch("a")], [_touch("b")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, hooks={
        "PermissionRequest": [HookMatcher(hooks=[grant])]}))
    assert asked == ["touch a"]  # the second call matched the rule the hook added
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()


async def test_a_permission_request_hooks_bad_updates_deny_the_call(tmp_path):
    async def grant(input_data, tool_use_id, context):
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
            "behavior": "allow", "updatedPermissions": [{"type": "setMode"}]}}}

    model = ScriptedModel([[_touch("a")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, hooks={
        "PermissionRequest": [HookMatcher(hooks=[grant])]}))
    assert not (tmp_path / "a").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"] and result_text(result).startswith(
        "A PermissionRequest hook's updatedPermissions were refused (setMode needs mode")
