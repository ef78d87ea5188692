"""Output written to file descriptors 1 and 2 while a Python-tool call runs.

`os.system`, subprocesses, C extensions and `print(..., file=sys.__stdout__)` bypass
`sys.stdout`: they write to fd 1/2, which ipykernel forwards to the cell as stream output,
unredacted and uncapped. During a call the two descriptors point at pipes instead; what
arrives joins the call's captured stdout/stderr (so the model sees it, and the cell shows
it only through the redacted, capped transcript). A process the code left running keeps
the pipe: what it writes later is redacted and passed on to the real descriptor.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import threading
from collections.abc import Callable

__all__ = ["FdCapture"]

_CHUNK = 65536
_DRAIN_SECONDS = 0.1  # reading keeps up: EOF comes at once unless a leftover process holds it


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
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, name=f"fuxi-fd{fd}", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
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
                self._close_saved()

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
        from ...sessions.redact import redact_text

        with contextlib.suppress(OSError):
            os.write(self.saved, redact_text(text).encode("utf-8", errors="replace"))

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
