"""A saved notebook read as a (read-only) `SessionStore`.

The sessions a notebook's `%%fuxi` cells recorded become transcripts in the format of
`entries.py`: a session's conversation is rebuilt from its records along their `parent`
links (a fork includes the cells it branched from), one entry per message, with uuids
derived from the session, the cell and the message's place, so they are the same on every
read of an unchanged notebook. Writing belongs to the cells: `append` and `delete` raise.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid as _uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from .entries import message_entry
from .notebook_file import FuxiCell, SavedNotebook, read_notebook
from .store import SessionKey, SessionListSubkeysKey, SessionStoreListEntry

__all__ = ["NotebookSessionStore"]

_NAMESPACE = _uuid.UUID("8f0c7d52-3b1e-4a6f-9d2c-5e4b1a7c9f30")


class NotebookSessionStore:
    """The sessions recorded in the notebook at `path` (every project key names it)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def _read_only(self) -> ConfigurationError:
        return ConfigurationError(
            f"{self.path.name} is a notebook: its sessions are read-only here (running "
            "%%fuxi cells records them; to go on in Python, fork into another store)")

    async def append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        raise self._read_only()

    async def delete(self, key: SessionKey) -> None:
        raise self._read_only()

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """The session's transcript; a notebook keeps no side transcripts (None)."""
        return None if key.get("subpath") is not None else self.read(key["session_id"])

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """None: the records keep the main conversation only, not a subagent's."""
        return []

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """In the order of each session's last cell; `mtime` is when that cell's run
        finished (the notebook file's time for records that do not say)."""
        notebook = read_notebook(self.path)
        saved = self.path.stat().st_mtime_ns // 1_000_000
        last: dict[str, FuxiCell] = {}
        for cell in notebook.cells:
            if cell.record is not None:
                last.pop(cell.record.session_id, None)
                last[cell.record.session_id] = cell
        return [{"session_id": sid, "mtime": _finished_ms(cell.volatile) or saved}
                for sid, cell in last.items()]

    def read(self, session_id: str) -> list[dict[str, Any]] | None:
        """The session's entries, or None if the notebook recorded no such session."""
        notebook = read_notebook(self.path)
        own = [c for c in notebook.cells if c.record is not None
               and c.record.session_id == session_id and c.key]
        if not own:
            return None
        return _entries(notebook, own[-1], session_id)


def _entries(notebook: SavedNotebook, last: FuxiCell,
             session_id: str) -> list[dict[str, Any]]:
    from .history import extend_history

    assert last.key is not None
    history: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    cell = last
    for cell in notebook.chain(last.key):
        assert cell.record is not None
        start = len(history)
        history, pending = extend_history(history, pending, cell.record, cell.outputs)
        for number, message in enumerate(history[start:]):
            parent = _add(entries, message, parent, session_id, cell, str(number))
    if pending:  # owed by the last cell's run: sent with the next prompt
        _add(entries, {"role": "user", "content": pending}, parent, session_id, cell, "owed")
    return entries


def _add(entries: list[dict[str, Any]], message: dict[str, Any], parent: str | None,
         session_id: str, cell: FuxiCell, place: str) -> str:
    assert cell.record is not None
    uuid = str(_uuid.uuid5(_NAMESPACE, f"{session_id}/{cell.key}/{place}"))
    stamp = _finished_iso(cell.volatile)
    entry = message_entry(message, uuid=uuid, parent=parent, session_id=session_id,
                          cwd=cell.record.cwd, timestamp=stamp)
    if stamp is None:  # a record that does not say when it ran: no time is made up
        del entry["timestamp"]
    entry["cellId"] = cell.key
    entries.append(entry)
    return uuid


def _finished(volatile: Mapping[str, Any]) -> dt.datetime | None:
    stamp = volatile.get("finished_at")
    if not isinstance(stamp, str):
        return None
    try:
        return dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def _finished_ms(volatile: Mapping[str, Any]) -> int | None:
    when = _finished(volatile)
    return int(when.timestamp() * 1000) if when is not None else None


def _finished_iso(volatile: Mapping[str, Any]) -> str | None:
    """When the cell's run finished, as entries spell times."""
    when = _finished(volatile)
    if when is None:
        return None
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
