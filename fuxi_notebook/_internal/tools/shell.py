"""The Bash tool: run a shell command with a timeout and a persistent working directory."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.process.group import spawn_group, terminate_group
from .base import DeclaredTool, Reach, ToolContext, ToolError, ToolOutput
from .truncate import HeadTailBuffer

__all__ = ["BashTool"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
_BUFFER_BYTES = 64 * 1024
"""Head and tail bytes kept while reading (a margin over MAX_OUTPUT_CHARS for escapes)."""
_DRAIN_SECONDS = 0.2
"""After bash exits, how long to keep reading output a background child may still hold."""


@dataclass
class _Outcome:
    returncode: int | None
    output: str
    timed_out: bool


class _Collector(asyncio.Protocol):
    """Feeds the command's merged stdout/stderr into a bounded buffer as it arrives, and
    reports the output so far (capped) while the command runs.

    Reports are throttled: at most one per `interval` seconds, the last one sent by a timer
    when output stops arriving, so a `yes` loop costs a few reports a second, not one per
    chunk; `finish()` sends the final state.
    """

    def __init__(self, buffer: HeadTailBuffer, report: Callable[[str], None] | None = None,
                 *, chars: int = 0, interval: float = 0.0) -> None:
        self.buffer = buffer
        self._loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[None] = self._loop.create_future()
        self._report, self._chars, self._interval = report, chars, interval
        self._reported = 0  # buffer.total when last reported
        self._last = -interval  # loop time of the last report
        self._timer: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        self.buffer.feed(data)
        if self._report is None or self._timer is not None:  # none wanted, or one is due
            return
        wait = self._last + self._interval - self._loop.time()
        if wait <= 0:
            self._send()
        else:
            self._timer = self._loop.call_later(wait, self._send)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def _send(self) -> None:
        """Report the output so far, if it grew since the last report."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._report is None or self.buffer.total == self._reported:
            return
        self._reported, self._last = self.buffer.total, self._loop.time()
        with contextlib.suppress(Exception):  # raising here would close the pipe
            self._report(self.buffer.text(self._chars))

    def finish(self) -> None:
        """The final report (what an interrupt's result will say); no reports after it."""
        self._send()
        self._report = None


