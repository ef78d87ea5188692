"""Start a command in a process group of its own, and stop the whole group, so a stopped
command leaves no orphans behind: the one way the package starts a shell, a hook, an
`apiKeyHelper` or an MCP server.

Killing only `bash` would leave its children (`sleep 1000 &`, a dev server, a pipeline
stage) running, reparented to init, still holding files and ports. That holds while the
process starts too: a caller cancelled during `create_subprocess_exec` (the process may
exist already) would have asyncio kill the leader alone; `spawn_group` kills the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

__all__ = ["group_alive", "kill_group", "signal_group", "spawn_group", "terminate_group"]

GRACE_SECONDS = 1.0
"""Time the group gets to exit after SIGTERM before SIGKILL."""
_POLL_SECONDS = 0.02


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    return any(_live_member(entry, pgid) for entry in proc.iterdir() if entry.name.isdigit())


def _live_member(entry: Path, pgid: int) -> bool:
    """Parse /proc/PID/stat: state is field 3, pgrp field 5 (after the `(comm)` field)."""
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")


def signal_group(pgid: int, signum: int) -> None:
    """Send `signum` to the whole group (gone already, or not ours: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def terminate_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group led by `proc`, SIGKILL it after a grace, reap `proc`.

    `proc` must have been started with `start_new_session=True`, so its pid is the pgid.
    """
    pgid = proc.pid
    signal_group(pgid, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + GRACE_SECONDS
    while group_alive(pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL_SECONDS)
    if group_alive(pgid):
        signal_group(pgid, signal.SIGKILL)
    await proc.wait()
    deadline = asyncio.get_running_loop().time() + GRACE_SECONDS
    while group_alive(pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL_SECONDS)


def kill_group(pgid: int) -> None:
    """SIGKILL the whole group now (gone already: nothing to do)."""
    signal_group(pgid, signal.SIGKILL)


async def spawn_group(program: str, *args: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a new session (the process leads its group, its
    pid is the group's id). A caller cancelled while the process starts never leaves it
    running: once it exists its group is killed and its pipes closed. OSError as asyncio
    raises it."""
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        program, *args, start_new_session=True, **options))
    try:
        return await asyncio.shield(spawn)  # a process started is a process stopped
    except asyncio.CancelledError:
        spawn.add_done_callback(_stop_started)
        raise


def _stop_started(spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """The process whose caller went away while it started: its group killed."""
    if spawn.cancelled() or spawn.exception() is not None:
        return
    proc = spawn.result()
    kill_group(proc.pid)
    transport = getattr(proc, "_transport", None)
    if transport is not None:  # its pipes closed now, and the process reaped
        transport.close()
