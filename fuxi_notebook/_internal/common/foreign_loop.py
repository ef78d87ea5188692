"""Running the loop for code on another event loop (trio, through anyio or directly).

The loop is asyncio code (queues, tasks, subprocesses). Called from any other event
loop, `query()` and `FuxiSDKClient` run it on an asyncio loop in a thread of its own
(`AsyncioBridge`, an anyio blocking portal), and the caller awaits each step without
blocking its own loop. The user's own coroutines (hooks, `can_use_tool`, SDK MCP tool
handlers) may use the caller's library (`trio.sleep`), so while the loop runs on a
bridge they are awaited on the caller's loop (`on_callers_loop`), as they would be in
the comparable SDK, whose control protocol runs on the caller's loop. Under asyncio none
of this is used: everything runs where it is called, as before.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["AsyncioBridge", "needs_bridge", "on_callers_loop"]

_T = TypeVar("_T")
_DONE = object()

#: bridge thread id -> the caller's event-loop token, while a bridge runs
_CALLERS: dict[int, Any] = {}


def needs_bridge() -> bool:
    """Whether the running event loop is not asyncio's (e.g. trio's)."""
    import sniffio

    try:
        return sniffio.current_async_library() != "asyncio"
    except sniffio.AsyncLibraryNotFoundError:
        return False


async def on_callers_loop(function: Callable[..., Awaitable[_T]], *args: Any) -> _T:
    """Await the user's `function(*args)` on the loop of the code that started the run:
    here, unless the run is on a bridge's thread (then on the caller's loop, from a
    worker thread, so this loop goes on meanwhile). Cancelling this (an interrupt, a
    hook's timeout) cancels it there too."""
    token = _CALLERS.get(threading.get_ident())
    if token is None:
        return await function(*args)
    import anyio
    import anyio.from_thread

    scopes: list[Any] = []
    cancelled = threading.Event()

    async def call() -> _T:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            if cancelled.is_set():
                scope.cancel()
            return await function(*args)
        raise _Abandoned  # cancelled from the asyncio side: nobody waits for this

    def cancel_there() -> None:
        cancelled.set()
        for scope in scopes:
            anyio.from_thread.run_sync(scope.cancel, token=token)

    def run_there() -> _T:
        return anyio.from_thread.run(call, token=token)

    try:
        return await asyncio.to_thread(run_there)
    except asyncio.CancelledError:
        threading.Thread(target=cancel_there, name="fuxi-cancel", daemon=True).start()
        raise


class _Abandoned(Exception):
    """A call on the caller's loop that was cancelled from the asyncio side."""


class AsyncioBridge:
    """An asyncio loop in a thread of its own, driven from another loop.

    `start()` and `close()` bracket it; `call` awaits a coroutine function there,
    `iterate` an async generator, `feed` turns the caller's async iterable into one the
    asyncio side can read. Cancelling the caller's wait cancels the asyncio task."""

    def __init__(self) -> None:
        self._context: Any = None
        self._portal: Any = None
        self._thread: int | None = None

    async def start(self) -> None:
        import anyio.from_thread
        import anyio.lowlevel
        import anyio.to_thread

        token = anyio.lowlevel.current_token()
        self._context = anyio.from_thread.start_blocking_portal("asyncio",
                                                                name="fuxi-asyncio")
        self._portal = await anyio.to_thread.run_sync(self._context.__enter__)
        self._thread = self._portal.call(threading.get_ident)
        _CALLERS[self._thread] = token

    async def call(self, function: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """`await function(*args)`, run on the asyncio loop."""
        import anyio
        import anyio.to_thread

        future = self._portal.start_task_soon(function, *args)
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            future.cancel()
            raise

    async def iterate(self, messages: AsyncGenerator[_T, None]) -> AsyncGenerator[_T, None]:
        """The items of `messages` (an async generator made for the asyncio side), each
        produced there; closing this closes it there."""
        async def step() -> Any:
            try:
                return await messages.__anext__()
            except StopAsyncIteration:
                return _DONE

        try:
            while True:
                item = await self.call(step)
                if item is _DONE:
                    return
                yield item
        finally:
            await self.call(messages.aclose)

    def feed(self, items: AsyncIterable[_T]) -> AsyncGenerator[_T, None]:
        """The caller's async iterable, read from the asyncio side: each item is taken
        on the caller's loop (where the iterable's own code may await its library)."""
        iterator = aiter(items)

        async def take() -> Any:
            try:
                return await anext(iterator)
            except StopAsyncIteration:
                return _DONE

        async def read() -> AsyncGenerator[_T, None]:
            while True:
                item = await on_callers_loop(take)
                if item is _DONE:
                    return
                yield item

        return read()

    def inside(self) -> bool:
        """Whether the current thread is the bridge's (a call from the loop itself)."""
        return self._thread == threading.get_ident()

    async def close(self) -> None:
        import anyio.to_thread

        if self._context is None:
            return
        _CALLERS.pop(self._thread or 0, None)
        context, self._context = self._context, None
        await anyio.to_thread.run_sync(context.__exit__, None, None, None)
