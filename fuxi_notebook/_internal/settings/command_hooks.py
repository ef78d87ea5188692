"""Hook commands from settings files, run as `HookMatcher` callbacks.

A settings file's `{"type": "command", "command": "...", "timeout": 60}` becomes a
`CommandHook`, an async callback `HookRunner` calls like any other: it runs the command
with `/bin/sh -c` in the project folder, in a process group of its own, with the hook
input as JSON on stdin and `FUXI_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, so scripts
written for the comparable tool run) set to the project folder. What it answers:

- exit 0: stdout that is a JSON object is the hook output (`HookRunner` checks it, and a
  malformed one fails closed as for any callback); other stdout is context for the model
  on `UserPromptSubmit` and ignored on other events;
- exit 2: a block, stderr being the reason: a deny for `PreToolUse` and
  `PermissionRequest`, `decision: "block"` for events that can be blocked, a message
  to the user for `Notification` and `SubagentStart` (nothing to block there);
- any other exit, a timeout (default 60 s, the hook's `timeout`), a command that cannot
  start: an error. With `on_error="block"` (the default) the callback raises, and
  `HookRunner` fails closed where the event can be refused, as for every callback here
  (security.md row 37: a policy hook that breaks must not let the call through); with
  `on_error="continue"` it is a `systemMessage`, the comparable CLI's non-blocking error.

A timeout kills the whole process group (SIGTERM, then SIGKILL), and so does cancelling
the callback (SIGKILL at once): no child of a hook outlives it. What is left of the group
when the command exits (`sleep 100 &`) is killed as well. Output is capped (`MAX_STDOUT`,
`MAX_STDERR` bytes kept; the rest is read and dropped, so the command never blocks on
a full pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...hooks import HookMatcher
from ..common.process.group import group_alive, signal_group, spawn_group

__all__ = ["DEFAULT_TIMEOUT", "MAX_STDERR", "MAX_STDOUT", "CommandHook", "CommandResult",
           "CommandSpec", "HookCommandError", "command_matchers", "run_command"]

#: seconds a hook command may run when its entry gives no `timeout`
DEFAULT_TIMEOUT = 60.0
#: bytes of stdout kept (a JSON output may carry an `updatedInput` with a file's content)
MAX_STDOUT = 1 << 20
#: bytes of stderr kept (a reason for a block, an error message)
MAX_STDERR = 64 << 10
#: seconds between SIGTERM and SIGKILL after a timeout
KILL_GRACE = 1.0
#: seconds the pipes get to reach their end once the shell has exited
_READ_GRACE = 0.5
_POLL = 0.005
_CHUNK = 1 << 16
#: events where exit code 2 has nothing to block: stderr is shown to the user
_SHOW_ONLY = frozenset({"Notification", "SubagentStart"})


class HookCommandError(Exception):
    """A hook command failed (exit code other than 0 and 2, timeout, cannot start)."""


@dataclass(frozen=True)
class CommandSpec:
    """One hook command as a settings file declares it."""

    event: str
    matcher: str | None
    command: str
    timeout: float | None = None


@dataclass(frozen=True)
class CommandResult:
    """How a command ended: its exit code (None: killed after its timeout), its output
    (decoded, capped) and whether any of it was dropped."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False


class _Capped:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit, self.data, self.dropped = limit, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def run_command(command: str, *, stdin: bytes, cwd: Path, env: Mapping[str, str],
                      timeout: float) -> CommandResult:
    """Run `command` with `/bin/sh -c` in its own process group (see the module
    docstring). Raises OSError when it cannot start; cancellation kills the group."""
    proc = await spawn_group(
        "/bin/sh", "-c", command, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=cwd,
        env=dict(env))
    out, err = _Capped(MAX_STDOUT), _Capped(MAX_STDERR)
    assert proc.stdout is not None and proc.stderr is not None
    tasks = [asyncio.ensure_future(_feed(proc, stdin)),
             asyncio.ensure_future(_drain(proc.stdout, out)),
             asyncio.ensure_future(_drain(proc.stderr, err))]
    timed_out = False
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
            await _terminate(proc.pid)
        await _finish(proc, tasks)
    except BaseException:  # cancelled (or interrupted): the group goes at once
        signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await _finish(proc, tasks)
        raise
    return CommandResult(exit_code=None if timed_out else proc.returncode,
                         stdout=out.text(), stderr=err.text(), timed_out=timed_out,
                         truncated=bool(out.dropped or err.dropped))


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the hook input and close stdin (a command that never reads it is fine)."""
    assert proc.stdin is not None
    with contextlib.suppress(ConnectionError, BrokenPipeError, RuntimeError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(ConnectionError, BrokenPipeError, RuntimeError):
        proc.stdin.close()


async def _drain(stream: asyncio.StreamReader, sink: _Capped) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await stream.read(_CHUNK):
            sink.add(chunk)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the shell has exited. (Not `proc.wait()`: it also waits for the pipes,
    which a background child may hold open long after.)"""
    while proc.returncode is None:
        await asyncio.sleep(_POLL)


