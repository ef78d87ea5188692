"""File helpers shared by Read, Write and Edit: atomic writes and read-before-write checks."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from ..base import ToolContext, ToolError

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


def atomic_write(path: Path, content: str, *, expected: str | None = None) -> None:
    """Replace `path` with `content` so that readers see either the old or the new file.

    The text goes to a temporary file in the same directory, is flushed to disk, then
    renamed over the target. Whatever goes wrong (including cancellation), the original
    file stays intact and the temporary file is removed. Symlinks are written through.

    Both steps happen relative to a held descriptor of the directory, and `expected` (the
    real path approved by the permission check) must still be where the write lands: a
    directory swapped for a symlink between the check and the write cannot redirect it.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        landing = os.path.join(_held_path(dir_fd, target.parent), target.name)
        if expected is not None and os.path.normpath(landing) != os.path.normpath(expected):
            raise ToolError(
                f"{path} now leads to {landing}, not to {expected} as when the write was "
                "approved (a symlink changed?); nothing was written.")
        _replace_in(dir_fd, target.name, content.encode("utf-8"), _mode_for(target))
    finally:
        os.close(dir_fd)


def _held_path(dir_fd: int, fallback: Path) -> str:
    """The real path of an open directory (Linux: from /proc, immune to later renames)."""
    try:
        return os.readlink(f"/proc/self/fd/{dir_fd}")
    except OSError:
        return str(fallback)


def _replace_in(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    tmp_name = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp_name, flags, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode, dir_fd=dir_fd)
        os.replace(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name, dir_fd=dir_fd)
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
