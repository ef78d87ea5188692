"""A `%%fuxi` cell run against the model: stream, render, approve, finish (also when
interrupted), and the record it leaves.

Interrupt cancels the run within a second, answers every open tool call, shows the
partial run and re-raises (as a one-line `CellStopped`), so queued cells are aborted.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from ....options import (
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from ....types import ResultMessage
from ...agent.loop.compacting import added_messages
from ...agent.loop.loop import run_prompt
from ...agent.loop.run import Run
from ...agent.session import Session
from ...common.reminders import reminder
from ...common.rule_lists import joined_rules
from ...sessions.text.transcript import CONTEXT_TITLE
from ..display.render import Renderer
from .cellrun import CellStopped, FinalOutputs, FuxiRun, secrets, ticking
from .published import PublishedOutputs

__all__ = ["ALLOW_HINT", "Approvals", "LiveCell"]


class Approvals:
    """The `can_use_tool` of an interactive cell: ask the renderer, log the decision."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.records: list[dict[str, Any]] = []
        #: the declared kind of a tool (the cell's session sets it): a question's answers
        #: are recorded with its decision
        self.kind_of: Callable[[str], str | None] = lambda name: (
            "ask" if name == "AskUserQuestion" else None)

    async def decide(self, tool_name: str, tool_input: dict[str, Any],
                     context: ToolPermissionContext) -> PermissionResult:
        verdict, reason, updated = await self.renderer.ask(tool_name, tool_input, context)
        # "Always allow" adds what the tool declares (the engine's suggestion), nothing else
        updates = list(context.suggestions) if verdict == "always" else []
        rule = joined_rules([str(r) for u in updates for r in u.rules or []])
        answers = (updated or {}).get("answers") if self.kind_of(tool_name) == "ask" else None
        self.records.append({"tool_use_id": context.tool_use_id or "", "tool_name": tool_name,
                             "decision": {"always": "always_allow"}.get(verdict, verdict),
                             "source": "user", "reason": reason,
                             "rule": rule, "answers": answers})
        if verdict == "deny":
            why = f" Their reason: {reason}" if reason else ""
            return PermissionResultDeny(message=f"The user denied this {tool_name} call.{why}")
        return PermissionResultAllow(updated_input=updated, updated_permissions=updates or None)


