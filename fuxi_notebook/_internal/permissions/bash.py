"""Judging a Bash call: every part of the parsed command against rules and the boundary.

The analysis (`shell.py`) finds every simple command, substitution and redirection; this
module matches each part on its own. Deny rules see every part, wrappers stripped or not,
and a part whose command name is unknown cannot be proven safe from them (ask). Allow
needs every part allowed, every written file allowed, and a command that was fully parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from .paths import PathFacts, config_folders, inside_any, protected_reason
from .rules import Rule
from .shell.analysis import (
    SimpleCommand,
    analyse,
    critical_removal,
    is_interpreter,
    is_read_only,
)
from .shell.policy import safe_assignments
from .shell.reach import CommandReach, command_reach
from .shell.sed import sed_problem

__all__ = ["BashVerdict", "PathJudge", "judge_bash", "part_rules"]

#: commands a rule offered by "Always allow" never covers: they remove or destroy data
_DESTRUCTIVE = frozenset({"rm", "rmdir", "shred", "unlink", "truncate", "dd", "mkfs",
                          "wipefs"})

_ACCEPT_EDITS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
#: Flags that turn a harmless command into a writer or a code runner: a `*` rule for the
#: command never covers them (`Bash(find *)` does not approve `find . -fprint /x`).
_PREFIX_UNSAFE = {
    "find": frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint",
                       "-fprint0", "-fprintf"}),
    "rg": frozenset({"--pre", "--hostname-bin", "-z", "--search-zip"}),
}


@dataclass
class BashVerdict:
    """The judgement of one command line.

    Attributes:
        deny: why a deny rule (or a self-kill) blocks it.
        hard_ask: why it must be confirmed in every mode (ask rule, critical removal).
        soft_ask: why no rule or mode may auto-approve it (bypassPermissions still may).
        allowed: every part is covered by allow rules or the read-only set.
        read_only: every part is a read-only command inside the working directories.
        accept_edits: acceptEdits may approve it (file commands inside the working dirs).
        outside: the paths outside the working directories that a part reads or writes
            (then only a rule that names the command exactly approves it: not a bare
            `Bash`, not a `*`).
    """

    deny: str | None = None
    hard_ask: str | None = None
    soft_ask: list[str] = field(default_factory=list)
    allowed: bool = True
    read_only: bool = True
    outside: list[str] = field(default_factory=list)
    accept_edits: bool = True
    unanalysable: list[str] = field(default_factory=list)


def _matches_bash(rules: Iterable[Rule], cmd: SimpleCommand) -> Rule | None:
    texts = {" ".join(cmd.argv), " ".join(cmd.inner().argv)}
    for rule in rules:
        if not rule.names("Bash"):
            continue
        if rule.bash is None or any(rule.bash.fullmatch(t) for t in texts):
            return rule
    return None


class PathJudge(Protocol):
    """The engine's path rules, as the shell judge needs them."""

    roots: list[Path]

    def denied(self, facts: PathFacts, access: str) -> Rule | None: ...

    def allowed(self, facts: PathFacts, access: str) -> bool: ...

    def has_read_denies(self) -> bool: ...


def part_rules(command: str) -> list[str] | None:
    """What "Always allow" on `command` grants, when it is not one plain command: a rule
    per part that a rule may cover (a compound `wc -c x && rm -rf old` offers
    `Bash(wc -c x)`, never a rule for the removal); None: `command` is one simple command
    that is not destructive (its exact rule stands). Every part is judged on its own
    (`judge_bash`), so a rule for the whole compound text would approve nothing."""
    analysis = analyse(command)
    if analysis.problems:
        return []  # not fully understood: no rule is offered
    parts = [part for part in analysis.commands if not part.nested]
    safe = [part for part in parts if _coverable(part)]
    if len(analysis.commands) == 1 and len(safe) == 1:
        return None
    rules: list[str] = []
    for part in safe:
        rule = f"Bash({part.text.strip()})"
        if rule not in rules:
            rules.append(rule)
    return rules


def _coverable(part: SimpleCommand) -> bool:
    """A part a standing rule may approve: known words, no code runner, no removal."""
    inner = part.inner()
    if not inner.argv or any(part.dynamic) or is_interpreter(part):
        return False
    name = inner.argv[0].rsplit("/", 1)[-1]
    if name in _DESTRUCTIVE or (name == "find" and "-delete" in inner.argv):
        return False
    return not (name == "git" and inner.argv[1:2] == ("clean",))


def judge_bash(command: str, *, base: Path, rules: dict[str, list[Rule]], paths: PathJudge,
               refuse: Callable[[SimpleCommand], str | None]) -> BashVerdict:
    """Judge `command` run in `base` against deny/ask/allow `rules` and the path rules."""
    analysis = analyse(command)
    verdict = BashVerdict(unanalysable=list(analysis.problems))
    parts = [(cmd, command_reach(cmd, base)) for cmd in analysis.commands]
    verdict.deny = _first_deny(parts, rules["deny"], paths, refuse)
    if verdict.deny:
        return verdict
    verdict.hard_ask = _hard_ask(analysis.commands, rules, base, verdict.unanalysable)
    changes_dir = any(_name(cmd) == "cd" for cmd, _ in parts) and len(parts) > 1
    for cmd, found in parts:
        _judge_part(verdict, cmd, found, rules["allow"], paths, changes_dir)
    if verdict.unanalysable:
        verdict.allowed = verdict.read_only = verdict.accept_edits = False
    return verdict


