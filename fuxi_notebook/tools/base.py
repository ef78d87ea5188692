"""What a tool is: a name, a schema, a read-only flag and an async `run`.

Tools never raise for the model's mistakes: they raise `ToolError` (or return a
`ToolOutput` with `is_error=True`), which the loop turns into an `is_error` tool result.
This module imports nothing from the rest of the package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["Tool", "ToolContext", "ToolError", "ToolOutput"]


class ToolError(Exception):
    """A failure the model should read and can act on (bad path, no match, ...)."""


@dataclass
class ToolOutput:
    """A tool's answer: text, or a list of wire content blocks (text / image)."""

    content: str | list[dict[str, Any]]
    is_error: bool = False


@dataclass
class ToolContext:
    """The session state a tool may use.

    Attributes:
        cwd: the session's working directory; relative paths resolve against it.
        add_dirs: extra working directories.
        env: extra environment variables for subprocesses.
        shell_cwd: the Bash tool's persistent working directory (None = `cwd`).
        read_files: absolute path -> mtime_ns when the file was last read or written by
            the agent; Edit and Write refuse files the agent has not read, or that
            changed since.
        approved_targets: for the call being run, path as written -> real path that the
            permission check approved; a write that would land elsewhere is refused.
        read_denied: `(path, tool name) -> bool`: files a search must leave out of its
            results because a deny rule forbids reading them (None = no such rules).
    """

    cwd: Path
    add_dirs: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    shell_cwd: Path | None = None
    read_files: dict[str, int] = field(default_factory=dict)
    approved_targets: dict[str, str] = field(default_factory=dict)
    read_denied: Callable[[Path, str], bool] | None = None

    def resolve(self, path: str) -> Path:
        """`path` made absolute against `cwd` (`~` expanded), without resolving symlinks."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        return Path(_normalize(candidate))


def _normalize(path: Path) -> str:
    import os.path

    return os.path.normpath(str(path))


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Execute the call; raise `ToolError` for failures the model should see."""
        ...
