"""Pathname expansion as bash performs it, so that a glob word is judged by what it reaches.

The parser hands over words with their quotes removed, so a `*`, `?` or `[` may have been
quoted (literal) or not (a pattern). Matching covers every reading: `*` and `?` are
wildcards (which match themselves too), and a `[` is a literal or opens a bracket that
matches any one character and may end at any later `]`. The rest follows bash's defaults:
dotglob off (a leading `.` is matched only by a written `.`), globstar off (`**` is `*`),
and a word that matches nothing stays as it is (callers judge the literal word as well).
Matching simulates the pattern state by state, never with a backtracking regex.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..paths import CASE_INSENSITIVE, PROTECTED_DIRS, PROTECTED_FILES, config_folders

__all__ = ["MAX_MATCHES", "Expansion", "expand", "has_glob", "pattern_protected"]

#: More matches than this and the word is not judged path by path (it asks).
MAX_MATCHES = 1000
#: Directory entries looked at while expanding the words of one command.
MAX_SCANNED = 100_000
#: A longer pattern component is not matched (the cost grows with its length): it asks.
MAX_COMPONENT = 100
_GLOB_CHARS = frozenset("*?[")


def has_glob(text: str) -> bool:
    """Whether bash may treat `text` as a pattern (quoted or not: a superset)."""
    return any(char in _GLOB_CHARS for char in text)


class _Component:
    """One path component of a pattern, matched as every reading of its quotes allows."""

    def __init__(self, text: str) -> None:
        while "**" in text:
            text = text.replace("**", "*")  # globstar is off: `**` is `*`
        self.text = text
        # a non-empty GLOBIGNORE turns dotglob on: then `*` matches a leading `.` too
        self.hidden = not text.startswith(".") and not os.environ.get("GLOBIGNORE")
        self.closers = {i: [j for j in range(i + 2, len(text)) if text[j] == "]"]
                        for i, char in enumerate(text) if char == "["}

    def _closure(self, states: set[int]) -> set[int]:
        """A `*` may match nothing: its state also stands at the next position."""
        todo = list(states)
        while todo:
            at = todo.pop()
            if at < len(self.text) and self.text[at] == "*" and at + 1 not in states:
                states.add(at + 1)
                todo.append(at + 1)
        return states

    def _step(self, at: int, char: str) -> list[int]:
        token = self.text[at]
        if token == "*":
            return [at]
        if token == "?":
            return [at + 1]
        if token == "[":
            return [*([at + 1] if char == "[" else []), *(j + 1 for j in self.closers[at])]
        return [at + 1] if _same(token, char) else []

    def matches(self, name: str) -> bool:
        """Whether bash could match `name` (a leading `.` must be written)."""
        if name.startswith(".") and self.hidden:
            return False
        states = self._closure({0})
        for char in name:
            states = self._closure({nxt for at in states if at < len(self.text)
                                    for nxt in self._step(at, char)})
            if not states:
                return False
        return len(self.text) in states


def _same(a: str, b: str) -> bool:
    return a == b or (CASE_INSENSITIVE and a.casefold() == b.casefold())


def _could_name(part: str, name: str) -> bool:
    """Whether a component as written (pattern or not) can be `name`."""
    if has_glob(part):
        return _Component(part).matches(name)
    return _same(part, name) if len(part) == len(name) else False


@dataclass(frozen=True)
class Expansion:
    """The words bash can make of a pattern word (matches only), or why it is unknown."""

    words: tuple[str, ...] = ()
    overflow: str | None = None


class _TooMany(Exception):
    pass


def expand(word: str, base: Path, scanned: list[int] | None = None) -> Expansion:
    """Every existing path `word` matches, as bash would pass it, relative to `base`;
    `scanned` counts the entries looked at, shared by the words of one command."""
    text = os.path.expanduser(word) if word.startswith("~") else word
    absolute = text.startswith("/")
    parts = text.split("/")[1:] if absolute else text.split("/")
    states: list[tuple[list[str], str]] = [([], "/" if absolute else str(base))]
    scanned = [0] if scanned is None else scanned
    try:
        for index, part in enumerate(parts):
            states = _advance(states, part, last=index == len(parts) - 1, scanned=scanned)
    except _TooMany as too_many:
        return Expansion(overflow=str(too_many))
    prefix = "/" if absolute else ""
    return Expansion(tuple(prefix + "/".join(shown) for shown, path in states
                           if os.path.lexists(path)))


def _advance(states: list[tuple[list[str], str]], part: str, *, last: bool,
             scanned: list[int]) -> list[tuple[list[str], str]]:
    """The paths after one more component: literal, or every entry the pattern matches."""
    if not has_glob(part):
        return [([*shown, part], os.path.join(path, part)) for shown, path in states]
    if len(part) > MAX_COMPONENT:
        raise _TooMany(f"the pattern component {part[:20]!r}... is too long to expand")
    component = _Component(part)
    out: list[tuple[list[str], str]] = []
    for shown, path in states:
        for name in _names(path, dots=part.startswith("."), scanned=scanned):
            full = os.path.join(path, name)
            if component.matches(name) and (last or os.path.isdir(full)):
                out.append(([*shown, name], full))
        if len(out) > MAX_MATCHES:
            raise _TooMany(f"the pattern {part!r} matches more than {MAX_MATCHES} paths")
    return out


def _names(folder: str, *, dots: bool, scanned: list[int]) -> list[str]:
    """Entry names of a folder; `.` and `..` too for a pattern with a leading dot (older
    bash, without globskipdots, matches them)."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return []  # bash skips what it cannot read: the pattern matches nothing there
    scanned[0] += len(names)
    if scanned[0] > MAX_SCANNED:
        raise _TooMany(f"expanding the pattern lists more than {MAX_SCANNED} entries")
    return [*names, ".", ".."] if dots else names


