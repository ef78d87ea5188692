"""File helpers shared by Read, Write and Edit: atomic writes and read-before-write checks."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .base import ToolContext, ToolError

__all__ = [
    "atomic_write",
    "ensure_fresh",
    "number_line",
    "remember_file",
]


def number_line(number: int, line: str) -> str:
    """One line in `cat -n` style, so the model can cite and target line numbers."""
    return f"{number:>6}\t{line}"


def remember_file(ctx: ToolContext, path: Path) -> None:
    """Record that the agent has seen `path` as it is now (for Edit/Write checks)."""
    ctx.read_files[str(path)] = path.stat().st_mtime_ns


def ensure_fresh(ctx: ToolContext, path: Path) -> None:
    """Refuse to change an existing file the agent has not read, or that changed since.

    Writing blind would silently destroy content the model never saw; writing over a
    file someone else just changed would destroy their change.
    """
    recorded = ctx.read_files.get(str(path))
    if recorded is None:
        raise ToolError(f"File has not been read yet: {path}. Read it first before writing to it.")
    if path.stat().st_mtime_ns != recorded:
        raise ToolError(
            f"File {path} has been modified since it was last read (by the user or another "
            "process). Read it again before writing to it."
        )


def atomic_write(path: Path, content: str) -> None:
    """Replace `path` with `content` so that readers see either the old or the new file.

    The text goes to a temporary file in the same directory, is flushed to disk, then
    renamed over the target. Whatever goes wrong (including cancellation), the original
    file stays intact and the temporary file is removed. Symlinks are written through.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(target)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def _mode_for(target: Path) -> int:
    """Permission bits for the new file: the old file's, else the umask default."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_current_umask()


def _current_umask() -> int:
    """The process umask, read without changing it where possible (thread safety)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old
