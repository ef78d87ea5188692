"""Where sessions are kept outside a notebook: the `SessionStore` protocol and two stores.

A store keeps, per session, the list of transcript entries appended to it (the format is
in `entries.py`); it knows nothing about what they mean, so a database, a bucket or a
dict can be one. `FileSessionStore` is the default: one JSONL file per session under
`<root>/projects/<project key>/<session id>.jsonl`, root `~/.fuxi` (or `FUXI_CONFIG_DIR`).
A batch of entries is written with one append, and a line that a crash cut short is
skipped when the file is read, so a torn write never makes a session unreadable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NotRequired, Protocol, TypedDict, cast, runtime_checkable

from ...errors import ConfigurationError
from ..common.private_dirs import make_private_dirs
from ..common.reading import check_depth
from ..common.switches import config_dir
from .entries import SessionStoreEntry, fold_summary, timestamp_ms

__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "MAX_TRANSCRIPT_DEPTH",
    "FileSessionStore",
    "InMemorySessionStore",
    "SessionKey",
    "SessionListSubkeysKey",
    "SessionStore",
    "SessionStoreEntry",
    "SessionStoreFlushMode",
    "SessionStoreListEntry",
    "SessionSummaryEntry",
    "config_dir",
    "fold_session_summary",
    "project_key_for_directory",
]

#: When a run's messages reach the store (`FuxiAgentOptions.session_store_flush`):
#: "batched", once the run ends; "eager", each as the run yields it (in the background).
SessionStoreFlushMode = Literal["batched", "eager"]

#: Longer project keys are cut to this length and given a hash of the whole path.
MAX_PROJECT_KEY = 200
#: A session transcript bigger than this is not read (`Unreadable`, one line), as a
#: notebook is not (MAX_NOTEBOOK_BYTES, the same cap). A transcript keeps every message of
#: a session, compacted ones too, so it may outgrow what one request can carry (32 MB),
#: but a real one stays far below: a thousand turns of 50 KB (50 MB), or ten 5 MB images
#: read as base64 (67 MB), are well under it; parsed, it takes several times its size in
#: memory.
MAX_TRANSCRIPT_BYTES = 128 << 20
#: An entry nested deeper than this is refused: an entry is about 6 levels, a tool's input
#: or result inside it some more; the code that walks entries must stay far from the
#: recursion limit.
MAX_TRANSCRIPT_DEPTH = 128


class SessionKey(TypedDict):
    """One session (or, with `subpath`, one side transcript of it) in a store."""

    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionListSubkeysKey(TypedDict):
    """The session whose side transcripts `list_subkeys` lists."""

    project_key: str
    session_id: str


class SessionStoreListEntry(TypedDict):
    """A session of a project and when it last changed (milliseconds since the epoch)."""

    session_id: str
    mtime: int


class SessionSummaryEntry(TypedDict):
    """A session with its summary (`fold_session_summary`), for listing in one call."""

    session_id: str
    mtime: int
    data: dict[str, Any]


@runtime_checkable
class SessionStore(Protocol):
    """What a run needs from a store. `append` and `load` are required; a store may also
    offer `list_sessions(project_key)`, `list_session_summaries(project_key)`,
    `delete(key)` and `list_subkeys(key)` (listing, `continue_conversation`, deleting and
    subagent transcripts need them). Entries are `SessionStoreEntry` dicts."""

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """Add entries at the end of the session's transcript (creating it)."""
        ...

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """All entries of the session in order; None if there is no such session."""
        ...


def fold_session_summary(summary: SessionSummaryEntry | None, key: SessionKey,
                         entries: list[SessionStoreEntry] | list[dict[str, Any]], *,
                         mtime: int | None = None) -> SessionSummaryEntry:
    """`summary` (None: the session had no entries yet) with `entries`, just appended to
    `key`, folded in: what a store that offers `list_session_summaries` keeps per session,
    updated on each `append`, so that listing sessions reads no transcript.

    `data` holds what a listing shows (`entries.fold_summary`); `mtime` is the store's
    time of the append (None: the newest of the earlier mtime and the entries'
    timestamps, else now). Entries of a side transcript (a key with `subpath`) are not
    the session's conversation: the summary comes back unchanged."""
    if key.get("subpath") is not None:
        if summary is not None:
            return summary
        entries = []
    if mtime is None:
        # a SessionStoreEntry is a dict at run time; timestamp_ms only reads it
        plain = cast("list[dict[str, Any]]", entries)
        stamps = [t for t in map(timestamp_ms, plain) if t is not None]
        if summary is not None:
            stamps.append(summary["mtime"])
        mtime = max(stamps) if stamps else time.time_ns() // 1_000_000
    previous = summary["data"] if summary is not None else None
    return {"session_id": key["session_id"], "mtime": mtime,
            "data": fold_summary([dict(e) for e in entries], previous)}


