"""Every message the kernel sends while the extension is loaded passes redaction.

A cell's outputs are saved in the notebook, and they do not all come from a `%%fuxi` cell
while it runs: a thread or a callback that code the agent ran left behind can print a
secret after the call returned, into whatever cell runs then. So the redaction sits where
every message leaves the kernel: the session's `send`, which streams (ipykernel's
`OutStream`, fd 1/2 output included), displays, results, errors, replies and input
prompts all go through.

What is redacted is the content a person sees or a notebook keeps (`_CONTENT`): the data
and metadata of displays, results and their updates, of a help page and of an inspection;
an error's name, value and traceback, in the `error` message and in the execute reply; an
input prompt; stream text. Left as they are: ids and headers, display ids (`transient`:
neither shown nor saved, and an update finds its display by it), the cell's own code
echoed back (`execute_input`, `set_next_input`: what the user typed, put back where it
was), and comm messages (widget state and the extension's requests go back and forth: a
redacted value would come back as the user's data; what our own comms send is redacted
where it is made).

A stream is redacted as a stream (`sessions/redact.StreamRedactor`): the end of a piece
that could be the start of a secret waits for the next piece of that stream, so a secret
printed in pieces (a character at a time, with flushes between) is replaced whole. A
held end is sent before any message that shows after it (`_AFTER_STREAMS`: a new output
of its cell, an input prompt, the cell's end: outputs keep their order), after
`HOLD_SECONDS` without a piece, and at the latest `HOLD_MAX_SECONDS` after it began to
wait.

Images and other binary payloads pass unchanged (`kernel_capture.safe_bundle`).

What leaves for a request that is `watch`ed (the running `%%fuxi` cell) also builds that
cell's outputs as a notebook keeps them (`output_model.OutputModel`), after redaction: a
tab reloaded while the cell runs is given them at its end (live_notebook.py).

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
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["HOLD_MAX_SECONDS", "HOLD_SECONDS", "OutputRedaction", "redacted_content"]

#: How long the possible start of a secret waits for the next piece of its stream.
HOLD_SECONDS = 0.5
#: The longest it waits, however often pieces extend it.
HOLD_MAX_SECONDS = 3.0
#: Streams whose state is kept (a secret may go on after their cell ended: a thread).
_KEPT_STREAMS = 64

_BUNDLES = ("data", "metadata")
_ERRORS = ("ename", "evalue", "traceback")
#: Messages that show after the cell's stream text so far (a new output, the end of the
#: cell, an input prompt): what its streams hold is sent first. A display updated in
#: place or a comm message does not (a stream may hold the start of a secret while the
#: live view is redrawn many times a second).
_AFTER_STREAMS = frozenset({"display_data", "execute_result", "error", "clear_output",
                            "input_request", "execute_reply", "status"})
#: The fields of each message type that carry what a person sees or a notebook keeps.
_CONTENT: dict[str, tuple[str, ...]] = {
    "display_data": _BUNDLES,
    "update_display_data": _BUNDLES,
    "execute_result": _BUNDLES,
    "error": _ERRORS,
    "execute_reply": (*_ERRORS, "payload", "user_expressions"),
    "inspect_reply": _BUNDLES,
    "input_request": ("prompt",),
}


class OutputRedaction:
    """Wraps a jupyter_client `Session.send` (see the module docstring)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._send = session.send
        self._streams: OrderedDict[tuple[str, str], _Stream] = OrderedDict()
        self._lock = threading.RLock()  # sends in order, whichever thread sends
        #: the request of the `%%fuxi` cell now running (`set_running`), if any
        self.running: dict[str, Any] | None = None
        #: request id -> the outputs its cell shows, built as they leave (`watch`)
        self._models: dict[str, Any] = {}

    def set_running(self, request: dict[str, Any] | None) -> None:
        """The `%%fuxi` cell whose request stays "busy" until it ends (None: it ended)."""
        with self._lock:
            self.running = request

    def install(self) -> None:
        self.session.send = self.send

    def watch(self, request: dict[str, Any]) -> Any:
        """Keep the outputs of `request`'s cell as they leave (an `OutputModel`)."""
        from .output_model import OutputModel

        with self._lock:
            model = self._models[_parent_id(None, request)] = OutputModel()
        return model

    def unwatch(self, request: dict[str, Any]) -> None:
        with self._lock:
            self._models.pop(_parent_id(None, request), None)

    def release(self, request: dict[str, Any]) -> None:
        """Send what the streams of `request`'s cell hold now (its outputs are taken)."""
        with self._lock:
            self._release(_parent_id(None, request))

    def _shown(self, parent_id: str, kind: Any, body: Any) -> None:
        model = self._models.get(parent_id)
        if model is not None and isinstance(body, dict):
            model.add(str(kind), body)

    def send(self, stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None,
             ident: Any = None, *args: Any, **kwargs: Any) -> Any:
        """`Session.send`, with what a message shows redacted first."""
        message = msg_or_type if isinstance(msg_or_type, dict) else None
        kind = message["header"]["msg_type"] if message is not None else msg_or_type
        body = message.get("content") if message is not None else content
        parent_id = _parent_id(message, parent)
        with self._lock:
            if kind == "stream" and isinstance(body, dict) and isinstance(body.get("text"), str):
                header = message["parent_header"] if message is not None else parent
                body = self._stream(_Stream.key(parent_id, body), body, (stream, ident, header))
                if body is None:
                    return None  # all of it waits for the rest of a possible secret
            else:
                if kind in _AFTER_STREAMS:
                    self._release(parent_id)  # a held end goes before what follows it
                if isinstance(body, dict):
                    body = redacted_content(str(kind), body)
            self._shown(parent_id, kind, body)
            if message is not None:
                sent = self._send(stream, {**message, "content": body}, content, parent, ident,
                                  *args, **kwargs)
            else:
                sent = self._send(stream, msg_or_type, body, parent, ident, *args, **kwargs)
            if kind == "status" and isinstance(body, dict) and body.get(
                    "execution_state") == "idle":
                self._keep_busy(stream, parent_id, ident)
            return sent

    def _keep_busy(self, stream: Any, parent_id: str, ident: Any) -> None:
        """After an idle for another request, `busy` again for the running cell."""
        running = self.running
        if running is not None and parent_id != _parent_id(None, running):
            self._send(stream, "status", {"execution_state": "busy"}, running, ident)

    def _stream(self, key: tuple[str, str], body: dict[str, Any],
                where: tuple[Any, Any, Any]) -> dict[str, Any] | None:
        """The piece to send now (None: nothing yet), holding back a possible secret."""
        from ...sessions.redact import StreamRedactor  # here: `%load_ext` stays light

        state = self._streams.pop(key, None)
        if state is None:
            state = _Stream(StreamRedactor(), body.get("name"))
            while len(self._streams) >= _KEPT_STREAMS:
                self._emit(self._streams.popitem(last=False)[1])
        self._streams[key] = state  # the newest last
        state.stream, state.ident, state.parent = where
        was_holding = state.redactor.holding
        text = state.redactor.feed(body["text"])
        if state.redactor.holding:
            state.since = time.monotonic()
            if not was_holding:
                state.began = state.since
            if not state.timer:
                state.timer = True
                _wake(HOLD_SECONDS, lambda: self._due(key))
        return {**body, "text": text} if text else None

    def _due(self, key: tuple[str, str]) -> None:
        """Send what `key` holds once it waited long enough (else look again later)."""
        with self._lock:
            state = self._streams.get(key)
            if state is None or not state.redactor.holding:
                if state is not None:
                    state.timer = False
                return
            due = min(state.since + HOLD_SECONDS, state.began + HOLD_MAX_SECONDS)
            left = due - time.monotonic()
            if left > 0:
                _wake(left, lambda: self._due(key))
                return
            state.timer = False
            self._emit(state)

    def _release(self, parent_id: str) -> None:
        for key, state in self._streams.items():
            if key[0] == parent_id:
                self._emit(state)

    def _emit(self, state: _Stream) -> None:
        """Send all `state` holds (the lock is held: pieces keep their order)."""
        text = state.redactor.flush()
        if text:
            body = {"name": state.name, "text": text}
            message = self.session.msg("stream", body, parent=state.parent)
            self._shown(_parent_id(message, None), "stream", body)
            self._send(state.stream, message, ident=state.ident)


