"""The history of file changes a conversation's calls made, and rewinding it to a mark.

A change is one file's state *before* a call changed it (its bytes, kept by digest, or
"absent" when the call created it, or unknown when it was too big to keep). A mark names
a moment between changes: every user message the stream shows (the prompt, each tool
result) marks where it stood. The rule that makes rewinding simple: the state before the
first change after a mark is the file's content at that mark. So rewinding to a mark
restores, for each file changed after it, the state before its first change after it; a
file the calls created is removed. A rewind is recorded as changes too, so a later rewind
to a later mark still finds that moment (redo). Every file is put back through the one
restore (`restore.py`): relative to its working folder, no link followed at any level,
its state compared before anything is written.

With a folder, the history is kept on disk (`log.jsonl` and `blobs/`, private to the
user) and read back when the conversation resumes, as the comparable SDK's checkpoints
are; without one it lives in memory (the notebook's undo).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..common.atomic_file import write_atomically
from ..common.private_dirs import make_private_dirs
from .restore import FileState, RestoreRefused, look, put_back

__all__ = ["ABSENT", "UNKNOWN", "Change", "FileHistory", "Rewound"]

#: the file did not exist before the change (rewinding removes it)
ABSENT = "absent"
#: the file's earlier content was not kept (over the size caps): it cannot be restored
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Change:
    """One file's state before a call changed it.

    Attributes:
        path: the absolute path.
        before: the digest of its earlier bytes, `ABSENT` or `UNKNOWN`.
        mode: its permission bits then (None: absent or unknown).
        size: its size then, in bytes.
        call: the tool call that changed it (its `tool_use_id`; "rewind" for a rewind).
    """

    path: str
    before: str
    mode: int | None = None
    size: int = 0
    call: str = ""


@dataclass
class Rewound:
    """What a rewind did: files restored, files removed (the calls had created them) and
    files it could not restore, with why."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_undone: list[tuple[str, str]] = field(default_factory=list)

    @property
    def files_changed(self) -> list[str]:
        return [*self.restored, *self.removed]


