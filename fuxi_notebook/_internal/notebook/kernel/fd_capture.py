"""Output written to file descriptors 1 and 2 while a Python-tool call runs.

`os.system`, subprocesses, C extensions and `print(..., file=sys.__stdout__)` bypass
`sys.stdout`: they write to fd 1/2, which ipykernel forwards to the cell as stream output,
unredacted and uncapped. During a call the two descriptors point at pipes instead; what
arrives joins the call's captured stdout/stderr (so the model sees it, and the cell shows
it only through the redacted, capped transcript). A process the code left running keeps
the pipe: what it writes later is redacted as a stream (`sessions/redact.StreamRedactor`:
the end of a write that could be the start of a secret waits for the next write, or for
`HOLD_SECONDS` of quiet, or the pipe's end) and passed on to the real descriptor.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["HOLD_SECONDS", "FdCapture"]

_CHUNK = 65536
_DRAIN_SECONDS = 0.1  # reading keeps up: EOF comes at once unless a leftover process holds it
#: How long a leftover process's possible start of a secret waits for its next write.
HOLD_SECONDS = 0.5


class _Pipe:
    """One descriptor redirected into a pipe, and the thread reading it."""

    def __init__(self, fd: int, sink: Callable[[str], object]) -> None:
        self.fd, self.sink = fd, sink
        self.saved = os.dup(fd)
        read, write = os.pipe()
        os.dup2(write, fd)
        os.close(write)
        self.read = read
        self.after = False  # the call ended: pass output on to `saved`, redacted
        self.done = False  # the pipe reached EOF
        self.redactor: Any = None  # what passes on to `saved` (sessions.redact.StreamRedactor)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, name=f"fuxi-fd{fd}", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            if not self._quiet_for_a_while():
                with self.lock:
                    self._pass_on(final=True)  # what waited for the rest of a secret
            try:
                chunk = os.read(self.read, _CHUNK)
            except OSError:
                break
            text = decoder.decode(chunk, final=not chunk)
            if text:
                self._deliver(text)
            if not chunk:
                break
        with contextlib.suppress(OSError):
            os.close(self.read)
        with self.lock:
            self.done = True
            if self.after:
                self._pass_on(final=True)
                self._close_saved()

    def _quiet_for_a_while(self) -> bool:
        """False when held output has waited `HOLD_SECONDS` with nothing more to read."""
        if self.redactor is None or not self.redactor.holding:
            return True
        try:
            ready, _, _ = select.select([self.read], [], [], HOLD_SECONDS)
        except (OSError, ValueError):  # no select on pipes here: never wait
            return False
        return bool(ready)

    def _close_saved(self) -> None:
        """Close the duplicate of the real descriptor, once (the lock is held)."""
        if self.saved >= 0:
            with contextlib.suppress(OSError):
                os.close(self.saved)
            self.saved = -1

    def _deliver(self, text: str) -> None:
        with self.lock:
            if not self.after:
                self.sink(text)
                return
            self._pass_on(text)

    def _pass_on(self, text: str = "", *, final: bool = False) -> None:
        """Write `text` on to the real descriptor, redacted as a stream (`final`: with
        what it held back). Called with the lock held, once the call ended."""
        if self.redactor is None:
            from ...sessions.redact import StreamRedactor

            self.redactor = StreamRedactor()
        out = self.redactor.feed(text) + (self.redactor.flush() if final else "")
        if out and self.saved >= 0:
            with contextlib.suppress(OSError):
                os.write(self.saved, out.encode("utf-8", errors="replace"))

    def restore(self) -> None:
        """Point the descriptor back; wait (briefly) for what is still in the pipe."""
        os.dup2(self.saved, self.fd)
        self.thread.join(_DRAIN_SECONDS)  # EOF unless a leftover process holds the pipe
        with self.lock:
            self.after = True
            if self.done:
                self._close_saved()


class FdCapture:
    """Context manager: fd 1 and 2 into `stdout` / `stderr` sinks for the duration."""

    def __init__(self, stdout: Callable[[str], object], stderr: Callable[[str], object]) -> None:
        self._sinks = {1: stdout, 2: stderr}
        self._pipes: list[_Pipe] = []

    def __enter__(self) -> FdCapture:
        _flush_python_streams()
        for fd, sink in self._sinks.items():
            try:
                self._pipes.append(_Pipe(fd, sink))
            except OSError:  # no such descriptor (an embedded interpreter): nothing to catch
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        _flush_python_streams()  # `print(file=sys.__stdout__)` buffers before the fd
        for pipe in self._pipes:
            pipe.restore()
        self._pipes.clear()


def _flush_python_streams() -> None:
    for stream in (sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