async def _until(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll `condition` for up to `seconds`; whether it came true."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


async def _terminate(pgid: int) -> None:
    """SIGTERM the group, SIGKILL what is left after `KILL_GRACE`."""
    signal_group(pgid, signal.SIGTERM)
    if not await _until(lambda: not group_alive(pgid), KILL_GRACE):
        signal_group(pgid, signal.SIGKILL)


async def _finish(proc: asyncio.subprocess.Process,
                  tasks: Sequence[asyncio.Future[None]]) -> None:
    """Reap the shell, kill what is left of its group, let the pipes end, close them."""
    await _until(lambda: proc.returncode is not None, KILL_GRACE * 2)
    if group_alive(proc.pid):  # children left behind (`sleep 100 &`)
        await _terminate(proc.pid)
    _, pending = await asyncio.wait(tasks, timeout=_READ_GRACE)
    for task in pending:  # a process outside the group (setsid) still holds a pipe
        task.cancel()
    if pending:
        await asyncio.wait(pending)
    transport = getattr(proc, "_transport", None)  # pipes closed now, not at garbage
    if transport is not None:                       # collection after the loop closed
        transport.close()




class CommandHook:
    """A `HookMatcher` callback that runs one hook command (see the module docstring)."""

    def __init__(self, command: str, *, root: Path, event: str,
                 timeout: float | None = None, env: Mapping[str, str] | None = None,
                 on_error: Literal["block", "continue"] = "block") -> None:
        self.command, self.root, self.event = command, Path(root), event
        self.timeout = float(timeout) if timeout is not None else DEFAULT_TIMEOUT
        self.env = dict(env or {})
        self.on_error = on_error

    def __repr__(self) -> str:
        text = self.command if len(self.command) <= 80 else self.command[:77] + "..."
        return f"command {text!r}"

    async def __call__(self, input_data: dict[str, Any], tool_use_id: str | None,
                       context: dict[str, Any]) -> dict[str, Any]:
        event = str(input_data.get("hook_event_name") or self.event)
        root = str(self.root)
        env = {**os.environ, **self.env, "FUXI_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}
        data = json.dumps(input_data, default=str, ensure_ascii=False).encode()
        try:
            result = await run_command(self.command, stdin=data, cwd=self.root, env=env,
                                       timeout=self.timeout)
        except OSError as error:
            return self._error(f"hook command {self!r} could not start: "
                               f"{error.strerror or error}")
        if result.timed_out:
            return self._error(f"hook command {self!r} timed out after {self.timeout:g} s "
                               "and was killed")
        if result.exit_code == 0:
            return _success(event, result)
        reason = result.stderr.strip()
        if result.exit_code == 2:
            return _block(event, reason or f"hook command {self!r} exited with code 2")
        detail = f": {reason[-2000:]}" if reason else ""
        return self._error(f"hook command {self!r} exited with code {result.exit_code}{detail}")

    def _error(self, message: str) -> dict[str, Any]:
        if self.on_error == "continue":
            return {"systemMessage": message}
        raise HookCommandError(message)


def _success(event: str, result: CommandResult) -> dict[str, Any]:
    text = result.stdout.strip()
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    if event == "UserPromptSubmit":
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return {}


def _block(event: str, reason: str) -> dict[str, Any]:
    if event == "PreToolUse":
        return {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}
    if event == "PermissionRequest":
        return {"hookSpecificOutput": {"hookEventName": event,
                                       "decision": {"behavior": "deny", "message": reason}}}
    if event in _SHOW_ONLY:
        return {"systemMessage": reason}
    return {"decision": "block", "reason": reason}


def command_matchers(specs: Iterable[CommandSpec], *, root: Path,
                     env: Mapping[str, str] | None = None,
                     on_error: Literal["block", "continue"] = "block"
                     ) -> dict[str, list[HookMatcher]]:
    """`{event: [HookMatcher]}` for `HookRunner`: one matcher per command, so each keeps
    its own timeout. The runner's own limit is a little longer than the command's, so the
    command's timeout (which kills its group and says so) fires first."""
    matchers: dict[str, list[HookMatcher]] = {}
    for spec in specs:
        hook = CommandHook(spec.command, root=root, event=spec.event, timeout=spec.timeout,
                           env=env, on_error=on_error)
        matchers.setdefault(spec.event, []).append(
            HookMatcher(spec.matcher, [hook], timeout=hook.timeout + 3 * KILL_GRACE + 1))
    return matchers
