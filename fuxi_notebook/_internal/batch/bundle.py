"""Folders that travel: the notebook's folder to a worker, what a run wrote back.

A Dask worker may be another machine, so a run never reads the batch's files where they
are: its task carries the notebook's folder as a zip (its data, its modules, `.fuxi/`),
made once for the whole batch, and the run sends back, as a zip, what it wrote (files new
or changed, the output notebook always). Unpacking takes regular files at relative paths
inside the target folder only (no `..`, no absolute path, no link), so a bundle cannot
write elsewhere. Version-control and cache folders do not travel; a folder too big to
send is one clear line (`MAX_BUNDLE_BYTES`).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath

from .params import BatchInputError

__all__ = ["MAX_BUNDLE_BYTES", "changed_files", "manifest", "pack", "unpack"]

#: the most a notebook's folder (uncompressed) may hold to be sent to the workers
MAX_BUNDLE_BYTES = 200_000_000
_SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints",
                      ".venv", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


def _files(folder: Path, leave_out: tuple[Path, ...]) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED
                         and (here / d).resolve() not in leave_out
                         and not (here / d).is_symlink())
        for name in sorted(names):
            path = here / name
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode):
                found.append(path)
    return found


def pack(folder: Path, *, leave_out: tuple[Path, ...] = ()) -> bytes:
    """The regular files under `folder` (not `leave_out`: the batch's own output folder),
    as a zip; over `MAX_BUNDLE_BYTES` is one clear line."""
    resolved = tuple(path.resolve() for path in leave_out)
    files = _files(folder, resolved)
    total = sum(path.stat().st_size for path in files)
    if total > MAX_BUNDLE_BYTES:
        raise BatchInputError(
            f"the notebook's folder {folder} holds {total / 1e6:.0f} MB, more than a batch "
            f"sends to its workers ({MAX_BUNDLE_BYTES / 1e6:.0f} MB): put the notebook in a "
            "folder with only what it needs")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in files:
            archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def _safe_name(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(p in ("", ".", "..") for p in path.parts):
        return None
    return path


def unpack(data: bytes, target: Path) -> list[Path]:
    """The zip's regular files written under `target` (created); anything that would land
    outside it, or is not a regular file, is left out. Returns what was written."""
    written = []
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            name = _safe_name(info.filename)
            kind = stat.S_IFMT(info.external_attr >> 16)
            if name is None or info.is_dir() or (kind and kind != stat.S_IFREG):
                continue
            path = target.joinpath(*name.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():
                path.unlink()
            with archive.open(info) as source, open(path, "wb") as sink:
                while chunk := source.read(1 << 20):
                    sink.write(chunk)
            written.append(path)
    return written


def _digest(path: Path) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            hasher.update(chunk)
    return hasher.hexdigest()


def manifest(folder: Path) -> dict[str, str]:
    """relative path -> digest of each regular file under `folder`."""
    return {path.relative_to(folder).as_posix(): _digest(path) for path in _files(folder, ())}


def changed_files(folder: Path, before: dict[str, str], always: tuple[str, ...] = ()) -> bytes:
    """A zip of the files under `folder` that are new or changed since `before`, and of
    `always` (relative paths)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for relative, digest in manifest(folder).items():
            if relative in always or before.get(relative) != digest:
                archive.write(folder / relative, relative)
    return buffer.getvalue()
