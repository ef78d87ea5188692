"""The notebook as the browser has it, from the frontend extension (`fuxi.notebook` comm).

The kernel opens the comm once, at the first `%%fuxi` cell in a frontend that sends cell
ids. The extension (shipped in the wheel, see labextension/) answers `hello`; a frontend
without it closes the comm (JupyterLab and VS Code close a comm whose target they do not
know), and everything falls back to the saved file. Each cell then asks for the live
document: the cells in order with their ids, unsaved sources and the records the extension
mirrored into their metadata, and which cells are queued. The extension is also told when
a card waits in a cell (`waiting` / `answered`) so it can mark a tab whose card is
off-screen. An extension whose hello says `edits: 1` also changes cells when asked (the
cell tools, kernel/cells.py): each request has an id and is answered with `result`.

A tab reloaded while the kernel runs is a new frontend: it never saw the comm open. The
comm has one id per kernel (`COMM_ID`), so the extension of a tab that opens a notebook on
a running kernel attaches to it and says hello again; the kernel counts the hellos
(`hellos`, each answered `welcome`), and a cell that ran while another frontend attached
hands its outputs to it
at its end (controller.py: a frontend shows a cell's outputs only for the requests it
sent itself), and later requests are answered by the new tab.

The extension also sends the Settings Editor's defaults for agent cells (`settings`, in
its hello and again when they change: `frontend_settings`, checked where they are used,
settings.py), and answers what the cells an agent cell is about show
(`outputs`).

What comes back is checked for shape and size: a reply that is not a notebook is ignored
(one note), never trusted further than the saved file would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["COMM_ID", "COMM_TARGET", "LiveDocument", "LiveNotebook"]

COMM_TARGET = "fuxi.notebook"
#: the comm's id: one per kernel, known to the extension, so a reloaded tab can attach
COMM_ID = "fuxi.notebook.comm"
PROTOCOL_VERSION = 1
#: how long the first cell waits for the extension's hello (or the frontend's close)
HELLO_TIMEOUT = 2.0
#: how long a cell waits for the live document once the extension said hello
REPLY_TIMEOUT = 3.0
#: a live document bigger than this (as JSON) is not used (the saved file is)
MAX_DOCUMENT_CHARS = 256 * 1024 * 1024
#: settings or output summaries bigger than this (as JSON) are not used
MAX_SMALL_ANSWER_CHARS = 1024 * 1024
_CELL_TYPES = ("code", "markdown", "raw")


@dataclass(frozen=True)
class LiveDocument:
    """The live notebook: `cells` are nbformat-like dicts (id, cell_type, source, and
    `fuxi`: the metadata record entry or None, `has_record_output`); `replay`: running
    agent cells the user asked to replay ("Fuxi: replay this cell")."""

    path: str | None
    dirty: bool
    running: tuple[str, ...]
    cells: tuple[dict[str, Any], ...]
    replay: tuple[str, ...] = ()

    def index_of(self, cell_id: str) -> int | None:
        for index, cell in enumerate(self.cells):
            if cell["id"] == cell_id:
                return index
        return None


def parse_document(raw: Any) -> LiveDocument | None:
    """The reply's notebook, or None if it is not shaped like one."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("cells"), list):
        return None
    cells = []
    for cell in raw["cells"]:
        if not isinstance(cell, Mapping) or not isinstance(cell.get("id"), str) or not (
                isinstance(cell.get("source"), str)) or cell.get("cell_type") not in _CELL_TYPES:
            return None
        fuxi = cell.get("fuxi")
        cells.append({"id": cell["id"], "cell_type": cell["cell_type"],
                      "source": cell["source"],
                      "fuxi": dict(fuxi) if isinstance(fuxi, Mapping) else None,
                      "has_record_output": cell.get("has_record_output") is True})
    running, replay = _ids(raw.get("running")), _ids(raw.get("replay"))
    path = raw.get("path")
    return LiveDocument(path if isinstance(path, str) else None, raw.get("dirty") is True,
                        running, tuple(cells), replay)


def _ids(raw: Any) -> tuple[str, ...]:
    return tuple(r for r in raw if isinstance(r, str)) if isinstance(raw, list) else ()


def _small_mapping(raw: Any) -> dict[str, Any]:
    """`raw` if it is a JSON object of modest size, else {}."""
    if not isinstance(raw, Mapping):
        return {}
    try:
        if len(json.dumps(raw)) > MAX_SMALL_ANSWER_CHARS:
            return {}
    except (TypeError, ValueError):
        return {}
    return {str(k): v for k, v in raw.items()}


