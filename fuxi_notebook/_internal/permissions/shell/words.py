"""Turning tree-sitter-bash word nodes into the strings bash will pass as arguments.

Deny rules must match what bash executes, not what was typed: `r\\m`, `"r"m` and
`$'\\x72m'` all run `rm`. A word whose value depends on the environment (`$x`, `$(..)`,
brace expansion) is reported as dynamic and keeps its source text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Word", "decode_ansi_c", "node_text", "normalise_word"]

_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.DOTALL)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_GLOB = re.compile(r"(?<!\\)[*?]|(?<!\\)\[[^\]]*\]")
_BRACE = re.compile(r"(?<!\\)\{[^{}]*(?:,|\.\.)[^{}]*(?<!\\)\}")
_QUOTED_PART = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", re.DOTALL)


@dataclass(frozen=True)
class Word:
    """A normalised word; `glob` means it contains an unquoted glob character."""

    text: str
    dynamic: bool
    glob: bool = False


def node_text(node: Node) -> str:
    """The node's source text (tree-sitter works on UTF-8 bytes)."""
    return (node.text or b"").decode("utf-8", "surrogatepass")


def normalise_word(node: Node) -> Word:
    """The value bash gives a word node, or its source text marked dynamic."""
    kind = node.type
    text = node_text(node)
    if kind == "word":
        return _unquoted(text)
    if kind == "number":
        return Word(text, False)
    if kind == "raw_string":
        return Word(text[1:-1], False)
    if kind == "ansi_c_string":
        return Word(decode_ansi_c(text[2:-1]), False)
    if kind == "string":
        dynamic = any(c.is_named and c.type != "string_content" for c in node.children)
        return Word(text, True) if dynamic else Word(_unescape_dq(text[1:-1]), False)
    if kind == "concatenation":
        return _concatenation(node, text)
    return Word(text, True)


def _unquoted(text: str) -> Word:
    """An unquoted word: backslash escapes resolve, `\\<newline>` disappears."""
    if _BRACE.search(text):
        return Word(text, True)
    value = _UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)
    return Word(value, False, bool(_GLOB.search(text)))


def _unescape_dq(content: str) -> str:
    """Inside double quotes only `\\$ \\` \\" \\\\` and `\\<newline>` are escapes."""
    return _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), content)


def _concatenation(node: Node, text: str) -> Word:
    """Adjacent parts form one word; brace expansion makes it several, so dynamic."""
    parts = [normalise_word(child) for child in node.named_children]
    skeleton = _QUOTED_PART.sub("q", text)  # what bash sees unquoted
    glob = any(p.glob for p in parts) or bool(_GLOB.search(skeleton))
    if any(p.dynamic for p in parts) or _BRACE.search(skeleton):
        return Word(text, True, glob)
    return Word("".join(p.text for p in parts), False, glob)


def decode_ansi_c(body: str) -> str:
    """Decode the inside of `$'...'` like bash does; a NUL ends the string."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        if head in "xuU":
            code = int(esc[1:], 16)
            return chr(code) if code <= 0x10FFFF else match.group(0)
        if head.isdigit():
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_SIMPLE.get(esc, match.group(0))

    return _ANSI_ESCAPE.sub(one, body).split("\0", 1)[0]