@dataclass
class _Stream:
    """One stream of one cell (stdout or stderr): its redaction, and where it goes."""

    redactor: Any  # sessions.redact.StreamRedactor
    name: Any
    stream: Any = None
    ident: Any = None
    parent: Any = None
    since: float = 0.0  # when a piece last extended what it holds
    began: float = 0.0  # when it began to hold it
    timer: bool = False  # a wake-up is due

    @staticmethod
    def key(parent_id: str, body: dict[str, Any]) -> tuple[str, str]:
        return parent_id, str(body.get("name"))


def _wake(after: float, then: Callable[[], None]) -> None:
    timer = threading.Timer(after, then)
    timer.daemon = True
    timer.start()


def _parent_id(message: dict[str, Any] | None, parent: Any) -> str:
    header = message.get("parent_header") if message is not None else parent
    header = header.get("header", header) if isinstance(header, dict) else {}
    return str((header or {}).get("msg_id", ""))


def redacted_content(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` of a `kind` message with what it shows redacted (`_CONTENT`)."""
    fields = [name for name in _CONTENT.get(kind, ()) if name in body]
    if not fields:
        return body
    return {**body, **{name: _FIELDS[name](body[name]) for name in fields}}


def _redact(value: Any) -> Any:
    from ...sessions.redact import redact

    return redact(value)


def _data(value: Any) -> Any:
    """A mime bundle: everything but its images."""
    from ..kernel.capture import safe_bundle

    return safe_bundle(value) if isinstance(value, dict) else _redact(value)


def _payloads(value: Any) -> Any:
    """An execute reply's payloads: a help page's data; the text put back into the cell
    (`set_next_input`) is the user's own."""
    if not isinstance(value, list):
        return value
    return [{**item, "data": _data(item["data"])} if isinstance(item, dict) and "data" in item
            else item for item in value]


def _expressions(value: Any) -> Any:
    """The results of user expressions: each a bundle or an error."""
    if not isinstance(value, dict):
        return value
    return {name: {**result, **{k: _FIELDS[k](result[k]) for k in (*_BUNDLES, *_ERRORS)
                                if k in result}} if isinstance(result, dict) else result
            for name, result in value.items()}


_FIELDS: dict[str, Callable[[Any], Any]] = {
    "data": _data, "metadata": _redact, "ename": _redact, "evalue": _redact,
    "traceback": _redact, "prompt": _redact, "payload": _payloads,
    "user_expressions": _expressions,
}
