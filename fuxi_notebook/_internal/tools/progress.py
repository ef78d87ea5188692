"""Which tool call is running, and what it has produced so far.

While a call runs, the loop is suspended in `await tool.run(...)`, so it cannot yield
messages about the call's progress. Two context variables carry that instead (they follow
the call into its tasks and into code the Python tool runs):

- `current_call()`: the tool_use id of the call being approved or run, so a frontend can
  tell which call drew a figure or asks for approval;
- `report_output(text)`: a tool that streams (Bash, Python) reports its output so far; the
  run keeps it for an interrupt's "output so far", and a frontend's listener shows it.

Threads do not inherit context variables, so a tool reporting from a thread of its own
(the Python tool does, as the user's code holds the main thread) takes `reporter()` once,
in the call's context, and calls that from any thread. Tools cap a report at about
`PROGRESS_CHARS` and send at most one per `PROGRESS_INTERVAL` seconds (plus a final one),
so a print loop stays fast whatever the listener does.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["PROGRESS_CHARS", "PROGRESS_INTERVAL", "ProgressListener", "calling",
           "current_call", "detached_context", "report_output", "reporter"]

PROGRESS_CHARS = 4_000
"""About how many characters of output one report carries (head and tail)."""

PROGRESS_INTERVAL = 0.1
"""Seconds (monotonic) between two reports of one call, at least."""

#: (tool_use_id, output so far, seconds since the call started) -> None
ProgressListener = Callable[[str, str, float], None]

_CALL: ContextVar[str | None] = ContextVar("fuxi_current_call", default=None)
_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("fuxi_progress_sink", default=None)


def current_call() -> str | None:
    """The tool_use id of the call being approved or run in this context, if any."""
    return _CALL.get()


def detached_context(context: contextvars.Context) -> contextvars.Context:
    """`context` with no progress sink (`current_call()` kept): for work that outlives
    the call that started it (a background subagent), whose reports would reach a
    finished call."""
    context.run(_SINK.set, None)
    return context


def report_output(text: str) -> None:
    """A tool's output so far (the whole of it, capped by the tool); no-op outside a call."""
    sink = _SINK.get()
    if sink is not None:
        sink(text)


def reporter() -> Callable[[str], None] | None:
    """The current call's `report_output`, to keep and call from any thread (where the
    context variable is not set); None outside a call, so a tool can skip the work."""
    return _SINK.get()


@contextlib.contextmanager
def calling(tool_use_id: str, keep: Callable[[str], None],
            listener: ProgressListener | None) -> Iterator[None]:
    """Within the block, `current_call()` is `tool_use_id` and `report_output` reaches
    `keep` (the run's copy) and then `listener` (a frontend; its errors are not the
    tool's)."""
    started = time.monotonic()

    def sink(text: str) -> None:
        keep(text)
        if listener is not None:
            with contextlib.suppress(Exception):
                listener(tool_use_id, text, time.monotonic() - started)

    call_token = _CALL.set(tool_use_id)
    sink_token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(sink_token)
        _CALL.reset(call_token)
