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

from .paths import PathFacts, inside_any, path_problem, protected_reason, resolve_path
from .rules import Rule
from .shell import (
    SimpleCommand,
    analyse,
    critical_removal,
    is_interpreter,
    is_read_only,
)
from .shell_policy import safe_assignments
from .shell_sed import sed_problem

__all__ = ["BashVerdict", "PathJudge", "judge_bash"]

_NULL_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk"})
_READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "wc", "grep", "egrep",
                      "fgrep", "rg", "sed", "sort", "uniq", "cut", "diff", "cmp", "file", "stat",
                      "du", "ls", "tree", "find", "strings", "xxd", "od", "hexdump", "md5sum",
                      "sha1sum", "sha256sum", "base64", "awk", "cd"})
_WRITERS = frozenset({"touch", "mkdir", "rm", "rmdir", "mv", "tee", "chmod", "chown", "chgrp",
                      "truncate", "unlink", "shred"})
_COPIERS = frozenset({"cp", "install", "rsync", "ln"})
_FIRST_ARG_NOT_PATH = frozenset({"chmod", "chown", "chgrp"})
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


@dataclass
class _Paths:
    reads: list[PathFacts] = field(default_factory=list)
    writes: list[PathFacts] = field(default_factory=list)
    redirect_writes: list[PathFacts] = field(default_factory=list)
    unknown: bool = False

    def all_writes(self) -> list[PathFacts]:
        return [*self.writes, *self.redirect_writes]


def _args(cmd: SimpleCommand) -> list[tuple[str, bool]]:
    """Non-flag arguments of the inner command, with their dynamic flag."""
    inner = cmd.inner()
    words = list(zip(inner.argv[1:], inner.dynamic[1:], strict=True))
    return [(w, d) for w, d in words if not w.startswith("-") or d]


def _command_paths(cmd: SimpleCommand, base: Path) -> _Paths:
    """Files a command reads and writes (arguments and redirections)."""
    found = _Paths()
    inner = cmd.inner()
    name = Path(inner.argv[0]).name if inner.argv else ""
    args = _args(cmd)
    if name in _PATTERN_FIRST and args and "-e" not in inner.argv:
        args = args[1:]
    if name in _FIRST_ARG_NOT_PATH:
        args = args[1:]
    if name == "sed" and "-i" in " ".join(inner.argv):
        name = "sed-i"
    touches_files = name in _READERS or name in _WRITERS or name in _COPIERS or name == "sed-i"
    for index, (word, dynamic) in enumerate(args if touches_files else []):
        if dynamic:
            found.unknown = True  # a file command on a path we cannot know
            continue
        if path_problem(word):
            found.unknown = True
            continue
        facts = resolve_path(word, base)
        is_last = index == len(args) - 1
        if name in _WRITERS or name == "sed-i" or (name in _COPIERS and is_last):
            found.writes.append(facts)
        elif name in _READERS or name in _COPIERS:
            found.reads.append(facts)
    for redirect in cmd.redirects:
        if redirect.op in (">&", "<&", "<<", "<<-", "<<<") and not redirect.is_write:
            continue  # fd duplication, heredoc, herestring: no file involved
        if redirect.target is None:
            found.unknown = True
        elif redirect.target not in _NULL_DEVICES:
            target = resolve_path(redirect.target, base)
            (found.redirect_writes if redirect.is_write else found.reads).append(target)
    return found


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


def judge_bash(command: str, *, base: Path, rules: dict[str, list[Rule]], paths: PathJudge,
               refuse: Callable[[SimpleCommand], str | None]) -> BashVerdict:
    """Judge `command` run in `base` against deny/ask/allow `rules` and the path rules."""
    analysis = analyse(command)
    verdict = BashVerdict(unanalysable=list(analysis.problems))
    parts = [(cmd, _command_paths(cmd, base)) for cmd in analysis.commands]
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


def _first_deny(parts: list[tuple[SimpleCommand, _Paths]], deny: list[Rule], paths: PathJudge,
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


def _judge_part(verdict: BashVerdict, cmd: SimpleCommand, found: _Paths, allow: list[Rule],
                paths: PathJudge, changes_dir: bool) -> None:
    writes = found.all_writes()
    for facts in writes:
        reason = protected_reason(facts)
        if reason:
            verdict.soft_ask.append(reason)
    outside = [str(f.link) for f in [*found.reads, *writes]
               if not all(inside_any(p, paths.roots) for p in f.both())]
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
