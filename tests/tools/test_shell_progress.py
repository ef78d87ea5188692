"""The Bash tool reports its output while the command runs (real bash subprocesses)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.tools.base import ToolContext, ToolOutput
from fuxi_notebook._internal.tools.progress import PROGRESS_CHARS, calling
from fuxi_notebook._internal.tools.shell import BashTool

WAIT = 30.0  # bound of every wait for evidence; never reached when things work


class Listener:
    """Collects progress reports; `saw(word)` waits until a report contains `word`."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, str, float]] = []
        self._changed = asyncio.Event()

    def __call__(self, tool_use_id: str, output: str, elapsed: float) -> None:
        self.reports.append((tool_use_id, output, elapsed))
        self._changed.set()

    @property
    def last(self) -> str:
        return self.reports[-1][1] if self.reports else ""

    async def saw(self, word: str) -> None:
        async with asyncio.timeout(WAIT):
            while word not in self.last:
                self._changed.clear()
                await self._changed.wait()


async def _bash(ctx: ToolContext, command: str, kept: list[str], listener: Listener) -> ToolOutput:
    with calling("toolu_bash", kept.append, listener):
        return await BashTool().run({"command": command}, ctx)


async def test_output_is_reported_before_the_command_ends(ctx: ToolContext, tmp_path: Path):
    go = tmp_path / "go"
    command = f"echo first-line; while [ ! -e {go} ]; do sleep 0.01; done; echo second-line"
    kept: list[str] = []
    listener = Listener()
    task = asyncio.create_task(_bash(ctx, command, kept, listener))
    try:
        await listener.saw("first-line")
        assert not task.done()  # the command is still waiting for `go`
        assert "second-line" not in listener.last
    finally:
        go.touch()
    out = await task
    assert out.content == "first-line\nsecond-line" and not out.is_error
    assert listener.last.rstrip("\n") == out.content  # the final report holds everything
    assert kept == [report for _, report, _ in listener.reports]  # the run's copy, too
    assert {tool_use_id for tool_use_id, _, _ in listener.reports} == {"toolu_bash"}
    elapsed = [seconds for _, _, seconds in listener.reports]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0


async def test_big_output_is_reported_capped(ctx: ToolContext):
    kept: list[str] = []
    listener = Listener()
    out = await _bash(ctx, "yes | head -c 3000000; echo; echo the-end", kept, listener)
    assert not out.is_error
    assert all(len(report) < PROGRESS_CHARS + 200 for _, report, _ in listener.reports)
    assert listener.last.startswith("y\ny\n") and listener.last.rstrip().endswith("the-end")
    assert "bytes of output truncated" in listener.last


async def test_no_report_without_output(ctx: ToolContext):
    kept: list[str] = []
    listener = Listener()
    out = await _bash(ctx, "true", kept, listener)
    assert out.content == "(no output)" and listener.reports == [] and kept == []


async def test_an_interrupted_call_answers_with_the_output_last_reported(tmp_path: Path):
    go = tmp_path / "never"
    model = ScriptedModel([[tool_use("Bash", {"command": (
        f"echo partial-1; echo partial-2 >&2; while [ ! -e {go} ]; do sleep 0.01; done")})],
        [text("unused")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash"])
    listener = Listener()
    run = Run(build_session(options), on_progress=listener)

    async def play() -> None:
        async for _ in run_prompt(run, "run it"):
            pass

    task = asyncio.create_task(play())
    try:
        await listener.saw("partial-2")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    _, output = run.calls_started["toolu_01"]
    assert output == listener.last and "partial-1\n" in output
    [result] = run.session.pending_results  # what the model is told with the next prompt
    assert result["is_error"] and result["content"].endswith(f"Output so far:\n{output}")
