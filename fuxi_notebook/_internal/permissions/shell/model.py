"""The result types of the shell analysis, and wrapper stripping.

Kept apart from the parser so that policy code and the permission engine can use the
types without importing tree-sitter.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

__all__ = ["Redirect", "ShellAnalysis", "SimpleCommand", "strip_wrappers"]

_NAME_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Redirect:
    """One redirection as bash will perform it."""

    op: str
    fd: int | None
    target: str | None
    is_write: bool
    raw: str


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: what bash will execute, with its words normalised."""

    argv: tuple[str, ...]
    dynamic: tuple[bool, ...]
    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    text: str
    nested: bool
    #: Per word: contains an unquoted glob character, so bash may expand it into other
    #: words (a file named `-delete`). Empty when unknown: then every glob counts.
    globbed: tuple[bool, ...] = ()

    def inner(self) -> SimpleCommand:
        """The command with wrappers (`timeout 5`, `nohup`, `env A=1` ...) removed.

        Deny rules must see `rm` in `timeout 5 rm x`; `env NAME=value` arguments move to
        `assignments` because they act like leading assignments.
        """
        stripped = strip_wrappers(self.argv)
        cut = len(self.argv) - len(stripped)
        if cut == 0:
            return self
        moved = tuple(w for w in self.argv[:cut] if _NAME_VALUE.match(w))
        return replace(self, argv=stripped, dynamic=self.dynamic[cut:],
                       assignments=self.assignments + moved, globbed=self.globbed[cut:])


@dataclass(frozen=True)
class ShellAnalysis:
    """Every simple command of a command string, and why it may not be fully analysable."""

    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]

    @property
    def analysable(self) -> bool:
        """True when nothing in the string escaped the analysis."""
        return not self.problems


def strip_wrappers(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Repeatedly drop leading wrapper commands that run their arguments as a command.

    A wrapper is only stripped when a command follows it, so `nohup` alone stays `nohup`.
    """
    while argv:
        skip = _WRAPPERS.get(os.path.basename(argv[0]))
        n = skip(argv) if skip else 0
        if n <= 0 or n >= len(argv):
            return argv
        argv = argv[n:]
    return argv


# Each wrapper function returns how many leading words of argv the wrapper takes,
# 0 when argv is not a plain use of the wrapper (unknown options, `command -v`).


def _skip_options(argv: tuple[str, ...], with_value: frozenset[str],
                  flags: frozenset[str]) -> int | None:
    """Index after the options in argv[1:]; None on an option the wrapper does not know."""
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        arg = argv[i]
        name, eq, _ = arg.partition("=")
        if arg == "--":
            return i + 1
        if arg in flags:
            i += 1
        elif arg in with_value:
            i += 2  # -s KILL, --signal KILL
        elif (eq and name.startswith("--") and name in with_value) or (
                not arg.startswith("--") and arg[:2] in with_value):
            i += 1  # --signal=KILL, -sKILL
        else:
            return None
    return i


def _timeout(argv: tuple[str, ...]) -> int:
    i = _skip_options(argv, frozenset({"-s", "--signal", "-k", "--kill-after"}),
                      frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}))
    return 0 if i is None else i + 1  # the duration


def _time(argv: tuple[str, ...]) -> int:
    if argv[1:2] == ("-p",):
        return 2
    return 0 if argv[1:2] and argv[1].startswith("-") else 1


def _nice(argv: tuple[str, ...]) -> int:
    if len(argv) > 1 and re.fullmatch(r"-\d+", argv[1]):
        return 2
    i = _skip_options(argv, frozenset({"-n", "--adjustment"}), frozenset())
    return i or 0


def _stdbuf(argv: tuple[str, ...]) -> int:
    i = _skip_options(argv, frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
                      frozenset())
    return i or 0


def _command(argv: tuple[str, ...]) -> int:
    """`command rm` and `command -p rm` run rm; `command -v rm` only looks it up."""
    i = 1
    while i < len(argv) and argv[i] in ("-p", "--"):
        i += 1
        if argv[i - 1] == "--":
            break
    if i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        return 0
    return i


def _bare(argv: tuple[str, ...]) -> int:
    """Wrappers without options (`nohup`, `builtin`, bare `xargs`)."""
    if len(argv) > 1 and argv[1].startswith("-"):
        return 0
    return 1


def _env(argv: tuple[str, ...]) -> int:
    """`env A=1 rm x` runs rm; any option (`env -i`, `env -S`) makes it no plain wrapper."""
    i = 1
    while i < len(argv) and _NAME_VALUE.match(argv[i]):
        i += 1
    if i < len(argv) and argv[i].startswith("-"):
        return 0
    return i


_WRAPPERS: dict[str, Callable[[tuple[str, ...]], int]] = {
    "timeout": _timeout, "time": _time, "nice": _nice, "nohup": _bare, "stdbuf": _stdbuf,
    "command": _command, "builtin": _bare, "noglob": _bare, "xargs": _bare, "env": _env,
}