class BashTool(DeclaredTool):
    """Run a bash command in the session's shell directory."""

    name = "Bash"
    description = (
        "Executes a bash command and returns its combined stdout and stderr. Each call runs "
        "in a fresh `bash -c`, but the working directory persists: after `cd dir`, later "
        "calls start in `dir` (environment variables and shell functions do not persist). "
        "Quote paths that contain spaces. `timeout` is in milliseconds (default "
        f"{DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}); on timeout the command and all its "
        "child processes are killed. stdin is empty, so interactive programs will not wait "
        "for input; pass flags like `--yes` or `-y` instead. Long output is cut in the middle. "
        "A background job (`cmd &`) keeps running after the call; redirect its output to a "
        "file (`cmd > log 2>&1 &`). Prefer the Read, Glob and Grep tools over cat, find and "
        "grep, and Edit/Write over sed or echo redirection for changing files."
    )

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command to run."},
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "description": f"Timeout in milliseconds (max {MAX_TIMEOUT_MS}).",
                },
                "description": {
                    "type": "string",
                    "description": "A short description of what the command does (5-10 words).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    kind = "execute"

    def reach(self, input: dict[str, Any]) -> Reach:
        command = input.get("command")
        return Reach(command=command if isinstance(command, str) else "")

    def always_allow(self, input: dict[str, Any]) -> str:
        """This exact command (a broader rule is the user's to write)."""
        command = input.get("command")
        return f"Bash({command})" if isinstance(command, str) and command.strip() else "Bash"

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run the command; report output, exit code or timeout; remember the final cwd."""
        timeout_ms = min(input.get("timeout") or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        cwd, note = _start_dir(ctx)
        env = {**os.environ, **ctx.env}
        with _cwd_file() as cwd_file:
            script = _script(input["command"], cwd_file)
            try:
                outcome = await _execute(script, cwd, env, timeout_ms / 1000)
            finally:
                _remember_cwd(ctx, cwd_file)
        return _format(outcome, timeout_ms, note)


def _start_dir(ctx: ToolContext) -> tuple[Path, str]:
    """The shell's directory, falling back to `ctx.cwd` (with a note) if it was deleted."""
    if ctx.shell_cwd is not None and ctx.shell_cwd.is_dir():
        return ctx.shell_cwd, ""
    note = ""
    if ctx.shell_cwd is not None:
        note = f"(Shell directory {ctx.shell_cwd} no longer exists; ran in {ctx.cwd}.)\n"
        ctx.shell_cwd = None
    if not ctx.cwd.is_dir():
        raise ToolError(f"The working directory {ctx.cwd} does not exist.")
    return ctx.cwd, note


@contextlib.contextmanager
def _cwd_file() -> Iterator[str]:
    """A temporary file the script writes its final directory into."""
    fd, name = tempfile.mkstemp(prefix="fuxi-cwd-")
    os.close(fd)
    try:
        yield name
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _script(command: str, cwd_file: str) -> str:
    """The command, preceded by an EXIT trap that records `pwd -P`.

    A trap (rather than a trailing line) also runs after `exit N` or `set -e` failures,
    and leaves the command's exit status unchanged.
    """
    return (
        f"__fuxi_cwd_file={shlex.quote(cwd_file)}\n"
        "trap 'pwd -P >| \"$__fuxi_cwd_file\" 2>/dev/null' EXIT\n"
        f"{command}\n"
    )


def _remember_cwd(ctx: ToolContext, cwd_file: str) -> None:
    with contextlib.suppress(OSError):
        recorded = Path(cwd_file).read_text().strip("\n")
        if recorded and Path(recorded).is_dir():
            ctx.shell_cwd = Path(recorded)


async def _execute(script: str, cwd: Path, env: dict[str, str], timeout: float) -> _Outcome:
    """Run `bash -c script` in its own process group; kill the group on timeout/cancel.

    The output so far goes to the running call's progress reporter while the command runs;
    the last report, sent before this returns or raises, holds everything read.
    """
    from .progress import PROGRESS_CHARS, PROGRESS_INTERVAL, reporter  # a cycle if global

    buffer = HeadTailBuffer(_BUFFER_BYTES, _BUFFER_BYTES)
    collector = _Collector(buffer, reporter(), chars=PROGRESS_CHARS, interval=PROGRESS_INTERVAL)
    proc, transport = await _spawn(script, cwd, env, collector)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await terminate_group(proc)
        except BaseException:
            await asyncio.shield(terminate_group(proc))
            raise
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(collector.closed), _DRAIN_SECONDS)
    finally:
        transport.close()
        collector.finish()
    return _Outcome(proc.returncode, buffer.text(MAX_OUTPUT_CHARS), timed_out)


async def _spawn(
    script: str, cwd: Path, env: dict[str, str], collector: _Collector
) -> tuple[asyncio.subprocess.Process, asyncio.ReadTransport]:
    """Start bash writing stdout+stderr into a pipe we own (so we can stop reading it)."""
    read_fd, write_fd = os.pipe()
    try:
        proc = await spawn_group(
            "bash", "-c", script, cwd=cwd, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=write_fd, stderr=write_fd,
        )  # fmt: skip
    except OSError as exc:
        os.close(read_fd)
        raise ToolError(f"Could not start bash: {exc}") from exc
    finally:
        os.close(write_fd)
    pipe = open(read_fd, "rb", 0)  # noqa: SIM115 - the transport owns and closes it
    try:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(lambda: collector, pipe)
    except BaseException:
        pipe.close()
        await asyncio.shield(terminate_group(proc))
        raise
    return proc, transport


def _format(outcome: _Outcome, timeout_ms: int, note: str) -> ToolOutput:
    """Output text plus the verdict; non-zero exit and timeout are errors for the model."""
    text = note + outcome.output.rstrip("\n")
    if outcome.timed_out:
        return ToolOutput(
            content=_join(text, f"Command timed out after {timeout_ms} ms"), is_error=True
        )
    if outcome.returncode:
        return ToolOutput(content=_join(text, f"Exit code {outcome.returncode}"), is_error=True)
    return ToolOutput(content=text or "(no output)")


def _join(text: str, verdict: str) -> str:
    return f"{text}\n{verdict}" if text else verdict
