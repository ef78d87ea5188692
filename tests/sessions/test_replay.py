"""Replay decisions: may a cell be replayed, re-applying approvals, divergence."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.sessions.replay import (
    RecordedApprovals,
    first_divergence,
    normalize_result,
    why_not_replayable,
)
from fuxi_notebook.options import (
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    ToolPermissionContext,
)

from .helpers import build_kwargs

OPTIONS = {"model": "claude-sonnet-5-5", "max_turns": 8, "permission_mode": "default",
           "allowed_tools": ["Read", "Grep"]}


def _record(**overrides):
    return build_record(**build_kwargs(**overrides))


def test_a_cell_is_replayed_only_while_it_is_the_recorded_cell():
    record = _record(parent="c0")
    assert why_not_replayable(record, prompt="Fix the failing test\n", options=OPTIONS,
                              parent="c0") is None
    assert "prompt changed" in why_not_replayable(record, prompt="Fix it", options=OPTIONS,
                                                  parent="c0")
    changed = why_not_replayable(record, prompt="Fix the failing test",
                                 options={**OPTIONS, "max_turns": 9}, parent="c0")
    assert "options changed" in changed and "max_turns" in changed
    assert "--resume c0" in why_not_replayable(record, prompt="Fix the failing test",
                                               options=OPTIONS, parent="c7")
    fresh = _record(parent=None)
    assert "--new" in why_not_replayable(fresh, prompt="Fix the failing test", options=OPTIONS,
                                         parent="c7")
    # how the cell runs is not what it does
    assert why_not_replayable(record, prompt="Fix the failing test",
                              options={**OPTIONS, "replay": "strict"}, parent="c0") is None


def test_secrets_in_the_prompt_compare_as_recorded():
    secret = "sk-ant-api03-" + "x" * 40
    record = _record(prompt=f"use {secret}", parent=None)
    assert secret not in record.prompt
    assert why_not_replayable(record, prompt=f"use {secret}", options=OPTIONS,
                              parent=None) is None


def _decide(approvals, name, tool_id, *, fallback=None, **context):
    gate = RecordedApprovals(approvals, fallback=fallback)
    ctx = ToolPermissionContext(tool_use_id=tool_id, **context)
    return gate, asyncio.run(gate(name, {"command": "x"}, ctx))


def test_recorded_decisions_are_reapplied():
    record = _record()
    _, allowed = _decide(record.approvals, "Bash", "t1")
    assert isinstance(allowed, PermissionResultAllow) and not allowed.updated_permissions
    _, always = _decide(record.approvals, "Edit", "t2")
    assert [str(r) for r in always.updated_permissions[0].rules] == ["Edit(src/**)"]
    _, denied = _decide(record.approvals, "Bash", "t3")
    assert isinstance(denied, PermissionResultDeny)
    assert "deleting dependencies" in denied.message


def test_a_recorded_approval_never_stands_in_for_a_hard_ask_or_the_boundary():
    record = _record()
    gate, hard = _decide(record.approvals, "Bash", "t1", hard_ask=True,
                         decision_reason="removing a critical path")
    assert isinstance(hard, PermissionResultDeny) and "critical path" in hard.message
    assert gate.refused
    _, outside = _decide(record.approvals, "Bash", "t1", blocked_path="/etc/passwd")
    assert isinstance(outside, PermissionResultDeny) and "/etc/passwd" in outside.message
    _, unknown = _decide(record.approvals, "Bash", "t99")
    assert isinstance(unknown, PermissionResultDeny) and "no decision" in unknown.message
    _, renamed = _decide(record.approvals, "Write", "t1")  # id reused for another tool
    assert isinstance(renamed, PermissionResultDeny)


def test_where_the_record_cannot_decide_a_live_approver_can():
    asked = []

    async def live(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    gate, answer = _decide(_record().approvals, "Bash", "t1", fallback=live, hard_ask=True)
    assert isinstance(answer, PermissionResultAllow) and asked == ["Bash"]
    assert gate.asked_live == 1


def test_question_answers_are_replayed():
    record = _record(approvals=[{"tool_use_id": "q1", "tool_name": "AskUserQuestion",
                                 "decision": "allow", "source": "user",
                                 "answers": {"Which?": "B"}}])
    gate = RecordedApprovals(record.approvals, fallback=None)
    answer = asyncio.run(gate("AskUserQuestion", {"questions": []},
                              ToolPermissionContext(tool_use_id="q1", hard_ask=True)))
    assert answer.updated_input == {"questions": [], "answers": {"Which?": "B"}}


def test_rule_values():
    assert str(PermissionRuleValue.from_text("Bash(ls -la)")) == "Bash(ls -la)"
    assert PermissionRuleValue.from_text("Bash(ls -la)").rule_content == "ls -la"
    assert PermissionRuleValue.from_text("Python").rule_content is None


def test_normalisation_of_machine_dependent_text():
    tmp = Path(tempfile.gettempdir()).resolve()
    text = (f"/home/me/proj/a.py\n{tmp}/pytest-1/x.txt  \n<obj at 0x7f3a2b4c5d60> 1.25 s "
            f"{Path.home()}/data")
    normal = normalize_result(text, cwd="/home/me/proj")
    assert normal == "<cwd>/a.py\n<tmp>/…/x.txt\n<obj at 0x…> <N> s ~/data"
    assert normalize_result([{"type": "text", "text": "a"}, {"type": "image"}],
                            cwd=None) == "a\n[image]"


def test_divergence_is_found_after_normalisation_and_reported_as_a_diff():
    record = _record(cwd="/old/machine/proj")
    assert first_divergence(record, "t2", "Edited src/add.js", False,
                            live_cwd="/new/place") is None
    assert first_divergence(record, "t1", "1 failing: add()", True, live_cwd="/x") is None
    changed = first_divergence(record, "t1", "2 failing: add(), sub()", True, live_cwd="/x")
    assert changed.tool_name == "Bash" and "npm test" in changed.summary
    assert "-1 failing: add()" in changed.diff and "+2 failing: add(), sub()" in changed.diff
    flipped = first_divergence(record, "t2", "Edited src/add.js", True, live_cwd="/x")
    assert flipped is not None and "(error)" in flipped.diff
    moved = _record(cwd="/old/proj", messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "g", "name": "Glob",
                                           "input": {"pattern": "*"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "g",
                                      "content": "/old/proj/a.py"}]},
        {"role": "assistant", "content": "ok"}], approvals=[])
    assert first_divergence(moved, "g", "/new/proj/a.py", False, live_cwd="/new/proj") is None
