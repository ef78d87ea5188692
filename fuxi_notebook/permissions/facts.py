"""What a tool call touches: the paths it reads and writes, the host it fetches.

The engine decides on these facts, not on raw inputs, so every rule kind sees the same
resolved paths. Shell commands are analysed in `bash.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..tools.globmatch import split_literal_prefix
from .paths import PathFacts, path_problem, resolve_path

__all__ = ["EDIT_TOOLS", "KERNEL_EDIT_TOOLS", "KERNEL_READ_TOOLS", "READ_TOOLS", "CallFacts",
           "call_facts", "normalise_host"]

READ_TOOLS = frozenset({"Read", "Glob", "Grep"})
EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
#: Kernel tools that only look at the live namespace or the notebook: safe like reads.
KERNEL_READ_TOOLS = frozenset({"Variables", "Inspect", "NotebookRead"})
#: Kernel tools that change what the user sees but run nothing: approved like edits.
KERNEL_EDIT_TOOLS = frozenset({"InsertCell"})


@dataclass
class CallFacts:
    """Resolved facts about one call.

    Attributes:
        reads: paths the call reads; `dirs` marks them as directory roots (Glob/Grep).
        writes: paths the call creates or changes.
        host: the normalised host a WebFetch call contacts.
        problems: reasons a path cannot be safely resolved (the call is denied).
    """

    tool: str
    reads: list[PathFacts] = field(default_factory=list)
    writes: list[PathFacts] = field(default_factory=list)
    dirs: bool = False
    host: str | None = None
    problems: list[str] = field(default_factory=list)


def _add(facts: CallFacts, target: list[PathFacts], text: Any, base: Path) -> None:
    if not isinstance(text, str) or not text:
        return
    problem = path_problem(text)
    if problem:
        facts.problems.append(f"{text!r}: {problem}")
        return
    target.append(resolve_path(text, base))


def call_facts(tool: str, tool_input: dict[str, Any], cwd: Path) -> CallFacts:
    """The facts of a non-shell call."""
    facts = CallFacts(tool=tool)
    if tool == "Read":
        _add(facts, facts.reads, tool_input.get("file_path"), cwd)
    elif tool in EDIT_TOOLS:
        _add(facts, facts.writes, tool_input.get("file_path") or tool_input.get("notebook_path"),
             cwd)
    elif tool in ("Glob", "Grep"):
        facts.dirs = True
        root = tool_input.get("path") or "."
        if tool == "Glob":
            # the same split the Glob tool uses, so the check covers what it searches
            prefix, _ = split_literal_prefix(str(tool_input.get("pattern", "")))
            root = prefix if prefix.startswith("/") else f"{root}/{prefix}" if prefix else root
        _add(facts, facts.reads, root, cwd)
    elif tool == "WebFetch":
        facts.host = normalise_host(str(tool_input.get("url", "")))
    return facts


def normalise_host(url: str) -> str | None:
    """Lower-case IDNA host without a trailing dot, or None if the URL has no host."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".").lower()
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host
