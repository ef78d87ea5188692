"""Judging one call against rules and the filesystem boundary, before any mode applies.

The result says what the rules alone conclude: denied, must-ask (in every mode), may not
be auto-approved (soft ask), allowed by a rule, or safe to run without asking (reads
inside the working directories). The engine combines it with the mode and callbacks.

What a call is comes from its tool's declaration (`tools/base.py`): its kind and what it
touches. No tool name is special here except in the rule language itself (`Bash(...)`
command rules, `Read(...)`/`Edit(...)` path rules, `WebFetch(domain:...)`, and
`Skill(name)`, which matches the name a call gives and is judged before the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tools.base import Declaration, ToolKind, reach_of
from .bash import judge_bash
from .facts import CallFacts, call_facts
from .paths import PathFacts, inside_any, protected_reason, resolve_path
from .rules import NAMED_RULES, Rule

__all__ = ["Judgement", "RuleBook"]


@dataclass
class Judgement:
    """What the rules conclude about one call (see the module docstring)."""

    deny: str | None = None
    hard_ask: str | None = None
    soft_ask: list[str] = field(default_factory=list)
    allowed: bool = False
    safe: bool = False
    accept_edits: bool = False
    changes: bool = False
    notes: list[str] = field(default_factory=list)
    targets: dict[str, str] = field(default_factory=dict)
    outside: list[str] = field(default_factory=list)


def _applies(rule: Rule, tool: str, access: str) -> bool:
    """Read rules cover every read, Edit rules every write; a Read deny blocks writes too."""
    if rule.tool == tool:
        return True
    if rule.tool == "Read":
        return access == "read" or (access == "write" and rule.behavior == "deny")
    return rule.tool == "Edit" and access == "write"


class RuleBook:
    """Rules by behavior plus the working directories; answers path questions too."""

    def __init__(self, rules: dict[str, list[Rule]], roots: list[Path]) -> None:
        self.rules = rules
        self.roots = roots

    def _path_rules(self, behavior: str, access: str, tool: str) -> list[Rule]:
        return [r for r in self.rules[behavior]
                if r.path is not None and _applies(r, tool, access)]

    def _first_match(self, behavior: str, facts: PathFacts, access: str,
                     tool: str) -> Rule | None:
        """The first `behavior` rule matching the link or the target."""
        for rule in self._path_rules(behavior, access, tool):
            assert rule.path is not None
            if any(rule.path.matches(p) for p in facts.both()):
                return rule
        return None

    def denied(self, facts: PathFacts, access: str, tool: str = "Bash") -> Rule | None:
        return self._first_match("deny", facts, access, tool)

    def asked(self, facts: PathFacts, access: str, tool: str = "Bash") -> Rule | None:
        return self._first_match("ask", facts, access, tool)

    def allowed(self, facts: PathFacts, access: str, tool: str = "Bash", *,
                as_dir: bool = False) -> bool:
        """An allow rule must match both the link and the target."""
        return any(rule.path is not None and all(rule.path.matches(p, as_dir=as_dir)
                                                  for p in facts.both())
                   for rule in self._path_rules("allow", access, tool))

    def has_read_denies(self, tool: str = "Bash") -> bool:
        return bool(self._path_rules("deny", "read", tool))

    def read_denied(self, path: Path, tool: str) -> bool:
        """Whether a file found by a search tool must be left out of its results."""
        facts = resolve_path(str(path), self.roots[0])
        return self.denied(facts, "read", tool) is not None

    def bare(self, behavior: str, tool: str) -> Rule | None:
        return next((r for r in self.rules[behavior]
                     if r.specifier is None and r.domain is None and r.names(tool)), None)

    def named(self, behavior: str, tool: str, tool_input: dict[str, Any]) -> Rule | None:
        """The first `behavior` rule naming what this call is about (`Skill(name)`)."""
        value = tool_input.get(NAMED_RULES.get(tool, ""))
        if not isinstance(value, str):
            return None
        return next((r for r in self.rules[behavior] if r.named is not None
                     and r.names(tool) and r.named.fullmatch(value)), None)

    def judge(self, tool: str, declared: Declaration | None, tool_input: dict[str, Any], *,
              cwd: Path, base: Path, refuse: Any) -> Judgement:
        """Judge one call of a tool declared as `declared` (None = unknown: an `execute`
        tool that touches nothing known); `base` is where relative shell paths resolve."""
        denied = self.named("deny", tool, tool_input)
        if denied is not None:
            return Judgement(deny=f"{tool} is denied by the rule {denied.text!r}")
        judged = self._judge(tool, declared, tool_input, cwd=cwd, base=base, refuse=refuse)
        settled = judged.deny is not None or judged.hard_ask is not None
        asked = None if settled else (self.named("ask", tool, tool_input)
                                      or self.bare("ask", tool))
        if asked is not None:  # a bare ask rule (`Write`, `mcp__server`) asks for every call
            judged.hard_ask = f"the rule {asked.text!r} asks for confirmation"
        if judged.deny is None and self.named("allow", tool, tool_input) is not None:
            judged.allowed = True  # the rule names this very thing, wherever it lives
        return judged

    def _judge(self, tool: str, declared: Declaration | None, tool_input: dict[str, Any], *,
               cwd: Path, base: Path, refuse: Any) -> Judgement:
        denied = self.bare("deny", tool)
        if denied is not None:
            return Judgement(deny=f"{tool} is denied by the rule {denied.text!r}")
        kind = declared.kind if declared is not None else "execute"
        reach = reach_of(declared, tool_input)
        if reach is None:
            return Judgement(allowed=self.bare("allow", tool) is not None, changes=True,
                             soft_ask=[f"{tool} could not say what this call touches"])
        if reach.command is not None:
            return self._judge_bash(reach.command, base, refuse)
        if kind == "ask":  # only a person can answer, in every mode
            return Judgement(hard_ask="the question needs an answer from the user")
        facts = call_facts(tool, reach, cwd)
        if facts.problems:
            problems = "; ".join(facts.problems)
            return Judgement(deny=f"The path cannot be safely resolved: {problems}")
        if facts.host is not None:
            return self._judge_host(tool, facts)
        if not reach.paths:
            # a tool whose reach is not paths: its kind alone says how far modes go
            return Judgement(allowed=self.bare("allow", tool) is not None,
                             safe=kind == "read", accept_edits=kind == "edit",
                             changes=kind != "read")
        return self._judge_paths(tool, kind, facts)

    def _judge_bash(self, command: str, base: Path, refuse: Any) -> Judgement:
        verdict = judge_bash(command, base=base, rules=self.rules, paths=self, refuse=refuse)
        bare_allow = self.bare("allow", "Bash") is not None
        soft = list(verdict.soft_ask)
        return Judgement(
            deny=verdict.deny, hard_ask=verdict.hard_ask,
            soft_ask=soft if bare_allow else soft + verdict.unanalysable,
            allowed=(bare_allow and not verdict.outside) or verdict.allowed,
            safe=verdict.read_only,
            accept_edits=verdict.accept_edits, changes=not verdict.read_only,
            outside=list(verdict.outside),
            notes=[f"{path} is outside the working directories" for path in verdict.outside])

    def _judge_host(self, tool: str, facts: CallFacts) -> Judgement:
        host = facts.host or ""
        for behavior in ("deny", "ask", "allow"):
            for rule in self.rules[behavior]:
                if rule.names(tool) and rule.domain and rule.domain.fullmatch(host):
                    if behavior == "deny":
                        return Judgement(deny=f"{host} is denied by the rule {rule.text!r}")
                    if behavior == "ask":
                        return Judgement(hard_ask=f"the rule {rule.text!r} asks")
                    return Judgement(allowed=True)
        return Judgement(allowed=self.bare("allow", tool) is not None)

    def _judge_paths(self, tool: str, kind: ToolKind, facts: CallFacts) -> Judgement:
        result = Judgement(changes=kind != "read")
        accesses = [(f, "read") for f in facts.reads] + [(f, "write") for f in facts.writes]
        for path, access in accesses:
            rule = self.denied(path, access, tool)
            if rule is not None:
                return Judgement(deny=f"{path.link} is denied by the rule {rule.text!r}")
            rule = self.asked(path, access, tool)
            if rule is not None and result.hard_ask is None:
                result.hard_ask = f"the rule {rule.text!r} asks for {path.link}"
        result.targets = {str(f.link): str(f.target) for f in facts.writes}
        inside = self._boundary(result, facts)
        covered = bool(accesses) and all(self.allowed(p, a, tool, as_dir=facts.dirs)
                                         for p, a in accesses)
        # a bare allow rule covers the working directories; outside them only a rule that
        # names the path does (`Read(~/data/**)`), else the user is asked
        result.allowed = (self.bare("allow", tool) is not None and inside) or covered
        result.safe = kind == "read" and inside
        result.accept_edits = kind == "edit" and inside and not result.soft_ask
        return result

    def _boundary(self, result: Judgement, facts: CallFacts) -> bool:
        """Protected writes become soft asks; returns whether every path is inside."""
        for path in facts.writes:
            reason = protected_reason(path)
            if reason:
                result.soft_ask.append(reason)
        inside = True
        for path in [*facts.reads, *facts.writes]:
            if not all(inside_any(p, self.roots) for p in path.both()):
                result.notes.append(f"{path.link} is outside the working directories")
                result.outside.append(str(path.link))
                inside = False
        return inside
