"""The Bash tool (real bash subprocesses) and the output-capping helpers it relies on."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path

import pytest

from fuxi_notebook._internal.tools import shell
from fuxi_notebook._internal.tools.base import ToolContext, ToolOutput
from fuxi_notebook._internal.tools.shell import BashTool
from fuxi_notebook._internal.tools.truncate import (
    HeadTailBuffer,
    cap_head_tail,
    cap_line,
    strip_ansi,
)


async def bash(ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    return await BashTool().run({"command": command, **extra}, ctx)


def live_members(pgid: int) -> list[int]:
    """Pids of running (non-zombie) processes in the group, read from /proc."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, group = text[text.rfind(")") + 2 :].split()[:3]
        if int(group) == pgid and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


# --- truncate helpers -------------------------------------------------------------------


def test_cap_head_tail_keeps_both_ends_and_counts_the_rest():
    assert cap_head_tail("short", 10) == "short"
    text = "HEAD" + "m" * 1000 + "TAIL"
    capped = cap_head_tail(text, 100)
    assert capped.startswith("HEAD")
    assert capped.endswith("TAIL")
    assert "... [908 characters truncated] ..." in capped


def test_cap_line():
    assert cap_line("abc", 5) == "abc"
    assert cap_line("abcdefgh", 3) == "abc... [line truncated, 5 more characters]"


def test_strip_ansi():
    assert strip_ansi("\x1b[1;31mred\x1b[0m \x1b]0;title\x07plain") == "red plain"


def test_head_tail_buffer_is_bounded():
    buffer = HeadTailBuffer(100, 100)
    buffer.feed(b"START")
    for _ in range(1000):
        buffer.feed(b"." * 1000)
    buffer.feed(b"END")
    assert len(buffer._head) == 100 and len(buffer._tail) == 100
    assert buffer.total == 1_000_008
    text = buffer.text(1000)
    assert text.startswith("START")
    assert text.endswith("END")
    assert "bytes of output truncated" in text


# --- Bash: output and exit codes --------------------------------------------------------


async def test_reports_stdout_and_stderr(ctx):
    out = await bash(ctx, "echo to-out; echo to-err >&2")
    assert out.content == "to-out\nto-err"
    assert not out.is_error


async def test_nonzero_exit_is_error_with_code(ctx):
    out = await bash(ctx, "echo partial; exit 7")
    assert out.is_error
    assert out.content == "partial\nExit code 7"


async def test_no_output(ctx):
    out = await bash(ctx, "true")
    assert out.content == "(no output)"
    assert not out.is_error


async def test_ansi_codes_are_stripped(ctx):
    out = await bash(ctx, r"printf '\033[31mred\033[0m\n'")
    assert out.content == "red"


async def test_env_and_stdin(ctx):
    ctx.env["FUXI_TOOL_TEST"] = "from-ctx"
    out = await bash(ctx, "echo $FUXI_TOOL_TEST; cat; echo after-cat", timeout=5000)
    assert out.content == "from-ctx\nafter-cat"


async def test_output_cap_keeps_head_and_tail(ctx):
    out = await bash(ctx, "seq 1 200000")
    assert isinstance(out.content, str)
    assert out.content.startswith("1\n2\n3\n")
    assert out.content.endswith("199999\n200000")
    assert re.search(r"\.\.\. \[\d+ bytes of output truncated\] \.\.\.", out.content)
    assert len(out.content) < 30_200


async def test_huge_output_is_capped(ctx):
    out = await bash(ctx, "yes abcdefgh | head -c 30000000; echo; echo THE-END")
    assert out.content.startswith("abcdefgh\n")
    assert out.content.endswith("THE-END")
    assert len(out.content) < 30_200


async def test_background_child_holding_output_does_not_block(ctx):
    out = await bash(ctx, "sleep 30 & echo $!")
    pid = int(out.content.strip())
    try:
        assert not out.is_error
    finally:
        os.kill(pid, signal.SIGKILL)


# --- Bash: working directory ------------------------------------------------------------


async def test_cd_persists_between_calls(ctx, tmp_path):
    (tmp_path / "sub").mkdir()
    await bash(ctx, "cd sub")
    assert ctx.shell_cwd == (tmp_path / "sub").resolve()
    out = await bash(ctx, "pwd -P; touch made-here")
    assert out.content == str((tmp_path / "sub").resolve())
    assert (tmp_path / "sub" / "made-here").exists()


async def test_cd_is_kept_after_exit_and_status_preserved(ctx, tmp_path):
    (tmp_path / "sub").mkdir()
    out = await bash(ctx, "cd sub && exit 3")
    assert out.is_error and out.content == "Exit code 3"
    assert ctx.shell_cwd == (tmp_path / "sub").resolve()


async def test_deleted_shell_cwd_falls_back_to_cwd(ctx, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    ctx.shell_cwd = gone
    gone.rmdir()
    out = await bash(ctx, "pwd -P")
    assert out.content.endswith(str(tmp_path.resolve()))
    assert "no longer exists" in out.content
    assert ctx.shell_cwd == tmp_path.resolve()


# --- Bash: timeout and cancellation -----------------------------------------------------


@needs_proc
async def test_timeout_kills_the_whole_process_group(ctx, tmp_path):
    sentinel = tmp_path / "sentinel"
    command = f"echo pgid $$; (sleep 0.6; touch {sentinel}) & sleep 1000 & sleep 1000"
    out = await bash(ctx, command, timeout=300)
    assert out.is_error
    assert out.content.endswith("Command timed out after 300 ms")
    pgid = int(re.search(r"pgid (\d+)", out.content).group(1))
    assert live_members(pgid) == []
    await asyncio.sleep(0.8)
    assert not sentinel.exists()


@needs_proc
async def test_cancel_kills_the_process_group_and_propagates(ctx, tmp_path):
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(bash(ctx, f"sleep 1000 & echo $$ > {pidfile}; sleep 1000"))
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pgid = int(pidfile.read_text())
    assert live_members(pgid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_members(pgid) == []


async def test_timeout_is_clamped_to_maximum(ctx, monkeypatch):
    seen: list[float] = []

    async def fake_execute(script, cwd, env, timeout):
        seen.append(timeout)
        return shell._Outcome(0, "ok", False)

    monkeypatch.setattr(shell, "_execute", fake_execute)
    await bash(ctx, "true", timeout=10_000_000)
    await bash(ctx, "true")
    await bash(ctx, "true", timeout=1500)
    assert seen == [600.0, 120.0, 1.5]
