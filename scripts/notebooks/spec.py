"""The cells of an example notebook, as `scripts/record_notebooks.py` records them.

A spec module defines `TITLE` and `CELLS`: markdown and code cells, `%%fuxi` cells with the
model turns the fake Messages API plays for them (ignored when recording live) and the
approval buttons to click, and `restart()` markers (the kernel restarts there; the saved
notebook is what the next cell continues from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fuxi_notebook.testing import Turn, text, thinking, tool_use

__all__ = ["Cell", "code", "fuxi", "md", "restart", "text", "thinking", "tool_use"]


@dataclass
class Cell:
    """One cell of a spec (kind: markdown | code | restart)."""

    kind: str
    source: str = ""
    turns: list[Turn] = field(default_factory=list)
    clicks: list[str | tuple[str, str]] = field(default_factory=list)
    raises: bool = False  # the cell is expected to end in an error (tagged for nbval)


def md(source: str) -> Cell:
    return Cell("markdown", source.strip("\n"))


def code(source: str, *, raises: bool = False) -> Cell:
    return Cell("code", source.strip("\n"), raises=raises)


def fuxi(source: str, *turns: list[dict[str, Any]] | Turn,
         clicks: list[str | tuple[str, str]] | None = None) -> Cell:
    """A `%%fuxi` cell; `clicks` answer its approval cards in order: a button label, or
    (label, reason) to type a reason before clicking."""
    played = [t if isinstance(t, Turn) else Turn(list(t)) for t in turns]
    return Cell("code", source.strip("\n"), played, list(clicks or []))


def restart() -> Cell:
    return Cell("restart")
