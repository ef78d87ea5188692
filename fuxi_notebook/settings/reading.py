"""Reading a repository's files safely: bounded, regular files only, never through a
symlink that leaves the folder they belong to.

A checkout is written by whoever wrote the repository. `FUXI.md -> ~/.ssh/id_rsa` would put
a private key into the system prompt (and so into an API request); a FIFO named
`settings.json` would block the session forever; a 2 GB `FUXI.md` would fill memory. So
every file read from a project goes through `read_inside`: it must resolve inside its
zone (the project's folder, or the git root above it), be a regular file, and only the
first `limit` characters are read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Outside", "ReadResult", "read_config", "read_inside"]


class Outside(ValueError):
    """The file cannot be read as a project file (the message says why, for a warning)."""


@dataclass(frozen=True)
class ReadResult:
    """A file's text (at most `limit` characters) and whether it was longer."""

    path: Path
    text: str
    truncated: bool


def read_inside(path: Path, zone: Path | None, limit: int) -> ReadResult | None:
    """The text of `path`, or None when there is no such file.

    `zone` None: no symlink check (the user's own files). Raises `Outside` when the file
    resolves outside `zone` or is not a regular file, and OSError / UnicodeDecodeError
    when it cannot be read.
    """
    if not os.path.lexists(path):
        return None
    real = Path(os.path.realpath(path))
    if zone is not None and not real.is_relative_to(os.path.realpath(zone)):
        raise Outside(f"{path} leads outside {zone} (to {real}); it was not read")
    if not real.exists():
        return None  # a dangling symlink is no file
    # O_NONBLOCK: a FIFO swapped in after the check must not block the open; O_NOFOLLOW:
    # nor may a symlink swapped in for the resolved path be followed.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(real, flags)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise Outside(f"{path} is not a regular file; it was not read")
        with os.fdopen(descriptor, encoding="utf-8", errors="strict") as handle:
            descriptor = -1
            text = handle.read(limit + 1)
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    return ReadResult(path=path, text=text[:limit], truncated=len(text) > limit)


def read_config(path: Path, zone: Path | None, limit: int, what: str) -> str | None:
    """A configuration file's whole text (None: no such file). Raises `Outside` as
    `read_inside` does, and ConfigurationError (naming `what` and the file) when it
    cannot be read or is longer than `limit`: half a configuration is never used."""
    from ..errors import ConfigurationError

    try:
        read = read_inside(path, zone, limit)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{what} {path} cannot be read: {error}") from None
    if read is None:
        return None
    if read.truncated:
        raise ConfigurationError(f"{what} {path} is larger than {limit} characters")
    return read.text
