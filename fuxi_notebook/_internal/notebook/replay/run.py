"""A `%%fuxi` cell replayed from its record: recorded model turns, tools run for real.

The recorded final outputs are known (the record is the run): each transcript segment is
shown just before the first output of the call it ends with, as the tools re-execute and
show what they show, and the rest at the end. That gives the outputs of the recorded run
in the same order, with no display updates (nbval compares exactly this). Each tool result
is compared with the recorded one: a lenient replay notes divergences in the cell and goes
on; a strict one stops at the first and fails the cell with its diff.

Every replay notes its mode in the record output's metadata (`replayed`). One someone
watches ends with `Replayed · 0 requests · recorded: …` (and notes `end_line`); a headless
one keeps the saved `end_line`, so its outputs are the saved ones, whatever ran before
(outputs.py explains why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from IPython.core.error import UsageError
from IPython.display import clear_output as _clear_output
from IPython.display import display as _display

from ....types import ResultMessage
from ...agent.loop.loop import run_prompt
from ...agent.loop.run import Run
from ...agent.session import Session
from ...common.reminders import reminder
from ...context.compaction import Compaction
from ...sessions.record import SessionRecord
from ...sessions.replay import (
    Divergence,
    RecordedApprovals,
    recorded_calls,
    recorded_results,
)
from ...sessions.text.transcript import CONTEXT_TITLE
from ...tools.base import ToolError, ToolOutput, declaration_of
from ..cell.cellrun import CellStopped, FinalOutputs, FuxiRun, ticking
from ..cell.outputs import record_outputs
from ..cell.published import PublishedOutputs
from ..display.render import Renderer, show_final
from .decide import DivergenceWatch

# IPython's display functions carry no annotations: typed views of them
clear_output = cast("Callable[..., None]", _clear_output)
display = cast("Callable[..., object]", _display)

__all__ = ["RecordedResults", "ReplayCell", "answer_from_record", "recorded_compactions",
           "recorded_mcp_tools"]


class RecordedResults:
    """A stand-in for a tool that is not run again on replay: it answers each call with
    the recorded result of that tool's calls, in order."""

    def __init__(self, tool: Any, record: SessionRecord) -> None:
        self.name, self.description = tool.name, tool.description
        # any recorded input is answered, as it was (the tool that answered it live may
        # take more than this kernel's: the live InsertCell's `after_cell_id`); a call
        # refused live for its input has its refusal among the answers, in its place
        self.input_schema: dict[str, Any] = {"type": "object"}
        declared = declaration_of(tool, tool.name)  # declares what `tool` declares
        self.kind, self.reach, self.always_allow = (declared.kind, declared.reach,
                                                    declared.always_allow)
        self.on_replay = "recorded"
        calls = recorded_calls(record)
        results = recorded_results(record)
        names = {tool.name, *getattr(tool, "aliases", ())}  # Agent answers Task calls too
        self.aliases = tuple(getattr(tool, "aliases", ()))
        self._answers = [results[i] for i, call in calls.items()
                         if call.get("name") in names and i in results]

    async def run(self, input: dict[str, Any], ctx: Any) -> ToolOutput:
        if not self._answers:
            raise ToolError(f"{self.name} is not run again on replay, and the record holds "
                            "no further result for it")
        answer = self._answers.pop(0)
        return ToolOutput(content=answer.get("content") or "",
                          is_error=bool(answer.get("is_error")))


def answer_from_record(session: Session, record: SessionRecord) -> None:
    """The session's tools that declare `on_replay = "recorded"` (they need a model, an
    MCP server or the notebook document: InsertCell's cell is in the notebook already)
    answer from the record; the permission engine keeps their declarations."""
    for name in session.registry.names():
        declared = session.permissions.declared.get(name)
        tool = session.registry.get(name)
        if declared is not None and declared.on_replay == "recorded" and not isinstance(
                tool, RecordedResults):
            session.registry.replace(name, RecordedResults(tool, record))


def recorded_compactions(record: SessionRecord) -> dict[int, list[Compaction]]:
    """The record's compactions by the turn they happened at: a replay compacts there,
    with the recorded summary (the model is not asked to summarise again)."""
    found: dict[int, list[Compaction]] = {}
    for done in record.compactions:
        found.setdefault(done.turn, []).append(Compaction(
            summary=done.summary, kept=done.kept, trigger=done.trigger,
            pre_tokens=done.pre_tokens, post_tokens=done.post_tokens, turn=done.turn))
    return found


def recorded_mcp_tools(record: SessionRecord) -> list[RecordedResults]:
    """The MCP tools the record called, answered from the record: a replay starts no MCP
    server (a CI replay has neither the servers nor their network), so their results are
    the recorded ones."""
    calls = recorded_calls(record)
    names = sorted({str(call.get("name")) for call in calls.values()
                    if str(call.get("name", "")).startswith("mcp__")})
    return [RecordedResults(_RecordedTool(name), record) for name in names]


