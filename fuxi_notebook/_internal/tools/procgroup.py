"""Terminate a whole process group, so a killed shell command leaves no orphans behind.

Killing only `bash` would leave its children (`sleep 1000 &`, a dev server, a pipeline
stage) running, reparented to init, still holding files and ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

__all__ = ["group_alive", "terminate_group"]

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


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def terminate_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group led by `proc`, SIGKILL it after a grace, reap `proc`.

    `proc` must have been started with `start_new_session=True`, so its pid is the pgid.
    """
    pgid = proc.pid
    _signal_group(pgid, signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + GRACE_SECONDS
    while group_alive(pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL_SECONDS)
    if group_alive(pgid):
        _signal_group(pgid, signal.SIGKILL)
    await proc.wait()
    deadline = asyncio.get_running_loop().time() + GRACE_SECONDS
    while group_alive(pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_POLL_SECONDS)
