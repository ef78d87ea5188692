"""One MCP server connection, owned by one background task (an "actor").

ipykernel runs each cell in its own asyncio task, and an anyio cancel scope (inside every
`mcp.Client`) must be exited by the task that entered it. So the client is never held by
the caller: a dedicated task enters it, lists the tools, serves `call_tool` requests from
a queue (each call in its own child task, so read-only calls overlap) and exits the client
itself when asked to stop. Any task on the same loop may start, call or close.

Protocol mode: `mode="legacy"` (the initialize handshake, protocol 2025-11-25) for every
transport. Every server speaks it (a 2026 server too; "auto" would probe `server/discover`
first), and measured on streamable HTTP it was about ten times faster per call than the
2026 per-request mode (≈4 ms against ≈48 ms on localhost); in-process both are well
under a millisecond.

A server that goes away (its process exits, its connection drops) fails every pending
and later call at once with "MCP server 'x' is not running: <why>", never a hang.

A server `create_sdk_mcp_server` made is not spoken to over MCP at all: its tools are
listed and called directly (sdk.py `in_process_tools`, `call_in_process`), each call in a
task of its own, so the timeout and an interrupt return at once as above, even from a
handler busy on a worker thread; `close()` fails the calls still running. No actor is
needed: nothing holds a cancel scope across calls. The protocol's machinery cost ≈0.45 ms
of CPU a call, as much as the rest of a built-in tool's call (issue 36).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .config import McpServerConfig
from .stdio import StartError, StdioProcess

__all__ = ["CallFailure", "Connection"]

#: seconds `close()` waits for the actor before killing what is left
CLOSE_TIMEOUT = 10.0
#: at most this many pages of `tools/list` (a server whose cursor never ends cannot hang us)
_MAX_PAGES = 100
_CLIENT_NAME = "fuxi-notebook"


@dataclass
class CallFailure:
    """A call that produced no MCP result; `message` is what the model is told."""

    message: str


@dataclass(eq=False)
class _Job:
    tool: str
    args: dict[str, Any]
    future: asyncio.Future[Any]
    scope: Any = None  # what cancels the running call (anyio scope, or a task in process)


@dataclass
class _Gone:
    reason: str


@dataclass(eq=False)
class Connection:
    """One server: its actor task, its status and its tools (`mcp.types.Tool`)."""

    name: str
    config: McpServerConfig
    cwd: Path
    log: Callable[[str], None] | None = None
    status: Literal["pending", "connected", "failed"] = "pending"
    error: str | None = None
    server_info: dict[str, str] | None = None
    tools: list[Any] = field(default_factory=list)
    #: seconds from start to connected (None until then)
    start_seconds: float | None = None
    _process: StdioProcess | None = None
    _task: asyncio.Task[None] | None = None
    _jobs: asyncio.Queue[_Job | _Gone | None] | None = None
    _ready: asyncio.Event | None = None
    _scope: Any = None
    _pending: set[_Job] = field(default_factory=set)
    _stop_reason: str | None = None
    #: the tools of a server made in this process, called directly (None: over MCP)
    _in_process: dict[str, Any] | None = None

    @property
    def pid(self) -> int | None:
        """The stdio server's process id (None for other transports)."""
        return self._process.pid if self._process is not None else None

    async def start(self, timeout: float) -> None:
        """Connect and list the tools; never raises for the server's failure (the status
        says it). Idempotent: a second call waits for the first."""
        if self._in_process is not None or self._start_in_process():
            return
        if self._task is None:
            import anyio

            self._jobs, self._ready = asyncio.Queue(), asyncio.Event()
            self._scope = anyio.CancelScope()
            began = time.monotonic()
            self._task = asyncio.get_running_loop().create_task(
                self._run(began), name=f"mcp-server-{self.name}")
        assert self._ready is not None
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._ready.wait())
        except TimeoutError:
            tail = self._process.stderr_tail() if self._process is not None else ""
            self._stop_reason = f"it did not start within {timeout:g} s" + (
                f"; stderr: {tail}" if tail else "")
            await self._halt()

    async def call(self, tool: str, args: dict[str, Any], timeout: float) -> Any:
        """The tool's `CallToolResult`, or a `CallFailure` (not running, timed out)."""
        if self.status != "connected" or (self._jobs is None and self._in_process is None):
            return CallFailure(self.not_running())
        job = _Job(tool, args, asyncio.get_running_loop().create_future())
        self._pending.add(job)
        job.future.add_done_callback(lambda _: self._pending.discard(job))
        if self._in_process is not None:
            job.scope = asyncio.get_running_loop().create_task(self._serve_in_process(job))
        else:
            assert self._jobs is not None
            self._jobs.put_nowait(job)
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(job.future)
        except TimeoutError:
            return CallFailure(f"MCP tool {tool!r} of server {self.name!r} did not answer "
                               f"within {timeout:g} s (MCP_TOOL_TIMEOUT sets the limit, in ms)")
        finally:
            if not job.future.done():  # timed out or interrupted: stop the call too
                job.future.cancel()
                if job.scope is not None:
                    job.scope.cancel()

    def not_running(self) -> str:
        why = self.error or ("it is still starting" if self.status == "pending" else
                             "it was never started")
        return f"MCP server {self.name!r} is not running: {why}"

    async def close(self) -> None:
        """Stop the server (idempotent); in-flight calls fail with "not running"."""
        task = self._task
        if task is None or task.done():
            self._stop_in_process()
            self._mark_failed(self._stop_reason or "the server was closed")
            return
        self._stop_reason = self._stop_reason or "the server was closed"
        await self._halt()

    def close_now(self) -> None:
        """Best effort without awaiting (atexit, kernel exit): kill the server process."""
        if self._process is not None:
            self._process.kill_now()
        self._mark_failed(self._stop_reason or "the server was closed")

    # ------------------------------------------------------------ a server made here

    def _start_in_process(self) -> bool:
        """Connect a server `create_sdk_mcp_server` made (False: not one of those)."""
        from .sdk import in_process_tools

        config: Any = self.config
        instance = config.get("instance") if config.get("type") == "sdk" else None
        tools = in_process_tools(instance) if instance is not None else None
        if instance is None or tools is None:
            return False
        began = time.monotonic()
        self._in_process = tools
        listed = [entry.listing() for entry in tools.values()]
        self._connected({"name": instance.name, "version": instance.version or ""}, listed,
                        time.monotonic() - began)
        return True

    async def _serve_in_process(self, job: _Job) -> None:
        """One call of a server made here, as `_serve` makes one over MCP."""
        from .sdk import call_in_process

        assert self._in_process is not None
        if job.future.done():  # timed out or interrupted before it started
            return
        try:
            outcome: Any = await call_in_process(self._in_process, job.tool, job.args)
        except Exception as error:  # e.g. a result the MCP types refuse
            outcome = CallFailure(f"MCP tool {job.tool!r} of server {self.name!r} "
                                  f"failed: {_leaf_text(error)}")
        if not job.future.done():
            job.future.set_result(outcome)

    def _stop_in_process(self) -> None:
        """Closing a server made here: its running calls fail as "not running"."""
        if self._in_process is None:
            return
        running = [job.scope for job in self._pending if job.scope is not None]
        self._finish(self._stop_reason or "the server was closed")
        for task in running:
            task.cancel()

    # ------------------------------------------------------------------ the actor

    async def _halt(self) -> None:
        """Ask the actor to stop (gracefully once connected), wait, then force."""
        task = self._task
        if task is None or task.done():
            return
        if self.status == "connected" and self._jobs is not None:
            self._jobs.put_nowait(None)
        else:
            self._scope.cancel()
        done, _ = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if not done:
            self.close_now()
            task.cancel()

    async def _run(self, began: float) -> None:
        reason: str | None = None
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    client = await self._open(stack)
                    tools = await _list_tools(client)
                    info = client.server_info
                    self._connected({"name": info.name, "version": info.version or ""}
                                    if info is not None else None, tools,
                                    time.monotonic() - began)
                    reason = await self._serve_all(client)
        except Exception as error:
            reason = self._describe(error)
        finally:
            self._finish(self._stop_reason or reason or "the connection ended")

    async def _serve_all(self, client: Any) -> str | None:
        """Serve calls until told to stop (None) or the server is gone (its reason)."""
        import anyio

        assert self._jobs is not None
        async with anyio.create_task_group() as calls:
            while True:
                job = await self._jobs.get()
                if job is None or isinstance(job, _Gone):
                    calls.cancel_scope.cancel()
                    return job.reason if isinstance(job, _Gone) else None
                calls.start_soon(self._serve, client, job)
        return None  # only if the task group swallowed an exception (the checker's view)

    async def _serve(self, client: Any, job: _Job) -> None:
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        with anyio.CancelScope() as scope:
            job.scope = scope
            if job.future.done():
                return
            try:
                outcome: Any = await client.call_tool(job.tool, job.args)
            except MCPError as error:
                if error.code == CONNECTION_CLOSED:  # the actor learns why and fails it
                    self._gone(await self._settled_exit() or "the connection was closed")
                    return
                outcome = CallFailure(f"MCP server {self.name!r} answered with an error: "
                                      f"{error.message or error}")
            except Exception as error:  # e.g. a result that breaks its own output schema
                outcome = CallFailure(f"MCP tool {job.tool!r} of server {self.name!r} "
                                      f"failed: {_leaf_text(error)}")
            if not job.future.done():
                job.future.set_result(outcome)

    async def _open(self, stack: AsyncExitStack) -> Any:
        """Enter the transport and the `mcp.Client` for this server's config."""
        from mcp import Client
        from mcp.types import Implementation

        config: Any = self.config
        kind = config.get("type", "stdio")
        target: Any
        if kind == "stdio":
            cwd = Path(config["cwd"]).expanduser() if config.get("cwd") else self.cwd
            self._process = StdioProcess(
                config["command"], list(config.get("args") or []),
                env={**os.environ, **(config.get("env") or {})},
                cwd=cwd if cwd.is_absolute() else self.cwd / cwd)
            self._process.on_exit = self._gone
            target = self._process.transport()
        elif kind == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=config.get("headers"), timeout=httpx2.Timeout(30.0, read=300.0)))
            target = streamable_http_client(config["url"], http_client=http)
        elif kind == "sse":
            from mcp.client.sse import sse_client

            target = sse_client(config["url"], headers=config.get("headers"))
        else:
            target = config["instance"]
        from ..common.version import VERSION as __version__

        client = Client(target, mode="legacy", cache=None,
                        client_info=Implementation(name=_CLIENT_NAME, version=__version__))
        return await stack.enter_async_context(client)

    def _connected(self, info: dict[str, str] | None, tools: list[Any],
                   seconds: float) -> None:
        self.server_info = info
        self.tools, self.status, self.start_seconds = tools, "connected", seconds
        if self._ready is not None:
            self._ready.set()
        self._say(f"MCP server {self.name!r} connected: {len(tools)} tools in {seconds:.2f} s")

    def _gone(self, reason: str) -> None:
        """The server went away by itself: the actor stops serving and fails the calls."""
        if self._jobs is not None:
            self._jobs.put_nowait(_Gone(reason))

    def _finish(self, reason: str) -> None:
        self._mark_failed(reason)
        for job in list(self._pending):
            if not job.future.done():
                job.future.set_result(CallFailure(self.not_running()))
        if self._ready is not None:
            self._ready.set()

    def _mark_failed(self, reason: str) -> None:
        if self.status != "failed":
            what = "stopped" if self.status == "connected" else "could not start"
            self.status, self.error = "failed", reason
            self._say(f"MCP server {self.name!r} {what}: {reason}")

    def _say(self, text: str) -> None:
        if self.log is not None:
            with contextlib.suppress(Exception):
                self.log(text)

    def _exit_reason(self) -> str | None:
        return self._process.exit_reason if self._process is not None else None

    async def _settled_exit(self) -> str | None:
        """The stdio process's exit reason, given a moment to be known (the pipe may
        break before the reader has seen the exit)."""
        import anyio

        with anyio.move_on_after(3.0):
            while self._process is not None and self._process.exit_reason is None:
                await anyio.sleep(0.01)
        return self._exit_reason()

    def _describe(self, error: BaseException) -> str:
        """Why the server failed, in one readable line (its own exit reason first)."""
        gone = self._exit_reason()
        if gone:
            return gone
        leaf = _leaf(error)
        if isinstance(leaf, StartError):
            return str(leaf)
        text = _leaf_text(error)
        if type(leaf).__module__.startswith("httpx"):
            return f"cannot reach {self.config.get('url')}: {text}"
        tail = self._process.stderr_tail() if self._process is not None else ""
        return f"{text}; stderr: {tail}" if tail else text


async def _list_tools(client: Any) -> list[Any]:
    from mcp.shared.exceptions import MCPError
    from mcp_types import METHOD_NOT_FOUND

    tools: list[Any] = []
    cursor = None
    for _ in range(_MAX_PAGES):
        try:
            page = await client.list_tools(cursor=cursor)
        except MCPError as error:
            if error.code == METHOD_NOT_FOUND:  # a server without tools
                return tools
            raise
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _leaf(error: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _leaf_text(error: BaseException) -> str:
    leaf = _leaf(error)
    message = str(leaf).strip()
    name = type(leaf).__name__
    if type(leaf).__module__.startswith("mcp") and message:
        return message
    return f"{name}: {message}" if message else name
