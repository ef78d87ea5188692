"""Finding 2 of issue 8: tools declare what they are, and every decision reads that.

Plan mode ran Python because permissions classified tools by name sets that left out the
kernel tools. Now each tool declares its kind, its reach and its "Always allow" rule; these
tests check that modes, the boundary, suggestions and concurrency follow the declaration
for the package's own tools (kernel tools included) and for tools the permission code has
never heard of.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from fuxi_notebook import FuxiAgentOptions, PermissionResultDeny
from fuxi_notebook._internal.notebook.kernel.tools import kernel_tools
from fuxi_notebook._internal.permissions.engine import PermissionEngine
from fuxi_notebook._internal.tools.base import DeclaredTool, Reach, ToolContext, ToolOutput, kind_of
from fuxi_notebook._internal.tools.builtin import builtin_tools
from fuxi_notebook.options import ToolPermissionContext


class Recorder:
    """A can_use_tool that records the context it was asked with and refuses."""

    def __init__(self) -> None:
        self.contexts: list[ToolPermissionContext] = []

    async def __call__(self, name: str, tool_input: dict[str, Any],
                       context: ToolPermissionContext) -> PermissionResultDeny:
        self.contexts.append(context)
        return PermissionResultDeny(message="refused by the test")


class Undeclared:
    """A tool written by someone who never heard of kinds (as an MCP adapter might be)."""

    name = "frobnicate"
    description = "does something"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput("done")


class Custom(DeclaredTool):
    """A user-defined tool with a declaration, to show no permission code needs touching."""

    description = "custom"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    def __init__(self, name: str, kind: str, *, reads: tuple[str, ...] = (),
                 writes: tuple[str, ...] = ()) -> None:
        self.name, self.kind = name, kind  # type: ignore[assignment]
        self._reach = Reach(reads=reads, writes=writes)

    def reach(self, input: dict[str, Any]) -> Reach:
        return self._reach

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput("done")


def all_tools(*extra: Any) -> list[Any]:
    return [*builtin_tools(), *kernel_tools(shell=None), *extra]


async def outcome(cwd: Path, tool: str, tool_input: dict[str, Any], *extra: Any,
                  **options: Any) -> tuple[str, Recorder]:
    recorder = Recorder()
    engine = PermissionEngine(FuxiAgentOptions(**options), cwd=cwd, tools=all_tools(*extra))
    engine.can_use_tool = recorder
    decision = await engine.decide(tool, tool_input, "toolu_1")
    if recorder.contexts:
        assert decision.behavior == "deny"
        return "ask", recorder
    return decision.behavior, recorder


def test_every_package_tool_declares_its_kind():
    kinds = {tool.name: kind_of(tool) for tool in all_tools()}
    assert kinds == {"Read": "read", "Write": "edit", "Edit": "edit", "Glob": "read",
                     "Grep": "read", "Bash": "execute", "AskUserQuestion": "ask",
                     "Python": "execute", "Variables": "read", "Inspect": "read",
                     "NotebookRead": "read", "InsertCell": "edit"}
    # every declaration is an attribute of the class, not inferred from the name
    assert all("kind" in vars(type(tool)) for tool in all_tools())


async def test_plan_mode_does_not_run_python_even_when_a_rule_allows_it(tmp_path):
    """The finding as reported: plan + allowed_tools=["Python"] auto-approved Python."""
    result, recorder = await outcome(tmp_path, "Python", {"code": "open('x','w')"},
                                     permission_mode="plan", allowed_tools=["Python"])
    assert result == "ask"
    assert "plan mode" in (recorder.contexts[0].decision_reason or "")
    # and with nobody to ask it is denied, not run
    engine = PermissionEngine(FuxiAgentOptions(permission_mode="plan",
                                               allowed_tools=["Python"]),
                              cwd=tmp_path, tools=all_tools())
    assert (await engine.decide("Python", {"code": "1"}, "t")).behavior == "deny"


@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("Variables", {}, "allow"),            # read: explores
    ("NotebookRead", {}, "allow"),
    ("Inspect", {"name": "df"}, "allow"),
    ("InsertCell", {"code": "1"}, "ask"),  # edit: a change
    ("Python", {"code": "1"}, "ask"),      # execute
    ("frobnicate", {}, "ask"),             # undeclared: execute
])
async def test_plan_mode_follows_the_declared_kind(tmp_path, tool, tool_input, expected):
    allowed = ["Variables", "NotebookRead", "Inspect", "InsertCell", "Python", "frobnicate"]
    result, _ = await outcome(tmp_path, tool, tool_input, Undeclared(),
                              permission_mode="plan", allowed_tools=allowed)
    assert result == expected


@pytest.mark.parametrize(("tool", "expected"), [
    ("InsertCell", "allow"),   # an edit that runs nothing
    ("Python", "ask"),         # code: acceptEdits never approves it
    ("frobnicate", "ask"),     # undeclared counts as execute
    ("Variables", "allow"),    # a read
])
async def test_accept_edits_approves_only_declared_edits(tmp_path, tool, expected):
    result, _ = await outcome(tmp_path, tool, {"code": "1"} if tool != "frobnicate" else {},
                              Undeclared(), permission_mode="acceptEdits")
    assert result == expected


async def test_an_undeclared_tool_is_never_safe_and_runs_alone(tmp_path):
    result, _ = await outcome(tmp_path, "frobnicate", {}, Undeclared())
    assert result == "ask"
    assert kind_of(Undeclared()) == "execute"
    assert kind_of(type("Odd", (), {"kind": "harmless"})()) == "execute"


async def test_a_new_read_tool_is_bounded_by_the_paths_it_declares(tmp_path):
    """A user-defined read tool inside the working directory needs no approval; the same
    tool reaching ~/.ssh asks, and a Read deny rule covers it without naming it."""
    inside = Custom("peek", "read", reads=("data.csv",))
    assert (await outcome(tmp_path, "peek", {}, inside))[0] == "allow"
    outside = Custom("peek", "read", reads=("~/.ssh/id_rsa",))
    assert (await outcome(tmp_path, "peek", {}, outside, allowed_tools=["peek"]))[0] == "ask"
    denied = await outcome(tmp_path, "peek", {}, inside, disallowed_tools=["Read(data.csv)"])
    assert denied[0] == "deny"


async def test_a_new_edit_tool_is_approved_by_accept_edits_inside_only(tmp_path):
    inside = Custom("save", "edit", writes=("out/report.md",))
    assert (await outcome(tmp_path, "save", {}, inside,
                          permission_mode="acceptEdits"))[0] == "allow"
    outside = Custom("save", "edit", writes=("/etc/cron.d/x",))
    assert (await outcome(tmp_path, "save", {}, outside,
                          permission_mode="acceptEdits"))[0] == "ask"
    protected = Custom("save", "edit", writes=(".git/config",))
    assert (await outcome(tmp_path, "save", {}, protected,
                          permission_mode="acceptEdits"))[0] == "ask"


@pytest.mark.parametrize(("tool", "tool_input", "rule"), [
    ("Bash", {"command": "make test"}, "Bash(make test)"),
    ("Python", {"code": "1"}, "Python"),
    ("InsertCell", {"code": "1"}, "InsertCell"),
    ("Write", {"file_path": "out/a.txt", "content": ""}, "Edit(./out/**)"),
    ("Write", {"file_path": "a.txt", "content": ""}, "Edit(./**)"),
    ("Edit", {"file_path": "/srv/data/a.txt", "old_string": "a", "new_string": "b"},
     "Edit(//srv/data/**)"),
    ("Read", {"file_path": "/srv/data/a.txt"}, "Read(//srv/data/**)"),
    ("frobnicate", {}, "frobnicate"),
])
async def test_suggestions_say_what_always_allow_adds(tmp_path, tool, tool_input, rule):
    _, recorder = await outcome(tmp_path, tool, tool_input, Undeclared())
    [suggestion] = recorder.contexts[0].suggestions
    assert suggestion.type == "addRules" and suggestion.behavior == "allow"
    assert [str(r) for r in suggestion.rules or []] == [rule]


async def test_the_suggested_rule_for_a_file_in_the_working_directory_covers_it(tmp_path):
    """`Edit(././**)` matched nothing: "Always allow" on a file in the cwd added a dead
    rule."""
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path, tools=all_tools())
    engine.apply(engine.suggestions("Write", {"file_path": "notes.md", "content": ""}))
    decision = await engine.decide("Write", {"file_path": "notes.md", "content": "x"}, "t")
    assert decision.behavior == "allow"


async def test_the_suggested_rule_allows_the_same_call_next_time(tmp_path):
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path, tools=all_tools())
    recorder = Recorder()
    engine.can_use_tool = recorder
    call = {"file_path": "/srv/data/a.txt"}
    assert (await engine.decide("Read", call, "t1")).behavior == "deny"
    engine.apply(recorder.contexts[0].suggestions)
    assert (await engine.decide("Read", call, "t2")).behavior == "allow"
    assert (await engine.decide("Read", {"file_path": "/srv/other/a.txt"}, "t3")
            ).behavior == "deny"


async def test_a_declaration_that_breaks_decides_nothing(tmp_path):
    class Broken(Custom):
        def reach(self, input: dict[str, Any]) -> Reach:
            raise RuntimeError("bug in a user's tool")

        def always_allow(self, input: dict[str, Any]) -> str:
            return "not a (valid rule"

    result, recorder = await outcome(tmp_path, "broken", {}, Broken("broken", "read"),
                                     allowed_tools=["broken"])
    # a read whose reach is unknown is not safe, and not even a rule approves it unasked
    assert result == "ask"
    assert "could not say" in (recorder.contexts[0].decision_reason or "")
    # its Always-allow suggestion is invalid, so none is offered
    engine = PermissionEngine(FuxiAgentOptions(), cwd=tmp_path,
                              tools=all_tools(Broken("broken", "read")))
    assert engine.suggestions("broken", {}) == []
