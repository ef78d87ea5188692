"""A command the package starts is stopped whole, also when its caller is cancelled while
it starts (`common/process/group.py`, the one way Bash, hook commands, apiKeyHelper and MCP
servers start). Found as a CI failure under load: an `apiKeyHelper` whose caller was
cancelled just as its shell had started left `sleep 60 &` running, reparented to init
(asyncio killed the shell alone). The gate below holds the start open, so the cancel lands
exactly there, every time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fuxi_notebook._internal.common.process import group
from fuxi_notebook._internal.models.access.key_helper import KeyHelper

from .settings.helpers import alive, read_pid, wait_for

CHILD = "sleep 60 & echo $! > child; echo $$ > pid; wait"


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """`create_subprocess_exec` starts the process, then waits for the gate to return it."""
    gate = asyncio.Event()
    real = asyncio.create_subprocess_exec

    async def slow_start(*args, **kwargs):
        proc = await real(*args, **kwargs)
        await gate.wait()
        return proc

    monkeypatch.setattr(group.asyncio, "create_subprocess_exec", slow_start)
    return gate


async def _cancelled_while_starting(tmp_path: Path, start, gate: asyncio.Event) -> None:
    caller = asyncio.ensure_future(start())
    await wait_for(lambda: read_pid(tmp_path / "child") is not None)  # it runs already
    shell, child = read_pid(tmp_path / "pid"), read_pid(tmp_path / "child")
    assert shell is not None and child is not None and alive(child)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    gate.set()  # the start completes after its caller went away
    await wait_for(lambda: not alive(shell) and not alive(child))


async def test_a_group_whose_caller_is_cancelled_while_it_starts_is_killed(tmp_path, gated):
    await _cancelled_while_starting(
        tmp_path, lambda: group.spawn_group("/bin/sh", "-c", CHILD, cwd=tmp_path), gated)


async def test_an_api_key_helper_cancelled_while_it_starts_leaves_nothing_running(
        tmp_path, gated):
    helper = KeyHelper(CHILD, cwd=tmp_path)
    await _cancelled_while_starting(tmp_path, helper.key, gated)


async def test_a_process_that_cannot_start_raises_as_asyncio_does(tmp_path):
    with pytest.raises(FileNotFoundError):
        await group.spawn_group(str(tmp_path / "no-such-program"))
