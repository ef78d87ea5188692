"""Redirect nodes of tree-sitter-bash as `Redirect` values.

tree-sitter files words that follow a redirect target under the redirect
(`ls > f -la` gives the redirect `> f -la`); bash passes them to the command, so they
are returned as extra argument words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .model import Redirect
from .words import node_text, normalise_word

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["REDIRECT_NODES", "ParsedRedirect", "heredoc_problem", "parse_redirect"]

REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DUP_TARGET = re.compile(r"\d+-?|-")
_FD_BEFORE = re.compile(r"(?:^|[\s;&|()])(?:\d+|\{[A-Za-z_]\w*\})$")

#: (redirects, argument words caught inside, end of the redirect proper, problems)
ParsedRedirect = tuple[list[Redirect], list["Node"], int, list[str]]


def parse_redirect(node: Node, source: bytes) -> ParsedRedirect:
    """The redirections in one redirect node (a heredoc may carry file redirects too)."""
    if node.type == "heredoc_redirect":
        return _heredoc(node, source)
    problems = _fd_prefix_problem(node, source)
    fd_node = node.child_by_field_name("descriptor")
    op = next((c.type for c in node.children if not c.is_named), "")
    if node.type == "herestring_redirect":
        dests = [c for c in node.named_children if c.type != "file_descriptor"]
    else:
        dests = node.children_by_field_name("destination")
    target = _target(dests[0]) if dests else ("-" if op.endswith("-") else None)
    end = dests[0].end_byte if dests else node.end_byte
    raw = source[node.start_byte:end].decode("utf-8", "surrogatepass")
    redirect = Redirect(op, _fd(fd_node), target, _is_write(op, target), raw)
    return [redirect], list(dests[1:]), end, problems


def _heredoc(node: Node, source: bytes) -> ParsedRedirect:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    op = next((c.type for c in node.children if c.type in ("<<", "<<-")), "<<")
    delimiter = re.sub(r"['\"\\]", "", node_text(start)) if start is not None else None
    end = start.end_byte if start is not None else node.end_byte
    raw = source[node.start_byte:end].decode("utf-8", "surrogatepass")
    found = [Redirect(op, _fd(node.child_by_field_name("descriptor")), delimiter, False, raw)]
    extra: list[Node] = []
    problems: list[str] = []
    for child in node.named_children:
        if child.type in ("file_redirect", "herestring_redirect"):
            more, words, _, issues = parse_redirect(child, source)
            found += more
            extra += words
            problems += issues
    return found, extra, end, problems


def heredoc_problem(node: Node) -> str | None:
    """An unquoted delimiter makes bash expand `$..` and `..` in the body.

    tree-sitter exposes `$(..)` there but not backticks, so both are problems.
    """
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    quoted = start is not None and any(q in node_text(start) for q in "'\"\\")
    if body is not None and not quoted and re.search(r"[$`]", node_text(body)):
        return "a here-document with an unquoted delimiter expands $.. and `..` in its body"
    return None


def _fd_prefix_problem(node: Node, source: bytes) -> list[str]:
    """`3>&1- 0<f`, `{fd}>f`: tree-sitter misses the fd bash reads right before `<`/`>`."""
    start = node.start_byte
    if node.child_by_field_name("descriptor") is not None or start == 0:
        return []
    if source[start - 1:start] not in b"0123456789}":
        return []
    window = source[max(0, start - 64):start].decode("utf-8", "replace")
    if _FD_BEFORE.search(window):  # a 64-digit fd is also flagged: fine, it fails closed
        text = node_text(node)[:40]
        return [f"a file-descriptor redirection that bash and the parser read differently: "
                f"{text!r}"]
    return []


def _fd(node: Node | None) -> int | None:
    text = node_text(node) if node is not None else ""
    return int(text) if text.isdigit() and len(text) < 10 else None


def _target(node: Node) -> str | None:
    word = normalise_word(node)
    return None if word.dynamic else word.text


def _is_write(op: str, target: str | None) -> bool:
    """Output to a file; `>&2`, `2>&1`, `>&-` only duplicate or close descriptors."""
    if op in _WRITE_OPS:
        return True
    if op == ">&":
        return target is None or not _DUP_TARGET.fullmatch(target)
    return False
