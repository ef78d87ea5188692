"""Putting one file back: the one restore that `%fuxi undo`, `rewind_files` and every
rewind of the file history go through.

Whatever happened since the change, a restore must not land anywhere else and must not
overwrite what someone changed since. So:

- the target is opened relative to the working folder that holds it, one component at a
  time, following no link at any level (`O_NOFOLLOW` on every folder and on the file): a
  folder swapped for a link since (to the user's site-packages, say) stops the restore;
  a path outside the working folders is refused;
- the file's state now (absent, a regular file with its digest and mode, or something
  else: a link, a folder) is read on that opened folder and compared with the state the
  caller expects before anything is written; a link at the file's own name is never
  written through and never replaced unless the caller expects exactly that link;
- the new content is written whole or not at all (a temporary file in the same opened
  folder, renamed over the name).

Every refusal is one line (`RestoreRefused`), which undo and rewinds name as not undone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileState", "RestoreRefused", "look", "put_back"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_READ_CHUNK = 1 << 20


class RestoreRefused(Exception):
    """A restore that did not happen, and why (one line)."""


@dataclass(frozen=True)
class FileState:
    """A path's state, no link followed: `what` is "absent", "file" (with the digest of
    its bytes, its permission bits and size), or what else is there ("link" with its
    target in `digest`, "folder", "other")."""

    what: str
    digest: str | None = None
    mode: int | None = None
    size: int = 0

    def describe(self) -> str:
        return {"absent": "missing", "file": "a file", "link": "a link",
                "folder": "a folder"}.get(self.what, "not a regular file")


ABSENT_STATE = FileState("absent")


def look(path: Path, roots: Sequence[Path], *, cap: int | None = None
         ) -> tuple[FileState, bytes | None]:
    """The state of `path` now and its bytes (a regular file of up to `cap` bytes; a
    bigger one is only digested), read as a restore reads it; RestoreRefused when the
    path is outside the working folders or a folder on it is a link or not a folder."""
    with _folder(path, roots, make=False) as held:
        if held is None:
            return ABSENT_STATE, None
        return _state_in(*held, cap=cap)


def put_back(path: Path, roots: Sequence[Path], data: bytes | None, mode: int | None, *,
             expect: FileState | None = None) -> FileState:
    """Make `path` hold `data` (with `mode`), or be absent (`data` None), if it is now as
    `expect` says (None: absent or any regular file); its state before. Raises
    RestoreRefused, having written nothing."""
    with _folder(path, roots, make=data is not None) as held:
        if held is None:  # a folder on the way is gone: the file is absent too
            _check(path, ABSENT_STATE, expect)
            return ABSENT_STATE
        folder, name = held
        now, _ = _state_in(folder, name, cap=0)
        _check(path, now, expect)
        if data is None:
            if now.what != "absent":
                _unlink(folder, name, path)
        else:
            _replace(folder, name, data, mode, path)
        return now


def _check(path: Path, now: FileState, expect: FileState | None) -> None:
    if expect is None:
        if now.what not in ("absent", "file"):
            raise RestoreRefused(f"{path} is {now.describe()} now: not written through or "
                                 "replaced")
        return
    if (now.what, now.digest, now.mode) != (expect.what, expect.digest, expect.mode):
        raise RestoreRefused(f"{path}: changed since (kept as it is)")


@contextlib.contextmanager
def _folder(path: Path, roots: Sequence[Path], *, make: bool
            ) -> Iterator[tuple[int, str] | None]:
    """The opened folder holding `path` and the file's name in it (None: a folder on the
    way is missing and `make` is off), walked from its working folder without following
    any link."""
    root, parts = _within(path, roots)
    fd = _open_folder(str(root), None, path, root)
    try:
        for part in parts[:-1]:
            try:
                inner = _open_folder(part, fd, path, root)
            except FileNotFoundError:
                if not make:
                    yield None
                    return
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                inner = _open_folder(part, fd, path, root)
            os.close(fd)
            fd = inner
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _within(path: Path, roots: Sequence[Path]) -> tuple[Path, list[str]]:
    """The working folder holding `path` (the innermost) and the names below it."""
    absolute = os.path.normpath(os.path.abspath(path))
    best: Path | None = None
    for root in roots:
        base = os.path.normpath(os.path.abspath(root))
        if absolute.startswith(base.rstrip(os.sep) + os.sep) and (
                best is None or len(base) > len(str(best))):
            best = Path(base)
    if best is None:
        raise RestoreRefused(f"{path} is outside the working folders: not restored")
    parts = os.path.relpath(absolute, best).split(os.sep)
    return best, parts


def _open_folder(name: str, fd: int | None, path: Path, root: Path) -> int:
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if fd is None:
            raise RestoreRefused(f"{path}: its working folder {root} is gone") from None
        raise
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            where = root if fd is None else f"{name!r} on its path"
            raise RestoreRefused(f"{path}: {where} is a link or not a folder now; nothing "
                                 "was written there") from None
        raise RestoreRefused(f"{path}: {error.strerror or error}") from None


def _state_in(folder: int, name: str, *, cap: int | None) -> tuple[FileState, bytes | None]:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return ABSENT_STATE, None
    except OSError as error:
        raise RestoreRefused(f"{name}: {error.strerror or error}") from None
    if stat.S_ISLNK(info.st_mode):
        return FileState("link", os.readlink(name, dir_fd=folder)), None
    if stat.S_ISDIR(info.st_mode):
        return FileState("folder"), None
    if not stat.S_ISREG(info.st_mode):
        return FileState("other"), None
    try:
        digest, size, data = _read(folder, name, cap)
    except OSError as error:  # swapped since the stat: for a link, ELOOP
        raise RestoreRefused(f"{name}: {error.strerror or error}") from None
    return FileState("file", digest, info.st_mode & 0o7777, size), data


def _read(folder: int, name: str, cap: int | None) -> tuple[str, int, bytes | None]:
    """The file's digest and size, and its bytes when they are within `cap`."""
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder)
    try:
        hasher, chunks, size = hashlib.sha256(), [], 0
        while chunk := os.read(fd, _READ_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
            if cap is None or size <= cap:
                chunks.append(chunk)
        return hasher.hexdigest(), size, (b"".join(chunks) if cap is None or size <= cap
                                          else None)
    finally:
        os.close(fd)


def _unlink(folder: int, name: str, path: Path) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except OSError as error:
        raise RestoreRefused(f"{path}: {error.strerror or error}") from None


def _replace(folder: int, name: str, data: bytes, mode: int | None, path: Path) -> None:
    temporary = f".{name}.{secrets.token_hex(6)}.fuxi"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600,
                     dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode if mode is not None else 0o644)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        if isinstance(error, OSError):
            raise RestoreRefused(f"{path}: {error.strerror or error}") from None
        raise