class FileHistory:
    """The changes and marks of one conversation (see the module docstring)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.changes: list[Change] = []
        #: mark (a user message's uuid) -> how many changes came before it
        self.marks: dict[str, int] = {}
        self._blobs: dict[str, bytes] = {}
        #: bytes held in memory (kept copies not yet released)
        self.memory_bytes = 0
        #: digests the changes in memory need (without a folder, nothing is on disk)
        self._needed: set[str] = set()
        #: the working folders: a restore lands inside them or not at all
        self.roots: list[Path] = []
        self._holders: dict[str, int] = {}
        if folder is not None:
            self._load(folder)

    def keep(self, data: bytes) -> str:
        """Keep `data` in memory, once per holder (each `keep` is matched by a `release`);
        its digest."""
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._blobs:
            self._blobs[digest] = data
            self.memory_bytes += len(data)
        self._holders[digest] = self._holders.get(digest, 0) + 1
        return digest

    def release(self, digest: str | None) -> None:
        """One holder is done with a kept copy; the last one frees it, unless a change
        needs it in memory (with a folder, a change's copy is on disk)."""
        if digest is None or digest not in self._holders:
            return
        self._holders[digest] -= 1
        if self._holders[digest] > 0:
            return
        del self._holders[digest]
        if self.folder is None and digest in self._needed:
            return
        data = self._blobs.pop(digest, None)
        if data is not None:
            self.memory_bytes -= len(data)

    def blob(self, digest: str) -> bytes | None:
        data = self._blobs.get(digest)
        if data is None and self.folder is not None:
            with contextlib.suppress(OSError):
                data = (self.folder / "blobs" / digest).read_bytes()
        return data

    def mark(self, name: str) -> None:
        """A moment to rewind to (a user message's uuid)."""
        if name in self.marks:
            return
        self.marks[name] = len(self.changes)
        self._append({"mark": name, "at": self.marks[name]})

    def record(self, change: Change) -> None:
        """A call is about to change (or has changed) `change.path`, which was `before`."""
        if change.before not in (ABSENT, UNKNOWN):
            if self.folder is not None:
                self._write_blob(change.before)
            else:
                self._needed.add(change.before)
        self.changes.append(change)
        self._append({"change": asdict(change)})

    def since(self, name: str) -> list[Change]:
        """The changes after a mark, in order (KeyError: no such mark)."""
        return self.changes[self.marks[name]:]

    def rewind(self, name: str) -> Rewound:
        """Every file changed after mark `name` back to its state at that mark."""
        first: dict[str, Change] = {}
        for change in self.since(name):
            first.setdefault(change.path, change)
        return self.rewind_changes(list(first.values()))

    def rewind_changes(self, changes: list[Change],
                       expect: dict[str, FileState] | None = None) -> Rewound:
        """Each change's file back to its state before it (one change per file), where
        it is now as `expect` says by path (else: absent or any regular file)."""
        done = Rewound()
        for change in changes:
            self._restore(Path(change.path), change, done, (expect or {}).get(change.path))
        return done

    def _restore(self, path: Path, change: Change, done: Rewound,
                 expect: FileState | None) -> None:
        try:
            state, data = look(path, self.roots)
        except RestoreRefused as refused:
            done.not_undone.append((str(path), _why(refused, path)))
            return
        if expect is None and state.what not in ("absent", "file"):
            done.not_undone.append((str(path), f"it is {state.describe()} now: not written "
                                                "through or replaced"))
            return
        now = (None if state.what == "absent" else Change(
            str(path), self.keep(data), state.mode, state.size, "rewind") if data is not None
            else Change(str(path), UNKNOWN, state.mode, state.size, "rewind"))
        try:
            why = self._put_back(path, change, now, done, expect or state)
        finally:
            if now is not None and now.before not in (ABSENT, UNKNOWN):
                self.release(now.before)  # recorded (and so kept) if it was replaced
        if why is not None:
            done.not_undone.append((str(path), why))

    def _put_back(self, path: Path, change: Change, now: Change | None, done: Rewound,
                  expect: FileState) -> str | None:
        """Restore one file if it is now as `expect` says; why it could not be (None:
        restored, or already as it was)."""
        if change.before == UNKNOWN:
            return (f"its earlier content ({change.size:,} bytes) was over the size cap and "
                    "was not kept")
        data = None if change.before == ABSENT else self.blob(change.before)
        if change.before != ABSENT and data is None:
            return "its kept copy is missing"
        if now is None and data is None and expect.what == "absent":
            return None  # absent then, absent now
        if now is not None and (now.before, now.mode) == (change.before, change.mode):
            return None  # already as it was
        try:
            put_back(path, self.roots, data, change.mode, expect=expect)
        except RestoreRefused as refused:
            return _why(refused, path)
        (done.removed if data is None else done.restored).append(str(path))
        self.record(now if now is not None else Change(str(path), ABSENT, call="rewind"))
        return None

    # -- on disk --

    def _append(self, entry: dict[str, Any]) -> None:
        if self.folder is None:
            return
        make_private_dirs(self.folder)
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        fd = os.open(self.folder / "log.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def _write_blob(self, digest: str) -> None:
        assert self.folder is not None
        target = self.folder / "blobs" / digest
        data = self._blobs.get(digest)
        if data is None or target.exists():
            return
        make_private_dirs(target.parent)
        _write_atomic(target, data, 0o600)

    def _load(self, folder: Path) -> None:
        try:
            lines = (folder / "log.jsonl").read_text().splitlines()
        except OSError:
            return
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            if isinstance(entry.get("mark"), str) and isinstance(entry.get("at"), int):
                self.marks.setdefault(entry["mark"], entry["at"])
            elif isinstance(entry.get("change"), dict):
                with contextlib.suppress(TypeError):
                    self.changes.append(Change(**entry["change"]))


def _why(refused: RestoreRefused, path: Path) -> str:
    """A refusal as the reason beside its path (the path is said once)."""
    text = str(refused)
    prefix = f"{path}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _write_atomic(path: Path, data: bytes, mode: int | None) -> None:
    """Write one of our own files (a kept copy) whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data, mode=mode, suffix=".fuxi")
