"""The front matter of Markdown settings files (agents, commands): `---` lines around
`key: value` pairs, then the body.

It is the simple YAML such files use (`key: value`, a value continued on indented lines,
a list as `a, b`, `[a, b]` or `- a` lines, `|` / `>` blocks, quotes, `#` comments),
parsed here so that no YAML library is needed and a file's meaning does not depend on
which YAML library is installed.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FrontMatterError", "split_front_matter", "split_list"]

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)\Z")


class FrontMatterError(ValueError):
    """Why a file's front matter cannot be read."""


def split_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """The front matter (None when the file has none) and the body after it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise FrontMatterError("its front matter has no closing '---'") from None
    return _pairs(lines[1:end]), "\n".join(lines[end + 1:])


def split_list(text: str) -> list[str]:
    """`a, b` or `[a, 'b']` as a list of strings."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [_unquote(part) for part in text.split(",") if _unquote(part)]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if " #" in text:  # a trailing comment
        text = text.split(" #", 1)[0].rstrip()
    return text


def _pairs(lines: list[str]) -> dict[str, Any]:
    """`key: value` pairs, with lists and block scalars (see the module docstring)."""
    data: dict[str, Any] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line)
        if match is None or line[0].isspace():
            raise FrontMatterError(f"front matter line {line.strip()!r} is not 'key: value'")
        key, raw = match[1], match[2].strip()
        block: list[str] = []
        while index < len(lines) and (not lines[index].strip() or lines[index][0].isspace()):
            block.append(lines[index])
            index += 1
        data[key] = _value(key, raw, block)
    return data


def _value(key: str, raw: str, block: list[str]) -> Any:
    items = [line.strip() for line in block if line.strip()]
    if raw in ("|", ">", "|-", ">-") or (not raw and items and not items[0].startswith("- ")):
        joiner = "\n" if raw.startswith("|") else " "
        return joiner.join(items)
    if not raw and items:
        if not all(item.startswith("- ") for item in items):
            raise FrontMatterError(f"{key}: a list must be '- item' lines")
        return [_unquote(item[2:]) for item in items]
    if items:  # a plain value folded over indented lines, as YAML reads it
        return _unquote(" ".join([raw, *items]))
    return _unquote(raw)