class _RecordedTool:
    """What a replay knows of an MCP tool: its name (calls are judged as live, as an
    `execute` tool: the recorded approvals and the cell's rules decide them again)."""

    kind = "execute"
    on_replay = "recorded"

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = f"{name} (answered from the record on replay)"
        self.input_schema: dict[str, Any] = {"type": "object"}


class ReplayCell:
    """One cell's replay (see the module docstring)."""

    def __init__(self, session: Session, renderer: Renderer, record: SessionRecord, *,
                 mode: str, approvals: RecordedApprovals, watch: DivergenceWatch,
                 notes: list[str], volatile: dict[str, Any], context: str | None,
                 shell: Any) -> None:
        self.session, self.renderer, self.record = session, renderer, record
        self.mode, self.approvals, self.watch = mode, approvals, watch
        self.notes, self.context, self.shell = notes, context, shell
        self.published = PublishedOutputs(shell, on_output=self._show_through)
        renderer.kind_of = session.kind  # a card asked during the replay names its kind
        # watched, the end line says it was replayed; headless, it stays as it was saved
        marks = {"end_line": "replayed"} if renderer.interactive else {}
        if renderer.interactive:  # the replay made the changes again: none is undone now
            volatile = {key: value for key, value in volatile.items() if key != "undone"}
        segments = record_outputs(record, {**volatile, "replayed": mode, **marks})
        self.final = FinalOutputs(segments, notes, self.published).with_notes()
        self.shown = 0  # segments of the final outputs shown so far
        #: the cell shows its record until the replay ends: the end redraws the outputs
        self.redraw = False
        self.result: ResultMessage | None = None

    def _show_through(self, call: str | None) -> None:
        """Show the segments up to the one ending with `call`'s card, so its outputs
        follow it (an output of no recorded call goes where it comes)."""
        ends = [of for _, _, of in self.final.segments]
        if call is None or call not in ends[self.shown:]:
            return
        self._show_until(ends.index(call, self.shown) + 1)

    def _show_until(self, end: int) -> None:
        segments, self.shown = self.final.segments[self.shown:end], max(self.shown, end)
        for data, metadata, _ in segments:
            self.published.show(data, metadata)  # the cell's own output, not a tool's

    def _redraw(self) -> None:
        clear_output(wait=True)  # cleared as the first final output arrives
        show_final(self.final, republish=True)
        self.shown = len(self.final.segments)

    async def play(self, body: str) -> FuxiRun:
        try:
            return await self._play(body)
        finally:  # also when stopped or diverged: the recorded run is shown whole
            if self.redraw and self.shown < len(self.final.segments):
                self._redraw()
            self._show_until(len(self.final.segments))

    async def _play(self, body: str) -> FuxiRun:
        run = Run(self.session)
        run.replay_compactions = recorded_compactions(self.record)
        content = [*([reminder(f"{CONTEXT_TITLE}\n{self.context}")] if self.context else []),
                   {"type": "text", "text": body}]
        diverged: Divergence | None = None
        try:
            with self.published:
                async with ticking():
                    diverged = await self._consume(run, content)
        except asyncio.CancelledError:
            raise CellStopped("the replay was interrupted by the user; the recorded run "
                              "is shown above") from None
        if self.renderer.interactive and (self.approvals.asked_live or self.redraw):
            # approval cards asked during the replay, or the record the cell showed while
            # it ran (controller._keep_record_shown): the final outputs replace them
            self._redraw()
        else:
            self._show_until(len(self.final.segments))
        if diverged is not None:
            report = f"fuxi: strict replay stopped here.\n\n{self.watch.warning()}"
            display({"text/markdown": report, "text/plain": report}, raw=True)
            raise UsageError(f"%%fuxi: replay diverged from the record of cell "
                             f"{self.record.cell_id}: {diverged.tool_name} "
                             f"{diverged.summary} gave a different result (diff above)")
        if self.watch.found:
            display({"text/markdown": self.watch.warning(),
                     "text/plain": self.watch.warning()}, raw=True)
        if self.result is None:
            self.result = run.result("error_during_execution", errors=["replay ended early"])
        return FuxiRun(result=self.result, record=self.record, cell_id=self.record.cell_id,
                       replayed=self.mode, divergences=list(self.watch.found))

    async def _consume(self, run: Run, content: list[dict[str, Any]]) -> Divergence | None:
        """Run the loop on the recorded turns; a strict replay stops at a divergence."""
        messages = run_prompt(run, content)
        try:
            async for message in messages:
                if isinstance(message, ResultMessage):
                    self.result = message
                divergence = self.watch.check(message)
                if divergence is not None and self.mode == "strict":
                    return divergence
        finally:
            await messages.aclose()
        return None