def pattern_protected(word: str, base: Path) -> str | None:
    """Why a pattern word can name a protected path, though nothing may match it now.

    A folder can be created between the check and the run; the pattern is judged by
    every name it can match, not by the files that happen to exist.
    """
    if not has_glob(word):
        return None
    text = os.path.expanduser(word) if word.startswith("~") else word
    full = text if text.startswith("/") else f"{base}/{text}"
    for parts in _readings(full):
        reason = _protected_parts(parts)
        if reason:
            return f"{word} is a pattern that can name {reason}, whatever exists now"
    return None


def _readings(full: str) -> list[list[str]]:
    """The components as written, and with the literal head's symlinks resolved."""
    written = _lexical(full.split("/"))
    head = next((i for i, part in enumerate(written) if has_glob(part)), len(written))
    real = _lexical(os.path.realpath("/" + "/".join(written[:head])).split("/"))
    return [written, real + written[head:]]


def _lexical(parts: list[str]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part not in ("", "."):
            out.append(part)
    return out


def _protected_parts(parts: list[str]) -> str | None:
    """Which protected folder, file or the config folder these components can name."""
    for directory in PROTECTED_DIRS:
        names = directory.split("/")
        for start in range(len(parts) - len(names) + 1):
            if all(_could_name(parts[start + k], n) for k, n in enumerate(names)):
                return f"a path inside the protected directory {directory}/"
    for name in PROTECTED_FILES:
        # only names a pattern must spell with a leading `.`: `*.json` or `*.py` in an
        # ordinary edit could name kernel.json or sitecustomize.py too, but such a file
        # is judged when it exists (the expansion), and one this command line creates is
        # judged where it is created; what is left is a process running alongside
        if name.startswith(".") and parts and _could_name(parts[-1], name):
            return f"the protected file {name}"
    for folder in config_folders():
        config = _lexical(str(folder).split("/"))
        if len(parts) >= len(config) and all(_could_name(p, n) for p, n in zip(
                parts, config, strict=False)):
            return f"a path inside the fuxi configuration folder ({'/' + '/'.join(config)}/)"
    return None