class LiveCell:
    """One cell's live run: stream, render, finish (also when interrupted)."""

    def __init__(self, session: Session, renderer: Renderer, approvals: Approvals | None, *,
                 cell_id: str, parent: str | None, options: dict[str, Any],
                 context: str | None, notes: list[str], shell: Any,
                 replaces: str | None = None,
                 cells_named: dict[str, dict[str, Any]] | None = None) -> None:
        self.session, self.renderer, self.approvals = session, renderer, approvals
        #: the digest of the record the cell's metadata holds (see sessions/cell_record.py)
        self.replaces = replaces
        #: the cells the cell tools' calls named (`LiveCells.named`, the record's `cells`)
        self.cells_named = cells_named if cells_named is not None else {}
        #: the run as it ended (also when interrupted: `_fuxi` is this cell's partial run)
        self.last_run: FuxiRun | None = None
        self.cell_id, self.parent, self.options = cell_id, parent, options
        self.context, self.notes, self.shell = context, notes, shell
        self.run = Run(session)
        self.result: ResultMessage | None = None
        if approvals is not None:
            approvals.kind_of = session.kind
        self.published = PublishedOutputs(shell, hold=renderer.holds_outputs,
                                          on_output=renderer.output_coming)
        self.run.on_progress = renderer.progress
        renderer.cwd = session.cwd  # cards resolve paths as the tools do (`--cwd`)
        self.final: FinalOutputs | None = None
        self.record: Any = None
        renderer.view.live_status = self._status
        renderer.view.run_cost = lambda: self.session.usage.cost_since(self.run.usage_at_start)

    def _status(self) -> str:
        """The live status line: turns, tokens and cost so far (they move as it streams)."""
        from ..display.spend import spend_words

        tokens = self.session.usage.since(self.run.usage_at_start)
        cost = self.session.usage.cost_since(self.run.usage_at_start)
        turns = self.run.num_turns
        return (f"running · {turns} turn{'' if turns == 1 else 's'} so far · "
                f"{spend_words(tokens, cost)}")

    def _content(self, body: str) -> list[dict[str, Any]]:
        blocks = [reminder(f"{CONTEXT_TITLE}\n{self.context}")] if self.context else []
        return [*blocks, {"type": "text", "text": body}]

    async def play(self, body: str) -> FuxiRun:
        history = self.session.history
        start, last_before = len(history), history[-1] if history else None
        if self.context:  # folded, exactly what goes with the prompt
            self.renderer.view.items.append(["context", self.context])
        self.renderer.start(body, self.notes)
        try:
            with self.published:
                async with ticking():
                    async for message in run_prompt(self.run, self._content(body)):
                        self.renderer.on_message(message)
                        if isinstance(message, ResultMessage):
                            self.result = message
        except asyncio.CancelledError:
            self.result = self.run.result("error_during_execution", terminal_reason="aborted",
                                          errors=["Interrupted by the user."])
            self.renderer.on_message(self.result)
            self._finish(body, self._first_own_message(start, last_before))
            # one plain line (not a traceback through the HTTP stack); like any error it
            # makes the frontend abort the queued cells
            raise CellStopped("interrupted by the user; the partial run is shown above and "
                              "recorded") from None
        finally:
            self.renderer.close()  # its ticker and threads end with the run, however it ends
        assert self.result is not None
        return self._finish(body, self._first_own_message(start, last_before))

    def _first_own_message(self, start: int, last_before: Any) -> int:
        """Where this cell's messages begin (the prompt may have joined an unanswered one).
        The history as the run found it is the one before its first compaction."""
        marks = self.run.compactions
        history = marks[0].before if marks else self.session.history
        if start and len(history) >= start and history[start - 1] is not last_before:
            return start - 1
        return start

    def _finish(self, body: str, start: int) -> FuxiRun:
        from .outputs import final_outputs

        assert self.result is not None
        added, compactions = added_messages(self.run, self.session.history, start)
        segments, record = final_outputs(
            cell_id=self.cell_id, session=self.session, parent=self.parent, prompt=body,
            options=self.options, compactions=compactions,
            messages=added + self.session.pending_messages(),
            approvals=self._approvals(), result=self.result, secrets=secrets(),
            shown_images=self.published.image_digests(),
            shown_outputs=self.published.counts(), cells=self.cells_named,
            cell_cost_usd=self.session.usage.cost_since(self.run.usage_at_start))
        segments = _replacing(segments, self.replaces)
        self.final = FinalOutputs(segments, self.notes, self.published,
                                  f"fuxi-record-{uuid.uuid4().hex}").with_notes()
        self.record = record
        self.renderer.finish(self.final)
        self.last_run = FuxiRun(result=self.result, record=record, cell_id=self.cell_id)
        return self.last_run

    def _approvals(self) -> list[dict[str, Any]]:
        records = list(self.approvals.records) if self.approvals else []
        decided = {r["tool_use_id"] for r in records}
        for denial in self.result.permission_denials or [] if self.result else []:
            if denial["tool_use_id"] not in decided:
                records.append({"tool_use_id": denial["tool_use_id"],
                                "tool_name": denial["tool_name"], "decision": "deny",
                                "source": "policy"})
        return records


def _replacing(segments: list[Any], replaces: str | None) -> list[Any]:
    """The record output says which metadata record it replaces, when it differs from it:
    a frontend that cannot write metadata (VS Code, `jupyter execute`) saves the new
    output next to the old metadata, and the reader takes the output (cell_record.py)."""
    from ...sessions.cell_record import record_digest
    from ...sessions.record import RECORD_MIME

    data, metadata, of = segments[-1]
    if replaces is None or record_digest(data.get(RECORD_MIME)) == replaces:
        return segments
    fuxi = {**(metadata.get("fuxi") or {}), "replaces": replaces}
    return [*segments[:-1], (data, {**metadata, "fuxi": fuxi}, of)]


#: How the model should tell the user to allow a tool, in the magic's own terms. The same
#: in every frontend: a replay must give the model the words the recording gave it.
ALLOW_HINT = ('allow it with %%fuxi --allowed-tools "{tool}" (or a narrower rule such as '
              '"Bash(git status)"), or run the cell where someone can approve it')
