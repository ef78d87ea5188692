"""What a call may change, taken before it runs, and what it changed, recorded after.

- A tool of kind `edit` (Write, Edit, the cell tools) declares the paths it writes
  (`Reach.writes`): those files are read before the call, and each one that differs after
  it is a change.
- Code (kind `execute`: Bash, the kernel's Python, MCP tools) may change any file, so the
  working folders are scanned before and after the call (size, modification time, inode:
  one `stat` a file, no reading). The files whose stat moved are what it changed; their
  earlier bytes come from the baseline, the copy taken when a scan last saw them as they
  were. A scan reads only the files that are new or moved since the one before, so after
  the first call of a conversation a call costs its two scans and the files it touched.

Caps (environment, read when a conversation starts): a file over `FUXI_UNDO_MAX_FILE_MB`
(default 5) is not kept, nor is anything past `FUXI_UNDO_MAX_KEPT_MB` (default 64) of
kept copies: a change to such a file is recorded as not undoable, and says so when
undone. Working folders holding more than `FUXI_UNDO_MAX_FILES` (default 20,000) files (a
home folder, a dataset) are not scanned at all once a scan finds that out, so a call never
pays for a scan that could not cover them: what code changes there is not undoable, and
`notes` says so (the notebook cell shows it). A shell command line that the permission
analysis finds read-only is not scanned around either (`reads_only`). Folders that are
tools' caches or other repositories' data (`.git`, `node_modules`, `__pycache__`,
virtual environments, ...) are not scanned; symbolic links are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from .history import ABSENT, UNKNOWN, Change, FileHistory
from .restore import FileState, RestoreRefused, look

__all__ = ["FileCheckpoints", "Limits", "Watch"]

_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv",
                           "venv", ".tox", ".ipynb_checkpoints", ".mypy_cache",
                           ".pytest_cache", ".ruff_cache"})
_MB = 1024 * 1024


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        return default


@dataclass(frozen=True)
class Limits:
    """What is kept at most (see the module docstring)."""

    file_bytes: int = 5 * _MB
    kept_bytes: int = 64 * _MB
    files: int = 20_000

    @classmethod
    def from_env(cls) -> Limits:
        return cls(file_bytes=int(_env_number("FUXI_UNDO_MAX_FILE_MB", 5) * _MB),
                   kept_bytes=int(_env_number("FUXI_UNDO_MAX_KEPT_MB", 64) * _MB),
                   files=int(_env_number("FUXI_UNDO_MAX_FILES", 20_000)))


#: what a scan compares: modification time (ns), size, inode, mode
_Sig = tuple[int, int, int, int]


@dataclass(frozen=True)
class _Seen:
    """A file as a scan saw it, and its kept copy (None: not kept)."""

    sig: _Sig
    digest: str | None


@dataclass
class Watch:
    """What was taken before one call."""

    call: str
    #: edit tools: each declared path's state before the call
    paths: dict[str, Change] = field(default_factory=dict)
    #: code: the working folders were scanned before the call
    scanned: bool = False


class FileCheckpoints:
    """The working folders' files around each call, into a `FileHistory`."""

    def __init__(self, roots: Sequence[Path], history: FileHistory,
                 limits: Limits | None = None) -> None:
        self.roots = [Path(root) for root in roots]
        self.history = history
        history.roots = self.roots  # a rewind lands inside them or not at all
        self.limits = limits if limits is not None else Limits.from_env()
        self._baseline: dict[str, _Seen] = {}
        #: what could not be watched (a folder over the file cap), each said once
        self.notes: list[str] = []
        #: the working folders hold more files than the cap: code is not watched
        self.too_many_files = False

    def before(self, call: str, kind: str, writes: Sequence[Path] = ()) -> Watch | None:
        """Take what the call may change (None: it changes no file)."""
        if kind == "edit" and writes:
            watch = Watch(call)
            for path in writes:
                real = os.path.realpath(path)
                watch.paths[real] = self._state(Path(real), call)
            return watch
        if kind == "execute" and not self.too_many_files:
            self._scan(call=None)
            if not self.too_many_files:
                return Watch(call, scanned=True)
        return None

    def after(self, watch: Watch) -> list[Change]:
        """Record what the call changed; the changes."""
        changes: list[Change] = []
        for path, before in watch.paths.items():
            now = self._state(Path(path), watch.call)
            if (now.before, now.mode, now.size) != (before.before, before.mode, before.size):
                self.history.record(before)  # two files too big to keep: by size and mode
                changes.append(before)
            for state in (before, now):
                if state.before not in (ABSENT, UNKNOWN):
                    self.history.release(state.before)
        if watch.scanned:
            changes.extend(self._scan(call=watch.call))
        return changes

    def state_now(self, path: Path) -> FileState | None:
        """A file's state now as a restore reads it (digested, not kept; no link
        followed); None when it cannot be read so (a folder on its path is a link)."""
        try:
            return look(path, self.roots, cap=0)[0]
        except RestoreRefused:
            return None

    def _state(self, path: Path, call: str) -> Change:
        """A file's state now, as a change's `before` names it."""
        try:
            stat = path.stat()
        except FileNotFoundError:
            return Change(str(path), ABSENT, call=call)
        except OSError:
            return Change(str(path), UNKNOWN, call=call)
        digest = self._read(path, stat.st_size)
        return Change(str(path), digest if digest is not None else UNKNOWN,
                      stat.st_mode & 0o7777, stat.st_size, call)

    def _read(self, path: Path, size: int) -> str | None:
        """Keep the file's bytes if the caps allow; their digest."""
        if size > self.limits.file_bytes or (
                self.history.memory_bytes + size > self.limits.kept_bytes):
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        return self.history.keep(data)

    def _scan(self, call: str | None) -> list[Change]:
        """Bring the baseline up to date; with `call`, what moved since the scan before
        the call is recorded as that call's changes."""
        changes: list[Change] = []
        baseline = self._baseline
        seen = self._files()
        if seen is None:  # too many files: forget the baseline, scan no more
            for kept in baseline.values():
                self.history.release(kept.digest)
            baseline.clear()
            return changes
        for path, sig in seen.items():
            old = baseline.get(path)
            if old is not None and old.sig == sig:
                continue
            if call is not None:
                changes.append(self._changed(path, old, call))
            if old is not None:
                self.history.release(old.digest)
            baseline[path] = _Seen(sig, self._read(Path(path), sig[1]))
        for path in [p for p in baseline if p not in seen]:
            old = baseline.pop(path)
            if call is not None:
                changes.append(self._changed(path, old, call))
            self.history.release(old.digest)
        return changes

    def _changed(self, path: str, old: _Seen | None, call: str) -> Change:
        change = (Change(path, ABSENT, call=call) if old is None else Change(
            path, old.digest if old.digest is not None else UNKNOWN, old.sig[3] & 0o7777,
            old.sig[1], call))
        self.history.record(change)
        return change

    def _files(self) -> dict[str, _Sig] | None:
        """Every regular file under the roots (not following links); None past the cap."""
        found: dict[str, _Sig] = {}
        limit = self.limits.files
        stack = [str(root) for root in self.roots]
        visited: set[str] = set()
        while stack:
            folder = stack.pop()
            if folder in visited:
                continue
            visited.add(folder)
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIPPED_DIRS:
                            stack.append(entry.path)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not S_ISREG(info.st_mode):
                    continue
                if len(found) >= limit:
                    roots = ", ".join(str(root) for root in self.roots)
                    self._note(f"{roots} hold(s) more than {limit:,} files, too many to "
                               "watch: what Bash and Python change there cannot be undone "
                               "(FUXI_UNDO_MAX_FILES raises the cap; Write and Edit are "
                               "still undoable)")
                    self.too_many_files = True
                    return None
                found[entry.path] = (info.st_mtime_ns, info.st_size, info.st_ino,
                                     info.st_mode)
        return found

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

