"""Reasons a bash command string cannot be fully analysed.

Two kinds: text that hides what runs (control characters, invisible Unicode, very long
commands) and syntax outside a small allowlist or read differently by bash and by
tree-sitter-bash. Every reason is a human-readable sentence shown with the approval.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from ...common.visible import hidden_reason
from .redirects import heredoc_problem
from .words import node_text

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["ALWAYS_ASK", "MAX_LENGTH", "node_problems", "shorten", "snippet", "text_problems"]

MAX_LENGTH = 10_000

#: Command names whose effect the analysis cannot see (they run strings as code,
#: define aliases, or rebind what later command names mean).
ALWAYS_ASK = frozenset({
    "eval", "exec", "source", ".", "coproc", "trap", "let", "enable", "alias", "hash",
})

_ALLOWED = frozenset({
    "program", "list", "pipeline", "command", "command_name", "word", "string",
    "string_content", "raw_string", "ansi_c_string", "number", "concatenation",
    "variable_assignment", "variable_assignments", "variable_name", "special_variable_name",
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "redirected_statement", "file_redirect", "file_descriptor", "heredoc_redirect",
    "heredoc_start", "heredoc_body", "heredoc_end", "heredoc_content", "herestring_redirect",
    "subshell", "negated_command", "comment",
})
_TOKENS = frozenset({
    "&&", "||", ";", "|", "|&", "&", '"', "$(", ")", "`", "<(", ">(", "(", "!", "=", "${",
    "}", "$", ">", ">>", ">|", "&>", "&>>", "<", ">&", "<&", ">&-", "<&-", "<<", "<<-",
    "<<<",
})
_PLAIN_EXPANSIONS = (["${", "variable_name", "}"], ["${", "special_variable_name", "}"])


def text_problems(command: str) -> list[str]:
    """Characters that hide text from the reader or that bash and the parser disagree on."""
    problems = []
    if len(command) > MAX_LENGTH:
        problems.append(f"the command is {len(command)} characters long; commands over "
                        f"{MAX_LENGTH} characters always need approval")
    found: dict[str, str] = {}
    for char in command:
        if char == "\n" or " " <= char < "\x7f" or char in found:
            continue
        reason = _char_reason(char)
        if reason:
            found[char] = reason
    shown = [f"the command contains {reason} (U+{ord(char):04X})"
             for char, reason in list(found.items())[:5]]
    if len(found) > 5:
        shown.append(f"the command contains {len(found) - 5} more hidden or control characters")
    return problems + shown


def _char_reason(char: str) -> str | None:
    if char == "\r":
        return "a carriage return, which bash keeps inside a word but the parser drops"
    if char == "\t":
        return "a tab, which can hide parts of the command when it is displayed"
    return hidden_reason(char)


def snippet(node: Node) -> str:
    """The node's text on one line, shortened for a message."""
    return shorten(node_text(node))


def shorten(text: str) -> str:
    """Text on one line, at most 60 characters, for a message."""
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def node_problems(node: Node, source: bytes) -> list[str]:
    """Allowlist of node kinds and operator tokens, plus known parser differentials.

    Tokens are checked by their parent, so a construct that is itself refused (an `if`)
    gives one reason, not one per keyword. `test_command` is checked by the walker.
    """
    kind = node.type
    if not node.is_named or kind == "test_command":
        return []
    if kind == "ERROR":
        return [f"cannot parse: {snippet(node)!r}"]
    if kind not in _ALLOWED:
        return [f"unsupported shell syntax ({kind.replace('_', ' ')}): {snippet(node)!r}"]
    if kind == "expansion":
        kinds = [child.type for child in node.children]
        ok = kinds in _PLAIN_EXPANSIONS
        return [] if ok else [f"parameter expansion with operators: {snippet(node)!r}"]
    problems = _differentials(node, source)
    for child in node.children:
        if child.is_named or child.is_missing:
            continue
        if child.type not in _TOKENS:
            problems.append(f"unsupported shell operator {child.type!r}")
        elif child.type == "$" and kind not in ("simple_expansion", "string"):
            problems.append("a `$` the parser drops (as in a `$\"...\"` translated "
                            f"string): {snippet(node)!r}")
    return problems


def _differentials(node: Node, source: bytes) -> list[str]:
    """Places where bash reads the text differently from tree-sitter."""
    problems = []
    if node.type == "command_substitution" and node_text(node).startswith("`") and (
            "\\" in node_text(node)):
        problems.append("backslashes inside backticks are unescaped by bash before the "
                        f"inner command runs: {snippet(node)!r}")
    if node.type == "heredoc_redirect":
        problem = heredoc_problem(node)
        if problem:
            problems.append(f"{problem}: {snippet(node)!r}")
    for left, right in itertools.pairwise(node.named_children):
        gap = source[left.end_byte:right.start_byte]
        if gap and not gap.replace(b"\\\n", b""):
            problems.append("a backslash-newline joins two words that the parser keeps "
                            f"apart: {snippet(node)!r}")
    return problems
