"""The undo journal: each finished agent cell's changes on disk, so that `%fuxi undo` can
take them back after a kernel restart (the kernel's own memory of them is gone then).

One entry per agent cell run: which files it changed (each one's state before, as a
`Change`, and as the cell left it, as a `FileState`), the earlier bytes a restore needs
(they are kept in memory only, by the notebook's file checkpoints), the cell changes the
cell tools made (plain JSON, as the notebook's comm carried them), the kernel names it
changed (only named: they cannot come back in a new kernel) and whether it was undone.

Where: under the user folder, `<user folder>/undo/<notebook key>/<entry>/`, the key a
digest of the notebook's absolute path, the entry named by the time it was written (so
the oldest sorts first). `entry.json` and one file per kept copy, named by its digest.
Every folder is 0700 and every file 0600: the copies are the user's files, exactly as
they were (private data, like the checkpoints; only what is shown is redacted, by the
caller). An entry is written in a temporary folder renamed into place, so a reader finds
it whole or not at all; marking it undone replaces `entry.json` whole.

Bounded, over every notebook: at most `FUXI_UNDO_MAX_KEPT_MB` (default 64) of entries
and copies, and at most `FUXI_UNDO_MAX_CELLS` (default 100) entries; the oldest go first.
A cell's newer run replaces its earlier runs not undone, as the kernel's memory does.

Read back, an entry is checked as a file the product did not write (a user's disk is
anyone's): read by `common/reading.py`, the one bounded reader, it must be ours (owned by
this user, a folder not a link), of this notebook, of a version this code reads, and of
the right shape; anything else is treated as absent, with one line saying why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..common.atomic_file import write_atomically
from ..common.private_dirs import PRIVATE_DIR_MODE, make_private_dirs
from ..common.reading import Unreadable, load_json, read_bounded
from .history import ABSENT, UNKNOWN, Change, FileHistory
from .restore import FileState
from .watch import FileCheckpoints, Limits

__all__ = ["FORMAT", "VERSION", "JournalEntry", "JournalLimits", "UndoJournal"]

#: what an entry says it is, and the newest layout this code reads and writes
FORMAT = "fuxi-undo-journal"
VERSION = 1
_ENTRY_FILE = "entry.json"
#: an entry's folder: the time it was written (ns, so the oldest sorts first), a nonce
_ENTRY_NAME = re.compile(r"[0-9]{20}-[0-9a-f]{8}")
_NOTEBOOK_KEY = re.compile(r"[0-9a-f]{32}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_TEMPORARY = ".tmp-"
#: a temporary folder older than this was left by a process that stopped mid-write
_STALE_SECONDS = 3600
_FILE_KINDS = frozenset({"absent", "file", "link", "folder", "other"})
_SHORT = 1000  # characters at most of a cell id, a label, a name, what happened to it
#: this user (an entry owned by anyone else is not ours); where there are no user ids,
#: every file's owner reads as 0, and so does this
_UID = os.getuid() if hasattr(os, "getuid") else 0


@dataclass(frozen=True)
class JournalLimits:
    """What the journal keeps at most (see the module docstring); `file_bytes`: the most
    a kept copy may be read back as (`FUXI_UNDO_MAX_FILE_MB`)."""

    bytes: int
    entries: int
    file_bytes: int

    @classmethod
    def from_env(cls) -> JournalLimits:
        limits = Limits.from_env()
        raw = os.environ.get("FUXI_UNDO_MAX_CELLS", "").strip()
        try:
            entries = int(float(raw)) if raw else 100
        except ValueError:
            entries = 100
        return cls(limits.kept_bytes, max(entries, 1), limits.file_bytes)


@dataclass
class JournalEntry:
    """One agent cell run's changes as the journal keeps them.

    Attributes:
        cell_id: the agent cell.
        label: its prompt's first line (as shown: the caller redacts it).
        roots: the working folders a restore lands inside.
        files: each changed file's state before the cell and as the cell left it.
        cell_ops: the cell tools' changes, in order (`kind`, `cell`, `before`, `after`).
        names: each kernel name the cell changed, and what happened to it.
        at: when the cell ended (seconds since the epoch).
        undone: `%fuxi undo` took it back.
        id: its folder's name once written.
    """

    cell_id: str
    label: str
    roots: list[str]
    files: dict[str, tuple[Change, FileState | None]] = field(default_factory=dict)
    cell_ops: list[dict[str, Any]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    at: float = 0.0
    undone: bool = False
    id: str = ""


class JournalRefused(Exception):
    """An entry the journal does not keep (too big for its cap): one line."""


class UndoJournal:
    """One notebook's entries in the journal (see the module docstring)."""

    def __init__(self, root: Path, notebook: str, limits: JournalLimits | None = None
                 ) -> None:
        self.root = root
        self.notebook = notebook
        self.folder = root / hashlib.sha256(notebook.encode("utf-8", "surrogatepass")
                                            ).hexdigest()[:32]
        self.limits = limits if limits is not None else JournalLimits.from_env()

    @classmethod
    def of_notebook(cls, path: str) -> UndoJournal:
        """The journal of the notebook at `path` (relative: to the working folder), under
        the user folder (pinned at `%load_ext`)."""
        from ..common.switches import config_dir

        notebook = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
        return cls(config_dir() / "undo", notebook)

    # -- writing --

    def write(self, entry: JournalEntry, blobs: Mapping[str, bytes]) -> list[str]:
        """Keep `entry` with the earlier bytes of its files (`blobs`, by digest); sets
        `entry.id`. Returns what could not be kept for after a restart, one line each
        (a copy past the cap). Raises JournalRefused (the entry alone is over the cap) or
        OSError, having kept nothing."""
        notes, kept = self._fit(entry, blobs)
        data = self._encode(entry)
        if len(data) + sum(map(len, kept.values())) > self.limits.bytes:
            raise JournalRefused("it is over the undo journal's cap (FUXI_UNDO_MAX_KEPT_MB)")
        make_private_dirs(self.folder)
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}"
        temporary = self.folder / f"{_TEMPORARY}{secrets.token_hex(8)}"
        os.mkdir(temporary, PRIVATE_DIR_MODE)
        try:
            os.chmod(temporary, PRIVATE_DIR_MODE)  # whatever the umask took
            for digest, copy in kept.items():
                write_atomically(temporary / digest, copy, mode=0o600, suffix=".fuxi")
            write_atomically(temporary / _ENTRY_FILE, data, mode=0o600, suffix=".fuxi")
            os.rename(temporary, self.folder / name)  # the entry appears whole
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        entry.id = name
        self._replaced(entry)
        self._prune(keep=name)
        return notes

    def _fit(self, entry: JournalEntry, blobs: Mapping[str, bytes]
             ) -> tuple[list[str], dict[str, bytes]]:
        """The copies that fit the cap (smallest first); a file whose copy does not is
        kept as not undoable (`UNKNOWN`), and named."""
        room, kept, notes = self.limits.bytes, {}, []
        wanted = sorted(((path, before) for path, (before, _after) in entry.files.items()
                         if _DIGEST.fullmatch(before.before)), key=lambda item: item[1].size)
        for path, before in wanted:
            copy = blobs.get(before.before)
            if copy is not None and (before.before in kept or len(copy) <= room):
                if before.before not in kept:
                    kept[before.before] = copy
                    room -= len(copy)
                continue
            entry.files[path] = (Change(path, UNKNOWN, before.mode, before.size, before.call),
                                 entry.files[path][1])
            notes.append(f"file {path}: its earlier content ({before.size:,} bytes) does not "
                         "fit the undo journal (FUXI_UNDO_MAX_KEPT_MB): it cannot be undone "
                         "after a kernel restart")
        return notes, kept

    def _encode(self, entry: JournalEntry) -> bytes:
        files = [{"change": asdict(before), "after": asdict(after) if after else None}
                 for before, after in entry.files.values()]
        return json.dumps({
            "format": FORMAT, "version": VERSION, "notebook": self.notebook,
            "cell": entry.cell_id, "label": entry.label, "at": entry.at,
            "undone": entry.undone, "roots": entry.roots, "files": files,
            "cells": entry.cell_ops, "names": entry.names}, ensure_ascii=False,
            separators=(",", ":")).encode("utf-8", "surrogatepass")

    def mark_undone(self, entry: JournalEntry) -> None:
        """Say on disk that `entry` was undone (nothing if it is gone: pruned, or its
        cell ran again). Raises OSError or Unreadable (its file is not ours any more)."""
        folder = self.folder / entry.id
        if not entry.id or not os.path.isdir(folder):
            return
        raw = self._raw(folder)
        raw["undone"] = True
        write_atomically(folder / _ENTRY_FILE, json.dumps(
            raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"),
            mode=0o600, suffix=".fuxi")

    def _replaced(self, entry: JournalEntry) -> None:
        """The cell's earlier runs not undone are gone: this run replaces them."""
        for name, folder in self._entry_folders(self.folder):
            if name == entry.id:
                continue
            with contextlib.suppress(Unreadable, OSError):
                raw = self._raw(folder)
                if raw.get("cell") == entry.cell_id and raw.get("undone") is not True:
                    shutil.rmtree(folder)

    def _prune(self, keep: str) -> None:
        """The oldest entries of every notebook go while the journal is over its caps;
        temporary folders a stopped process left go too."""
        found: list[tuple[str, Path, int]] = []
        for _key, notebook in _folders(self.root, _NOTEBOOK_KEY):
            self._sweep(notebook)
            found += [(name, folder, _size(folder))
                      for name, folder in self._entry_folders(notebook)]
        found.sort()
        count, total = len(found), sum(size for _name, _folder, size in found)
        for name, folder, size in found:
            if count <= self.limits.entries and total <= self.limits.bytes:
                break
            if name == keep:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            count, total = count - 1, total - size
            with contextlib.suppress(OSError):
                folder.parent.rmdir()  # its notebook's last entry

    @staticmethod
    def _sweep(notebook: Path) -> None:
        with contextlib.suppress(OSError), os.scandir(notebook) as listing:
            for item in listing:
                if item.name.startswith(_TEMPORARY) and item.is_dir(follow_symlinks=False) \
                        and time.time() - item.stat(follow_symlinks=False).st_mtime \
                        > _STALE_SECONDS:
                    shutil.rmtree(item.path, ignore_errors=True)

    @staticmethod
    def _entry_folders(notebook: Path) -> list[tuple[str, Path]]:
        return _folders(notebook, _ENTRY_NAME)

    # -- reading --

    def read(self) -> tuple[list[JournalEntry], list[str]]:
        """This notebook's entries, oldest first, and one line for each entry that is
        treated as absent (corrupt, too big, from a newer version, not ours)."""
        entries: list[JournalEntry] = []
        notes: list[str] = []
        for name, folder in self._entry_folders(self.folder):
            try:
                entry = _parse(self._raw(folder), self.notebook, str(folder / _ENTRY_FILE))
            except Unreadable as why:
                notes.append(f"an undo journal entry was ignored: {why}")
                continue
            entry.id = name
            entries.append(entry)
        return entries, notes

    def _raw(self, folder: Path) -> dict[str, Any]:
        """An entry's JSON, read as a file the product did not write (Unreadable: not
        ours, too big, not JSON, not an object)."""
        where = str(folder / _ENTRY_FILE)
        for path, kind in ((folder, "folder"), (folder / _ENTRY_FILE, "file")):
            try:
                info = os.lstat(path)
            except OSError as error:
                raise Unreadable(f"{where}: {error.strerror or error}") from None
            is_kind = stat.S_ISDIR if kind == "folder" else stat.S_ISREG
            if not is_kind(info.st_mode) or info.st_uid != _UID:
                raise Unreadable(f"{where}: not ours (its {kind} is a link, another kind "
                                 "of file, or another user's)")
        data = read_bounded(folder / _ENTRY_FILE, limit=self.limits.bytes, where=where,
                            zone=folder)
        if data is None:
            raise Unreadable(f"{where} does not exist")
        raw = load_json(data, where)
        if not isinstance(raw, dict):
            raise Unreadable(f"{where}: not an undo journal entry")
        return raw

    def checkpoints(self, entry: JournalEntry) -> FileCheckpoints:
        """The file checkpoints an entry read back restores through: its working folders
        and the kept copies that are still exactly what was kept (a copy missing or
        changed is not kept: restoring its file then says so)."""
        history = FileHistory()
        checkpoints = FileCheckpoints([Path(root) for root in entry.roots], history)
        folder = self.folder / entry.id
        for before, _after in entry.files.values():
            digest = before.before
            if not _DIGEST.fullmatch(digest):
                continue
            with contextlib.suppress(Unreadable):
                copy = read_bounded(folder / digest, where=str(folder / digest), zone=folder,
                                    limit=min(before.size, self.limits.bytes))
                if copy is not None and hashlib.sha256(copy).hexdigest() == digest:
                    history.keep(copy)
        return checkpoints


def _folders(parent: Path, pattern: re.Pattern[str]) -> list[tuple[str, Path]]:
    """The folders (not links) in `parent` whose names are ours, sorted by name."""
    found = []
    with contextlib.suppress(OSError), os.scandir(parent) as listing:
        for item in listing:
            with contextlib.suppress(OSError):
                if pattern.fullmatch(item.name) and item.is_dir(follow_symlinks=False):
                    found.append((item.name, Path(item.path)))
    return sorted(found)


def _size(folder: Path) -> int:
    total = 0
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for item in listing:
            with contextlib.suppress(OSError):
                total += item.stat(follow_symlinks=False).st_size
    return total


# -- an entry's shape, checked --

def _parse(raw: dict[str, Any], notebook: str, where: str) -> JournalEntry:
    """An entry read back; Unreadable (one line) when it is not one this code wrote for
    this notebook."""
    if raw.get("format") != FORMAT:
        raise Unreadable(f"{where}: not an undo journal entry")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise Unreadable(f"{where}: not an undo journal entry (no version)")
    if version > VERSION:
        raise Unreadable(f"{where}: written by a newer fuxi_notebook (journal version "
                         f"{version}; this one reads {VERSION})")
    if raw.get("notebook") != notebook:
        raise Unreadable(f"{where}: not ours (it is another notebook's)")
    try:
        return JournalEntry(
            cell_id=_text(raw.get("cell")), label=_text(raw.get("label")),
            roots=[_absolute(root) for root in _list(raw.get("roots"))],
            files=dict(_file(item) for item in _list(raw.get("files"))),
            cell_ops=[_op(item) for item in _list(raw.get("cells"))],
            names={_text(k): _text(v) for k, v in _dict(raw.get("names")).items()},
            at=_number(raw.get("at")), undone=raw.get("undone") is True)
    except (TypeError, ValueError) as error:
        raise Unreadable(f"{where}: not an undo journal entry ({error})") from None


def _text(value: Any) -> str:
    if not isinstance(value, str) or len(value) > _SHORT:
        raise ValueError("a text field is not a short string")
    return value


def _absolute(value: Any) -> str:
    if not isinstance(value, str) or not os.path.isabs(value) or "\0" in value:
        raise ValueError("a path is not absolute")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("a list field is not a list")
    return value


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("an object field is not an object")
    return value


def _number(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError("a number field is not a number")
    return float(value)


def _whole(value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("a count field is not a whole number")
    return value


def _file(item: Any) -> tuple[str, tuple[Change, FileState | None]]:
    change, after = _dict(_dict(item).get("change")), _dict(item).get("after")
    path, before = _absolute(change.get("path")), _text(change.get("before"))
    if before not in (ABSENT, UNKNOWN) and not _DIGEST.fullmatch(before):
        raise ValueError("a file's earlier state is not understood")
    kept = Change(path, before, _whole(change.get("mode"), optional=True),
                  _whole(change.get("size")) or 0, _text(change.get("call", "")))
    if after is None:
        return path, (kept, None)
    after = _dict(after)
    what, digest = _text(after.get("what")), after.get("digest")
    if what not in _FILE_KINDS or not (digest is None or isinstance(digest, str)):
        raise ValueError("a file's state is not understood")
    return path, (kept, FileState(what, digest, _whole(after.get("mode"), optional=True),
                                  _whole(after.get("size")) or 0))


def _op(item: Any) -> dict[str, Any]:
    """A cell change as the cell tools noted it (its kind and cell; the rest is checked
    by the reader that makes it a `CellOp` again)."""
    op = _dict(item)
    _text(op.get("kind"))
    _text(op.get("cell"))
    return op
