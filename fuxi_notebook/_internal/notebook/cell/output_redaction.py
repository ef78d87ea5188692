"""Every output the kernel sends while the extension is loaded passes redaction.

A cell's outputs are saved in the notebook, and they do not all come from a `%%fuxi` cell
while it runs: a thread or a callback that code the agent ran left behind can print a
secret after the call returned, into whatever cell runs then. So the redaction sits where
every output leaves the kernel: the session's `send`, which streams (ipykernel's
`OutStream`, fd 1/2 output included), displays, results and error tracebacks all go
through. A secret printed in pieces (a character at a time, with flushes between) is
caught too: the end of a stream chunk that could be the start of a secret waits for the
next chunk of that stream (each one extends the wait), for the cell's end, or for
`HOLD_SECONDS` without a chunk, whichever comes first.

Images and other binary payloads pass unchanged (`kernel_capture.safe_bundle`).

The same place keeps the kernel's status honest while a `%%fuxi` cell waits: JupyterLab
(≥ 4.4) sends widget clicks and state over kernel subshells, each of which ends with a
`status: idle`, and JupyterLab shows the last status it saw, so the status bar said "Idle"
while the cell waited on a card; so does the subshell's creation (a control request). While
a cell runs (`set_running`), an idle for any other request is followed by a `busy` for
that cell.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["HOLD_SECONDS", "OutputRedaction"]

#: How long the possible start of a secret waits for the rest of it.
HOLD_SECONDS = 0.5
_DISPLAYS = frozenset({"display_data", "update_display_data", "execute_result"})


class OutputRedaction:
    """Wraps a jupyter_client `Session.send` (see the module docstring)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._send = session.send
        self._held: dict[tuple[str, str], _Held] = {}
        self._lock = threading.RLock()
        #: the request of the `%%fuxi` cell now running (`set_running`), if any
        self.running: dict[str, Any] | None = None

    def set_running(self, request: dict[str, Any] | None) -> None:
        """The `%%fuxi` cell whose request stays "busy" until it ends (None: it ended)."""
        with self._lock:
            self.running = request

    def install(self) -> None:
        self.session.send = self.send

    def send(self, stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None,
             ident: Any = None, *args: Any, **kwargs: Any) -> Any:
        """`Session.send`, with the content of output messages redacted first."""
        from ...sessions.redact import redact  # here: `%load_ext` stays light
        message = msg_or_type if isinstance(msg_or_type, dict) else None
        kind = message["header"]["msg_type"] if message is not None else msg_or_type
        body = message.get("content") if message is not None else content
        if kind == "status" and isinstance(body, dict) and body.get(
                "execution_state") == "idle":
            self._release(_parent_id(message, parent))  # a cell's outputs end before it does
            with self._lock:  # not interleaved with `set_running`: busy never comes last
                running = self.running
                if running is not None and _parent_id(message, parent) != _parent_id(
                        None, running):
                    sent = self._send(stream, msg_or_type, content, parent, ident, *args,
                                      **kwargs)
                    self._send(stream, "status", {"execution_state": "busy"}, running, ident)
                    return sent
        if not isinstance(body, dict):
            return self._send(stream, msg_or_type, content, parent, ident, *args, **kwargs)
        if kind == "stream":
            body = self._stream(stream, message, body, parent, ident)
            if body is None:
                return None  # all of it waits for the rest of a secret
        elif kind in _DISPLAYS:
            body = _display(body)
        elif kind == "error":
            body = {**body, **{k: redact(body[k]) for k in ("ename", "evalue", "traceback")
                               if k in body}}
        if message is not None:
            return self._send(stream, {**message, "content": body}, content, parent, ident,
                              *args, **kwargs)
        return self._send(stream, msg_or_type, body, parent, ident, *args, **kwargs)

    def _stream(self, stream: Any, message: dict[str, Any] | None, body: dict[str, Any],
                parent: Any, ident: Any) -> dict[str, Any] | None:
        """The chunk to send now (None: nothing yet), holding back a possible secret start."""
        from ...sessions.redact import redacted_chunk

        text = body.get("text")
        if not isinstance(text, str):
            return body
        key = (_parent_id(message, parent), str(body.get("name")))
        with self._lock:
            held = self._held.pop(key, None)
            whole, waiting = redacted_chunk((held.text if held else "") + text)
            if waiting:
                parent_header = message["parent_header"] if message is not None else parent
                self._held[key] = _Held(stream, ident, body.get("name"), parent_header,
                                        waiting, time.monotonic())
                if held is None:  # one timer a hold, however many chunks extend it
                    self._wake(key, HOLD_SECONDS)
        return {**body, "text": whole} if whole else None

    def _wake(self, key: tuple[str, str], after: float) -> None:
        timer = threading.Timer(after, self._release_one, (key,))
        timer.daemon = True
        timer.start()

    def _release_one(self, key: tuple[str, str]) -> None:
        """Send what `key` holds once no chunk extended it for HOLD_SECONDS."""
        with self._lock:
            held = self._held.get(key)
            if held is None:
                return  # sent with a later chunk, or at the cell's end
            waited = time.monotonic() - held.since
            if waited < HOLD_SECONDS:
                self._wake(key, HOLD_SECONDS - waited)
                return
            del self._held[key]
        self._emit(held)

    def _release(self, parent_id: str) -> None:
        with self._lock:
            keys = [key for key in self._held if key[0] == parent_id]
            released = [self._held.pop(key) for key in keys]
        for held in released:
            self._emit(held)

    def _emit(self, held: _Held) -> None:
        message = self.session.msg("stream", {"name": held.name, "text": held.text},
                                   parent=held.parent)
        self._send(held.stream, message, ident=held.ident)


@dataclass(frozen=True)
class _Held:
    """The end of a stream that may start a secret, and where it would have gone."""

    stream: Any
    ident: Any
    name: Any
    parent: Any
    text: str
    since: float  # when a chunk last extended it


def _parent_id(message: dict[str, Any] | None, parent: Any) -> str:
    header = message.get("parent_header") if message is not None else parent
    header = header.get("header", header) if isinstance(header, dict) else {}
    return str((header or {}).get("msg_id", ""))


def _display(body: dict[str, Any]) -> dict[str, Any]:
    from ...sessions.redact import redact
    from ..kernel.capture import safe_bundle

    data = body.get("data")
    out = dict(body)
    if isinstance(data, dict):
        out["data"] = safe_bundle(data)
    if isinstance(body.get("metadata"), dict):
        out["metadata"] = redact(body["metadata"])
    return out
