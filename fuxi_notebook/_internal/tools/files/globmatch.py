"""Glob patterns translated to regular expressions, with shell-like path semantics.

`fnmatch` lets `*` cross `/` and knows neither `**` nor `{a,b}`; the Glob tool needs all
three to behave the way models expect from `**/*.py` or `src/*.{js,ts}`.
"""

from __future__ import annotations

import re

__all__ = ["compile_glob", "glob_to_regex", "split_literal_prefix"]

_MAGIC = set("*?[{")


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A compiled regex that fully matches relative `/`-separated paths."""
    return re.compile(glob_to_regex(pattern), re.DOTALL)


def glob_to_regex(pattern: str) -> str:
    """Regex source for `pattern` (anchored at both ends).

    `**` as a whole path segment spans any number of directories (including none); `*`
    and `?` stay within one segment; `[...]` is a class (`[!...]` negated); `{a,b}` is
    alternation (nestable); a backslash escapes the next character.
    """
    return rf"\A{_translate(pattern)}\Z"


def split_literal_prefix(pattern: str) -> tuple[str, str]:
    """(leading directories without wildcards, the rest), e.g. `src/a/*.py` -> `src/a`."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part) or "\\" in part:
            break
        literal.append(part)
    rest = "/".join(parts[len(literal) :])
    prefix = "/".join(literal)
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    return prefix, rest


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            piece, i = _star(pattern, i)
        elif char == "?":
            piece, i = "[^/]", i + 1
        elif char == "[":
            piece, i = _char_class(pattern, i)
        elif char == "{":
            piece, i = _braces(pattern, i)
        elif char == "\\" and i + 1 < len(pattern):
            piece, i = re.escape(pattern[i + 1]), i + 2
        else:
            piece, i = re.escape(char), i + 1
        out.append(piece)
    return "".join(out)


def _star(pattern: str, i: int) -> tuple[str, int]:
    """`*`, or `**` when it is a whole segment (`**/`, `/**` at the end, or alone)."""
    if not pattern.startswith("**", i):
        return "[^/]*", i + 1
    end = i + 2
    while end < len(pattern) and pattern[end] == "*":
        end += 1
    at_start = i == 0 or pattern[i - 1] == "/"
    if at_start and pattern.startswith("/", end):
        return "(?:.*/)?", end + 1
    if at_start and end == len(pattern):
        return ".*", end
    return "[^/]*", end


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    """`[...]` as a regex class that never matches `/`; a lone `[` is literal."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    close = pattern.find("]", j)
    if close < 0:
        return re.escape("["), i + 1
    raw = pattern[i + 1 + negate : close]
    body = "".join("\\" + c if c in "\\]^[" else c for c in raw)
    if negate:
        return f"[^/{body}]", close + 1
    return f"(?!/)[{body}]", close + 1


def _braces(pattern: str, i: int) -> tuple[str, int]:
    """`{a,b,...}` as an alternation of translated parts; an unclosed `{` is literal."""
    depth = 0
    start = i + 1
    options: list[str] = []
    j = i
    while j < len(pattern):
        char = pattern[j]
        if char == "\\":
            j += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                options.append(pattern[start:j])
                return "(?:" + "|".join(_translate(o) for o in options) + ")", j + 1
        elif char == "," and depth == 1:
            options.append(pattern[start:j])
            start = j + 1
        j += 1
    return re.escape("{"), i + 1
