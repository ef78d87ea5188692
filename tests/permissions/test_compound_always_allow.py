"""Issue 21: "Always allow" on a compound command proposes a rule per part a rule may
cover, never one that covers a removal; a record keeps them all and a replay grants the
same rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook._internal.common.rule_lists import joined_rules, split_rules
from fuxi_notebook._internal.permissions.bash import part_rules
from fuxi_notebook._internal.permissions.engine import always_allow_rules
from fuxi_notebook._internal.tools.base import declaration_of
from fuxi_notebook._internal.tools.shell import BashTool


def _rules(command: str) -> list[str]:
    return always_allow_rules(declaration_of(BashTool(), "Bash"), {"command": command},
                              cwd=Path("/tmp"))


@pytest.mark.parametrize(("command", "rules"), [
    ("wc -c x && rm -rf old", ["Bash(wc -c x)"]),
    ("rm -rf old; ls -la", ["Bash(ls -la)"]),
    # a part is judged without its redirections: the file written is judged as a path
    ("cat a | grep b > out.txt", ["Bash(cat a)", "Bash(grep b)"]),
    ("ls && ls", ["Bash(ls)"]),
    ("find . -name '*.pyc' -delete && echo done", ["Bash(echo done)"]),
    ("python -c 'print(1)' && wc -l x", ["Bash(wc -l x)"]),
    ("echo $(rm -rf /) && ls", ["Bash(ls)"]),
    ("git clean -fdx; git status", ["Bash(git status)"]),
    ("rm -rf build", []),
    ("shred secrets.txt", []),
    ("wc -c x", ["Bash(wc -c x)"]),
])
def test_always_allow_names_the_parts_a_rule_may_cover(command, rules):
    assert _rules(command) == rules
    assert not any("rm " in rule or "shred" in rule or "-delete" in rule for rule in rules)


def test_a_single_plain_command_keeps_its_exact_rule():
    assert part_rules("pytest -q tests") is None


def test_several_rules_fit_one_record_field_and_come_back():
    rules = ["Bash(echo 'a; b')", "Bash(printf 'x\\ny')"]
    field = joined_rules(rules)
    assert field is not None and split_rules(field) == rules
    assert split_rules(joined_rules(["Bash(ls)"])) == ["Bash(ls)"]
    assert split_rules("[not json") == ["[not json"] and split_rules(None) == []


async def test_after_always_allow_the_safe_part_runs_and_the_removal_asks_again(tmp_path):
    from fuxi_notebook import FuxiAgentOptions, PermissionResultAllow, ScriptedModel, query
    from fuxi_notebook._internal.models.script import text, tool_use

    (tmp_path / "x").write_text("abc")
    (tmp_path / "old").mkdir()
    (tmp_path / "old2").mkdir()
    asked: list[str] = []

    async def always(tool_name, tool_input, context):
        asked.append(tool_input["command"])
        return PermissionResultAllow(updated_permissions=context.suggestions)

    model = ScriptedModel([[tool_use("Bash", {"command": "wc -c x && rm -rf old"})],
                           [tool_use("Bash", {"command": "wc -c x"})],
                           [tool_use("Bash", {"command": "rm -rf old2"})],
                           [text("done")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, can_use_tool=always)
    messages = [m async for m in query(prompt="go", options=options)]
    assert messages[-1].subtype == "success"
    assert asked == ["wc -c x && rm -rf old", "rm -rf old2"]