def project_key_for_directory(directory: str | os.PathLike[str] | None = None) -> str:
    """The project key of a directory: its absolute path (symlinks resolved) with every
    character that is not a letter or digit replaced by "-"; a key longer than
    MAX_PROJECT_KEY is cut and ends with a hash of the whole path, so it stays unique."""
    path = os.path.realpath(os.path.expanduser(os.fspath(directory or os.getcwd())))
    key = re.sub(r"[^A-Za-z0-9]", "-", path)
    if len(key) <= MAX_PROJECT_KEY:
        return key
    return f"{key[:MAX_PROJECT_KEY]}-{_djb2_base36(path)}"


def _djb2_base36(text: str) -> str:
    value = 5381
    for char in text:
        value = (value * 33 + ord(char)) & 0xFFFFFFFF
    digits = ""
    while True:
        value, rest = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
        if not value:
            return digits


def _part(name: str, what: str) -> str:
    """A key part used as a file name: never a path of its own (no `..`, no `/`), and one
    a file system can hold (UTF-8, at most _MAX_PART_BYTES with `.jsonl` still to come)."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(
            c in name for c in "/\\\0") or _size(name) > _MAX_PART_BYTES:
        shown = name if not isinstance(name, str) or len(name) <= 80 else f"{name[:80]}…"
        raise ConfigurationError(f"{what} {shown!r} cannot name a session file")
    return name


#: a file name is at most 255 bytes on the usual file systems; a part is followed by
#: `.jsonl` (a project key is at most MAX_PROJECT_KEY + a hash)
_MAX_PART_BYTES = 240


def _size(name: str) -> int:
    try:
        return len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: no file name can hold it
        return _MAX_PART_BYTES + 1


def _json_copy(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a store gives back: plain JSON, never the caller's objects."""
    return cast("list[dict[str, Any]]", json.loads(_dumps(entries)))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _summaries(listing: list[SessionStoreListEntry],
               load: Callable[[str], list[dict[str, Any]] | None]
               ) -> list[SessionSummaryEntry]:
    """Each listed session with its entries folded (stores whose loading is cheap)."""
    found: list[SessionSummaryEntry] = []
    for item in listing:
        entries = load(item["session_id"])
        if entries is not None:
            found.append({"session_id": item["session_id"], "mtime": item["mtime"],
                          "data": fold_summary(entries)})
    return found