class LiveNotebook:
    """The kernel's end of the `fuxi.notebook` comm (see the module docstring)."""

    def __init__(self, shell: Any, *, hello_timeout: float = HELLO_TIMEOUT,
                 reply_timeout: float = REPLY_TIMEOUT) -> None:
        self.shell = shell
        self.hello_timeout = hello_timeout
        self.reply_timeout = reply_timeout
        #: "unknown" (not asked yet), "waiting" (comm open, no hello yet), "connected",
        #: "absent" (closed, or no answer in time: the saved file is used)
        self.state = "unknown"
        self.hello: dict[str, Any] = {}
        #: how many times a frontend said hello (the first tab, then each one attaching)
        self.hellos = 0
        #: the Settings Editor's defaults for agent cells, as the extension sent them
        #: (unchecked: settings.py reads them)
        self.frontend_settings: dict[str, Any] = {}
        self.notes: list[str] = []
        self._comm: Any = None
        self._hello: asyncio.Future[bool] | None = None
        self._replies: dict[int, asyncio.Future[Any]] = {}
        #: the field of the answer each request waits for
        self._keys: dict[int, str] = {}
        self._next_id = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _open(self, path: str | None) -> None:
        from comm import create_comm

        self._loop = asyncio.get_running_loop()
        self._hello = self._loop.create_future()
        self.state = "waiting"
        try:
            self._comm = create_comm(target_name=COMM_TARGET, comm_id=COMM_ID,
                                     data={"version": PROTOCOL_VERSION, "path": path})
        except Exception:  # no kernel to open it on (terminal IPython): no extension
            self._settle_hello(False)
            return
        self._comm.on_msg(self._on_msg)
        self._comm.on_close(lambda _msg: self._closed())

    def _settle(self, future: asyncio.Future[Any] | None, value: Any) -> None:
        """Resolve from whatever thread the message arrives on."""
        if future is None or self._loop is None:
            return

        def settle() -> None:
            if not future.done():
                future.set_result(value)

        self._loop.call_soon_threadsafe(settle)

    def _settle_hello(self, answered: bool) -> None:
        if not answered:
            self.state = "absent"
        self._settle(self._hello, answered)

    def _closed(self) -> None:
        self._comm = None
        self._settle_hello(False)
        for future in self._replies.values():
            self._settle(future, None)
        self._replies.clear()
        self._keys.clear()

    def _on_msg(self, msg: Mapping[str, Any]) -> None:
        data = ((msg.get("content") or {}).get("data")) if isinstance(msg, Mapping) else None
        if not isinstance(data, Mapping):
            return
        if data.get("event") in ("hello", "settings"):
            self.frontend_settings = _small_mapping(data.get("settings"))
        if data.get("event") == "hello":
            self.hello = {k: v for k, v in data.items() if isinstance(v, str | int)}
            self.hellos += 1
            self.state = "connected"
            with contextlib.suppress(Exception):  # heard: a frontend may wait for it
                if self._comm is not None:
                    self._comm.send({"event": "welcome", "hellos": self.hellos})
            self._settle(self._hello, True)
        elif isinstance(data.get("id"), int) and data["id"] in self._replies:
            key = self._keys.pop(data["id"], "notebook")
            self._settle(self._replies.pop(data["id"]), data.get(key))

    async def connected(self, path: str | None) -> bool:
        """Whether the extension answers (asked once per kernel, waiting at most
        `hello_timeout` the first time)."""
        if self.state == "unknown":
            self._open(path)
        if self.state == "waiting" and self._hello is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._hello), self.hello_timeout)
            except TimeoutError:
                self.state = "absent"
                self._close_comm()
        return self.state == "connected"

    async def _ask(self, request: dict[str, Any], key: str) -> tuple[bool, Any]:
        """Send a request with a fresh id; (answered, the answer's `key` field)."""
        if self._comm is None or self._loop is None:
            return False, None
        self._next_id += 1
        ask = self._next_id
        future = self._replies[ask] = self._loop.create_future()
        self._keys[ask] = key
        try:
            self._comm.send({**request, "id": ask})
            return True, await asyncio.wait_for(future, self.reply_timeout)
        except TimeoutError:
            self._replies.pop(ask, None)
            self._keys.pop(ask, None)
            return False, None

    def attached_since(self, hellos: int) -> bool:
        """Whether another frontend attached since `hellos` were counted (the first
        hello is the tab that opened the comm, which shows its own cells' outputs)."""
        return self.hellos > max(hellos, 1)

    @property
    def can_edit(self) -> bool:
        """Whether the extension changes cells when asked (its hello says `edits: 1`)."""
        return self.state == "connected" and self.hello.get("edits") == 1

    async def change(self, request: dict[str, Any]) -> dict[str, Any]:
        """Ask the extension to change the notebook (`edit_cell`, `insert_cell`,
        `delete_cell`, `move_cell`, `set_outputs`); its answer, `{"ok": true, ...}` or
        `{"error": why}` (also when it does not answer)."""
        if not self.can_edit:
            return {"error": "the notebook's frontend extension does not change cells"}
        answered, reply = await self._ask(request, "result")
        if not answered:
            return {"error": f"the notebook did not answer within {self.reply_timeout:.0f} s"}
        return dict(reply) if isinstance(reply, Mapping) else {
            "error": "the notebook's answer was not understood"}

    def change_then(self, request: dict[str, Any],
                    then: Callable[[dict[str, Any]], None]) -> bool:
        """Ask for a change from code that cannot wait for the answer (a line magic: the
        frontend's answer is read after the line ends). `then(answer)` runs on the
        kernel's loop when it comes, `{"error": ...}` if none comes within the reply
        timeout. False: not asked (no extension that changes cells)."""
        if not self.can_edit or self._comm is None or self._loop is None:
            return False
        self._next_id += 1
        ask = self._next_id
        future = self._replies[ask] = self._loop.create_future()
        self._keys[ask] = "result"
        try:
            self._comm.send({**request, "id": ask})
        except Exception:  # the frontend went away
            self._replies.pop(ask, None)
            self._keys.pop(ask, None)
            return False

        def expire() -> None:
            if self._replies.pop(ask, None) is not None and not future.done():
                self._keys.pop(ask, None)
                future.set_result(None)

        def answered(settled: asyncio.Future[Any]) -> None:
            reply = settled.result()
            then(dict(reply) if isinstance(reply, Mapping) else {"error": (
                f"the notebook did not answer within {self.reply_timeout:.0f} s, so "
                "whether it made the change is not known" if reply is None
                else "the notebook's answer was not understood")})

        loop = self._loop
        future.add_done_callback(answered)
        # counted from when the loop is free again (the cell that asked has ended): the
        # answer cannot be read before
        loop.call_soon(lambda: loop.call_later(self.reply_timeout, expire))
        return True

    async def document(self, path: str | None) -> LiveDocument | None:
        """The live notebook, or None (no extension, no answer in time, a bad answer)."""
        if not await self.connected(path) or self._comm is None or self._loop is None:
            return None
        started = time.monotonic()
        answered, raw = await self._ask({"request": "notebook"}, "notebook")
        if not answered:
            self._note("the notebook extension did not answer within "
                       f"{time.monotonic() - started:.1f} s; using the saved file")
            return None
        try:
            too_big = len(json.dumps(raw)) > MAX_DOCUMENT_CHARS
        except (TypeError, ValueError):
            too_big = True
        document = None if too_big else parse_document(raw)
        if document is None and raw is not None:
            self._note("the notebook extension's answer is not a notebook; using the saved "
                       "file")
        return document

    async def outputs(self, cell_ids: list[str]) -> dict[str, Any]:
        """What the named cells show, summarised by the extension (see
        labextension/src/outputs.ts); {} without an answer."""
        if not cell_ids or self.state != "connected":
            return {}
        answered, raw = await self._ask({"request": "outputs", "cells": cell_ids[:20]},
                                        "outputs")
        return _small_mapping(raw) if answered else {}

    def _note(self, text: str) -> None:
        self.notes.append(f"fuxi: {text}")

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def tell(self, event: str, cell_id: str | None, **extra: Any) -> None:
        """An event for the extension (`waiting`, `answered`); nothing without it."""
        if self.state != "connected" or self._comm is None or not cell_id:
            return
        with contextlib.suppress(Exception):  # the frontend went away: nothing to tell
            self._comm.send({"event": event, "cell": cell_id, **extra})

    def _close_comm(self) -> None:
        comm, self._comm = self._comm, None
        if comm is not None:
            with contextlib.suppress(Exception):
                comm.close()

    def close(self) -> None:
        """The kernel is done with the extension (the extension is unloaded)."""
        self._close_comm()
        self.state = "unknown"
