"""The stdio transport: an MCP server as a child process, JSON-RPC lines on its pipes.

`mcp` has one, but it hides what we need: the process id (to kill it from `atexit`, where
nothing can be awaited), what the server wrote to stderr (the reason it failed, shown to
the user), and the moment it exits (so calls fail at once with that reason instead of
waiting for their timeout). So this module spawns the server itself:

- in a new session, so its pid is the process group id and the whole tree can be killed;
- stderr kept as a bounded tail (the last `STDERR_TAIL` bytes), never printed;
- shutdown: stdin closed (the spec's way to ask a stdio server to exit), up to
  `EXIT_GRACE` seconds to exit, then SIGTERM to the group, SIGKILL after `KILL_GRACE`;
  whatever is left of the group after a clean exit is terminated the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ..common.process.group import group_alive, kill_group, signal_group, spawn_group

__all__ = ["EXIT_GRACE", "KILL_GRACE", "StartError", "StdioProcess"]

#: seconds a server gets to exit once its stdin is closed
EXIT_GRACE = 1.0
#: seconds between SIGTERM and SIGKILL to the server's process group
KILL_GRACE = 1.0
#: bytes of the server's stderr kept for error messages
STDERR_TAIL = 4096
#: longest stdout line (one JSON-RPC message) taken from a server
MAX_LINE = 64 << 20
_CHUNK = 1 << 16
_POLL = 0.01


class StartError(Exception):
    """The server process could not be started (the message says why, for the user)."""


class StdioProcess:
    """One stdio server's process: spawned by `transport()`, stopped when it exits."""

    def __init__(self, command: str, args: list[str], *, env: dict[str, str],
                 cwd: Path) -> None:
        self.command, self.args, self.env, self.cwd = command, args, env, cwd
        self.pid: int | None = None
        #: why the process ended by itself (None while it runs, or when we stopped it)
        self.exit_reason: str | None = None
        #: called once with `exit_reason` when the server exits on its own
        self.on_exit: Callable[[str], None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr = bytearray()
        self._stderr_done = asyncio.Event()
        self._stopping = False
        self._gone_first = False  # stdout ended before we asked the server to stop
        self._stopped = False

    def stderr_tail(self, limit: int = 1200, lines: int = 10) -> str:
        """The end of what the server wrote to stderr (its last lines), as text."""
        text = bytes(self._stderr).decode("utf-8", errors="replace").strip()
        text = "\n".join(text.splitlines()[-lines:])
        return text if len(text) <= limit else "..." + text[-limit:]

    def kill_now(self) -> None:
        """SIGKILL the server's process group, without waiting (atexit, kernel exit)."""
        if self.pid is not None and (self.running or group_alive(self.pid)):
            kill_group(self.pid)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @asynccontextmanager
    async def transport(self) -> AsyncIterator[tuple[Any, Any]]:
        """`(read stream, write stream)` of JSON-RPC messages, as `mcp.Client` takes."""
        import anyio
        from mcp.shared.message import SessionMessage

        with anyio.CancelScope(shield=True):  # a process started is a process stopped
            proc = await self._spawn()
        incoming, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read_stdout, proc, incoming)
                tasks.start_soon(self._write_stdin, proc, outgoing)
                tasks.start_soon(self._read_stderr, proc)
                try:
                    yield read, write
                finally:
                    self._stopping = True
                    with anyio.CancelScope(shield=True):
                        await self._stop(proc)
                        for stream in (incoming, read, write, outgoing):
                            await stream.aclose()
                    tasks.cancel_scope.cancel()
        finally:  # cancelled before the streams were handed out: stop it all the same
            self._stopping = True
            with anyio.CancelScope(shield=True):
                await self._stop(proc)

    async def _spawn(self) -> asyncio.subprocess.Process:
        where = f"{self.command!r}"
        try:
            proc = await spawn_group(
                self.command, *self.args, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=self.env, cwd=self.cwd)
        except FileNotFoundError:
            missing = "working directory" if not self.cwd.is_dir() else "command"
            detail = str(self.cwd) if missing == "working directory" else self.command
            raise StartError(f"{missing} not found: {detail}") from None
        except PermissionError:
            raise StartError(f"the command {where} is not executable") from None
        except OSError as error:
            raise StartError(f"could not start {where}: {error.strerror or error}") from None
        self._proc, self.pid = proc, proc.pid
        return proc

    async def _read_stdout(self, proc: asyncio.subprocess.Process, incoming: Any) -> None:
        """Lines of stdout → parsed messages (or the parse error, which the session logs);
        at EOF the exit is described before the stream closes, so pending calls that fail
        with "connection closed" find the reason already there."""
        import anyio
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        assert proc.stdout is not None
        buffer = bytearray()
        ended = False
        try:
            while chunk := await proc.stdout.read(_CHUNK):
                buffer += chunk
                if b"\n" not in chunk:
                    if len(buffer) > MAX_LINE:  # not a message we could ever parse
                        buffer.clear()
                        await incoming.send(ValueError(f"a line over {MAX_LINE} bytes"))
                    continue
                *lines, rest = buffer.split(b"\n")
                buffer = bytearray(rest)
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        item: Any = SessionMessage(jsonrpc_message_adapter.validate_json(
                            line, by_name=False))
                    except ValueError as error:
                        item = error
                    await incoming.send(item)
            ended = True
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            ended = True
        finally:
            if ended and not self._stopping:  # the server went away by itself
                self._gone_first = True
                await self._describe_exit(proc)
                if self.on_exit is not None and self.exit_reason is not None:
                    self.on_exit(self.exit_reason)
            with contextlib.suppress(Exception):
                await incoming.aclose()

    async def _describe_exit(self, proc: asyncio.subprocess.Process) -> None:
        """Set `exit_reason` from the exit status and the end of stderr (once)."""
        with contextlib.suppress(TimeoutError):
            await _until(lambda: proc.returncode is not None, 2.0)
        with contextlib.suppress(TimeoutError):
            await _until(self._stderr_done.is_set, 0.5)
        if self.exit_reason is not None:
            return
        code = proc.returncode
        if code is None:
            why = "it closed its stdout"
        elif code < 0:
            why = f"the process was killed by {_signal_name(-code)}"
        else:
            why = f"the process exited with code {code}"
        tail = self.stderr_tail()
        self.exit_reason = f"{why}; stderr: {tail}" if tail else why

    async def _write_stdin(self, proc: asyncio.subprocess.Process, outgoing: Any) -> None:
        import anyio

        assert proc.stdin is not None
        try:
            async for message in outgoing:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                proc.stdin.write(data.encode() + b"\n")
                await proc.stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass
        finally:  # senders now fail at once instead of waiting for a reader
            await outgoing.aclose()

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        try:
            while chunk := await proc.stderr.read(_CHUNK):
                self._stderr += chunk
                del self._stderr[:-STDERR_TAIL]
        except (ConnectionError, OSError):
            pass
        finally:
            self._stderr_done.set()

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """stdin EOF, a grace period, then the process group: SIGTERM, SIGKILL. A server
        that had already gone gets its `exit_reason` here (its reader may be cut short).
        Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self._gone_first or proc.returncode is not None:
            await self._describe_exit(proc)
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await _until(lambda: proc.returncode is not None, EXIT_GRACE)
        pgid = proc.pid
        if proc.returncode is None or group_alive(pgid):
            signal_group(pgid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await _until(lambda: proc.returncode is not None and not group_alive(pgid),
                             KILL_GRACE)
            if proc.returncode is None or group_alive(pgid):
                signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):  # reaped by the loop's child watcher
            await _until(lambda: proc.returncode is not None, KILL_GRACE)


async def _until(condition: Callable[[], bool], timeout: float) -> None:
    """Poll `condition` until it holds; TimeoutError after `timeout` seconds. (Not
    `Process.wait()`: it also waits for the pipes, which a grandchild may hold open.)"""
    import anyio

    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(_POLL)




def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