def _name(cmd: SimpleCommand) -> str:
    inner = cmd.inner()
    return Path(inner.argv[0]).name if inner.argv else ""


def _first_deny(parts: list[tuple[SimpleCommand, CommandReach]], deny: list[Rule], paths: PathJudge,
                refuse: Callable[[SimpleCommand], str | None]) -> str | None:
    for cmd, found in parts:
        rule = _matches_bash(deny, cmd)
        if rule is not None:
            return f"denied by the rule {rule.text!r} ({' '.join(cmd.inner().argv)})"
        reason = refuse(cmd)
        if reason:
            return reason
        for facts, access in [*((f, "read") for f in found.reads),
                              *((f, "write") for f in found.all_writes())]:
            rule = paths.denied(facts, access)
            if rule is not None:
                return f"{facts.link} is denied by the rule {rule.text!r}"
    return None


def _hard_ask(commands: tuple[SimpleCommand, ...], rules: dict[str, list[Rule]], base: Path,
              problems: list[str]) -> str | None:
    for cmd in commands:
        rule = _matches_bash(rules["ask"], cmd)
        if rule is not None:
            return f"the rule {rule.text!r} asks for confirmation"
        reason = critical_removal(cmd, cwd=str(base), home=str(Path.home()))
        if reason:
            return f"it removes a critical path: {reason}"
    scoped = [r for r in rules["deny"] + rules["ask"] if r.names("Bash") and r.bash is not None]
    unknown_name = any(cmd.inner().dynamic[:1] == (True,) for cmd in commands)
    if scoped and (problems or unknown_name):
        return "the command cannot be fully analysed, so deny and ask rules cannot be checked"
    return None


def _rule_allows(rules: list[Rule], cmd: SimpleCommand, *, exact_only: bool = False) -> bool:
    """Whether an allow rule approves `cmd`; `exact_only`: only a rule without `*` (one
    that names the whole command, outside paths included)."""
    inner = cmd.inner()
    if not inner.argv or inner.dynamic[0]:
        return False
    if not safe_assignments(cmd):
        return False  # `PAGER=sh git log` would run something the rule never named
    text = " ".join(inner.argv)
    unsafe_flags = _PREFIX_UNSAFE.get(Path(inner.argv[0]).name, frozenset())
    risky = is_interpreter(cmd) or any(w.split("=", 1)[0] in unsafe_flags for w in inner.argv)
    for rule in rules:
        if not rule.names("Bash") or rule.bash is None:
            continue
        if (risky or exact_only) and "*" in (rule.specifier or ""):
            continue  # a prefix rule never approves an interpreter, runner or exec flag,
            # nor a command that leaves the working directories
        if rule.bash.fullmatch(text):
            return True
    return False


def _outside(facts: list[PathFacts], roots: list[Path], limit: int = 10) -> list[str]:
    """The first paths outside the working directories (a copied folder can hold many)."""
    found: list[str] = []
    for one in facts:
        if not all(inside_any(p, roots) for p in one.both()):
            found.append(str(one.link))
            if len(found) >= limit:
                break
    return found


def _judge_part(verdict: BashVerdict, cmd: SimpleCommand, found: CommandReach, allow: list[Rule],
                paths: PathJudge, changes_dir: bool) -> None:
    writes = found.all_writes()
    config = config_folders()
    for facts in writes:
        reason = protected_reason(facts, config=config)
        if reason:
            verdict.soft_ask.append(reason)
            break  # one protected path is reason enough (a copied folder can hold many)
    verdict.soft_ask.extend(r for r in found.soft if r not in verdict.soft_ask)
    outside = _outside([*found.reads, *writes], paths.roots)
    inside = not outside
    name = _name(cmd)
    sed = sed_problem(cmd.inner().argv) if name == "sed" else None
    if sed:  # it runs commands or touches files its arguments do not name (case 34)
        verdict.soft_ask.append(f"this sed command {sed}")
    dir_reads = paths.has_read_denies() and any(f.target.is_dir() for f in found.reads)
    # A substitution's output becomes part of another command: only a rule approves it.
    read_only = (is_read_only(cmd) and not cmd.nested and not writes and inside
                 and not found.unknown and not dir_reads and not (changes_dir and name == "git"))
    if changes_dir and (writes or name == "git"):
        verdict.soft_ask.append("it changes directory and then writes or runs git")
    verdict.outside.extend(p for p in outside if p not in verdict.outside)
    by_rule = _rule_allows(allow, cmd, exact_only=not inside) and not found.unknown and all(
        paths.allowed(f, "write") for f in found.redirect_writes)
    verdict.allowed = verdict.allowed and (read_only or by_rule)
    verdict.read_only = verdict.read_only and read_only
    editing = name in _ACCEPT_EDITS and not (name == "sed" and (not found.writes or sed))
    reads_only = is_read_only(replace(cmd, redirects=())) and not found.writes
    verdict.accept_edits = verdict.accept_edits and inside and not found.unknown and (
        reads_only or editing)
