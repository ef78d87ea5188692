"""What a tool call touches, resolved: the paths it reads and writes, the host it fetches.

The tool declares its reach (`Tool.reach`, as written in the input); this module resolves
it, so every rule kind sees the same resolved paths. Shell commands are analysed in
`bash.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tools.base import Reach
from .paths import PathFacts, path_problem, resolve_path

__all__ = ["CallFacts", "call_facts", "normalise_host"]


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


def call_facts(tool: str, reach: Reach, cwd: Path) -> CallFacts:
    """The resolved facts of a call whose tool declared `reach`."""
    facts = CallFacts(tool=tool, dirs=reach.dirs)
    for text in reach.reads:
        _add(facts, facts.reads, text, cwd)
    for text in reach.writes:
        _add(facts, facts.writes, text, cwd)
    if reach.url is not None:
        facts.host = normalise_host(reach.url) or ""
    return facts


def normalise_host(url: str) -> str | None:
    """Lower-case IDNA host without a trailing dot, or None if the URL has no host (the
    WebFetch tool's own normalisation: the host judged is the host contacted)."""
    from ..tools.web.address import url_host

    return url_host(url)
