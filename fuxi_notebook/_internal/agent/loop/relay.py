"""Messages from inside a running tool call, yielded in the run's own stream.

While tool calls run, the loop is suspended awaiting them, so a tool that produces
messages of its own (the Agent tool: its subagent's tool calls and results) cannot hand
them to the loop's generator directly. `relayed` runs the calls in a task of their own
and yields, while they run, whatever they pass to `relay()`, in the order it came; once
the calls are done their outcomes are handed back and the loop goes on as before.

The sink is a context variable set only in that task's context, so `relay()` reaches the
run whose call is running (nested runs each relay to their own), and is a no-op anywhere
else. If the consumer stops (interrupt, `aclose`), the task is cancelled and awaited
before the stop goes on, so the calls have unwound (and recorded what they had done)
before the loop answers them.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import AsyncGenerator, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ....types import Message

if TYPE_CHECKING:
    from .run import Run

__all__ = ["Relay", "current_relay", "relay", "relayed", "without_relay"]

T = TypeVar("T")


@dataclass
class Relay:
    """Where a running call's messages go, and the run they belong to."""

    run: Run
    pending: deque[Message] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, message: Message) -> None:
        self.pending.append(message)
        self.wake.set()


_RELAY: contextvars.ContextVar[Relay | None] = contextvars.ContextVar("fuxi_relay",
                                                                     default=None)


def current_relay() -> Relay | None:
    """The relay of the call running in this context (None outside `relayed`)."""
    return _RELAY.get()


def without_relay(context: contextvars.Context) -> contextvars.Context:
    """`context` with no relay: for work that outlives the call that started it (a
    background subagent), whose messages reach no run's stream."""
    context.run(_RELAY.set, None)
    return context


def relay(message: Message) -> bool:
    """Hand `message` to the stream of the run whose call is running; False (and the
    message dropped) outside a relayed call."""
    sink = _RELAY.get()
    if sink is None:
        return False
    sink.push(message)
    return True


async def relayed(run: Run, work: Coroutine[Any, Any, list[T]],
                  into: list[T]) -> AsyncGenerator[Message, None]:
    """Run `work` (the calls of one batch) in its own task, yielding what it relays as
    it comes; its result is appended to `into` once it is done."""
    sink = Relay(run)
    context = contextvars.copy_context()
    context.run(_RELAY.set, sink)
    task = asyncio.get_running_loop().create_task(work, context=context)
    task.add_done_callback(lambda _: sink.wake.set())
    try:
        while True:
            while sink.pending:
                yield sink.pending.popleft()
            if task.done():
                break
            sink.wake.clear()
            if not sink.pending and not task.done():
                await sink.wake.wait()
    except BaseException:  # cancelled or closed: the calls unwind before we go on
        if not task.done():
            task.cancel()
            await asyncio.wait([task])
        raise
    into.extend(task.result())