class InMemorySessionStore:
    """A store in a dict: for tests, and as the model for writing one's own store."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str | None], list[dict[str, Any]]] = {}
        self._mtimes: dict[tuple[str, str, str | None], int] = {}
        self._summaries: dict[tuple[str, str], SessionSummaryEntry] = {}
        self._clock = 0

    @staticmethod
    def _slot(key: SessionKey) -> tuple[str, str, str | None]:
        return key["project_key"], key["session_id"], key.get("subpath")

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        slot = self._slot(key)
        copies = _json_copy(entries)
        self._entries.setdefault(slot, []).extend(copies)
        # strictly increasing, so "the most recent session" is never a tie
        self._clock = max(time.time_ns() // 1_000_000, self._clock + 1)
        self._mtimes[slot] = self._clock
        if slot[2] is None:  # listing reads the summary kept here, never the entries
            self._summaries[slot[:2]] = fold_session_summary(
                self._summaries.get(slot[:2]), key, copies, mtime=self._clock)

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        found = self._entries.get(self._slot(key))
        return _json_copy(found) if found is not None else None

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """Oldest change first."""
        slots = [s for s in self._entries if s[0] == project_key and s[2] is None]
        return [{"session_id": s[1], "mtime": self._mtimes[s]}
                for s in sorted(slots, key=self._mtimes.__getitem__)]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """Oldest change first, from the summaries `append` keeps."""
        return [json.loads(_dumps(self._summaries[project_key, listed["session_id"]]))
                for listed in await self.list_sessions(project_key)]

    async def delete(self, key: SessionKey) -> None:
        """The session (with its side transcripts), or one side transcript."""
        project, session, subpath = self._slot(key)
        for slot in [s for s in self._entries if s[:2] == (project, session)
                     and (subpath is None or s[2] == subpath)]:
            del self._entries[slot], self._mtimes[slot]
        if subpath is None:
            self._summaries.pop((project, session), None)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        return sorted(s[2] for s in self._entries
                      if s[:2] == (key["project_key"], key["session_id"]) and s[2] is not None)


class FileSessionStore:
    """JSONL files under `root/projects/<project key>/` (see the module docstring); files
    and folders are private to the user (transcripts hold what the tools read)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else config_dir()
        self._paths: dict[tuple[Any, ...], Path] = {}

    def project_dir(self, project_key: str) -> Path:
        return self.root / "projects" / _part(project_key, "project key")

    def path(self, key: SessionKey) -> Path:
        """The file that holds the session (or its side transcript); kept per key, as a
        session appends to it each turn."""
        name = (key["project_key"], key["session_id"], key.get("subpath"))
        kept = self._paths.get(name)
        if kept is None:
            if len(self._paths) > 256:
                self._paths.clear()
            kept = self._paths[name] = self._path(key)
        return kept

    def _path(self, key: SessionKey) -> Path:
        folder = self.project_dir(key["project_key"])
        session = _part(key["session_id"], "session id")
        subpath = key.get("subpath")
        if subpath is None:
            return folder / f"{session}.jsonl"
        parts = [_part(p, "subpath part") for p in subpath.split("/")]
        return folder.joinpath(session, *parts[:-1], f"{parts[-1]}.jsonl")

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        """One write of whole lines; if the file ends in a torn line (a crash cut a
        write short), the batch starts on a new line so that it stays readable."""
        if not entries:
            return
        path = self.path(key)
        data = "".join(_dumps(entry) + "\n" for entry in entries).encode("utf-8")
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except FileNotFoundError:  # the first write of the project (or its folder went)
            make_private_dirs(path.parent)  # every folder it makes 0o700: projects/ too
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        # the file system's clock may tick only every few ms: the fine clock keeps
        # "the session that changed last" exact for appends in quick succession
        now = time.time_ns()
        os.utime(path, ns=(now, now))

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        return self.read(key)

    def read(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """The entries; lines that are not a JSON object (a torn write) are skipped.

        The file is read by the bounded reader (common/reading.py): anything could have
        been put under the store's name (a FIFO would block, a link to /dev/zero or a file
        over MAX_TRANSCRIPT_BYTES fill memory), and that is one `Unreadable` line naming
        it, as is a line nested deeper than MAX_TRANSCRIPT_DEPTH, or a file with content
        and not one entry (no session was ever written so)."""
        from ..common.reading import Unreadable, read_bounded

        path = self.path(key)
        raw = read_bounded(path, limit=MAX_TRANSCRIPT_BYTES,
                           where=f"cannot read the session transcript {path}")
        if raw is None:
            return None
        entries = []
        for line in raw.split(b"\n"):
            try:
                entry = json.loads(line) if line.strip() else None
            except RecursionError:
                raise Unreadable(f"the session transcript {path} is nested too deeply to "
                                 "read") from None
            except ValueError:
                continue
            if isinstance(entry, dict):
                try:
                    check_depth(entry, str(path), MAX_TRANSCRIPT_DEPTH)
                except ConfigurationError as error:
                    raise Unreadable(f"the session transcript {error}") from None
                entries.append(entry)
        if not entries and raw.strip():
            raise Unreadable(f"the session transcript {path} holds no entry: no line of it "
                             "is a JSON object in UTF-8")
        return entries

    def file_size(self, key: SessionKey) -> int | None:
        try:
            return self.path(key).stat().st_size
        except FileNotFoundError:
            return None

    def project_keys(self) -> list[str]:
        """Every project that has a folder of sessions."""
        folder = self.root / "projects"
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """Oldest change first (by the files' nanosecond times, so ties are rare)."""
        folder = self.project_dir(project_key)
        if not folder.is_dir():
            return []
        found = []
        for path in folder.glob("*.jsonl"):
            try:
                found.append((path.stat().st_mtime_ns, path.stem))
            except FileNotFoundError:  # deleted meanwhile
                continue
        return [{"session_id": stem, "mtime": ns // 1_000_000} for ns, stem in sorted(found)]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """Every readable session; one that cannot be read is left out with a warning of
        one line naming it, so that it hides no other."""
        listing = await self.list_sessions(project_key)
        return _summaries(listing, lambda sid: self._readable(
            {"project_key": project_key, "session_id": sid}))

    def _readable(self, key: SessionKey) -> list[dict[str, Any]] | None:
        from ..common.reading import Unreadable

        try:
            return self.read(key)
        except Unreadable as error:
            warnings.warn(str(error), stacklevel=3)
            return None

    async def delete(self, key: SessionKey) -> None:
        """The session file and its side transcripts, or one side transcript."""
        path = self.path(key)
        path.unlink(missing_ok=True)
        if key.get("subpath") is None:
            shutil.rmtree(path.with_suffix(""), ignore_errors=True)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        folder = self.project_dir(key["project_key"]) / _part(key["session_id"], "session id")
        if not folder.is_dir():
            return []
        return sorted(p.relative_to(folder).with_suffix("").as_posix()
                      for p in folder.rglob("*.jsonl"))
