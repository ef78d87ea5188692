"""Run: the bookkeeping of one prompt's run (turns, timing, denials) and its result."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ....types import ResultMessage, new_uuid
from ...context.compaction import Compaction
from ...models.usage import UsageTotals
from ...tools.progress import ProgressListener
from ..session import Session

__all__ = ["CompactionMark", "Run", "canonical_input"]

_ERROR_TEXT = {
    "error_max_turns": "Reached maximum number of turns ({max_turns})",
    "error_max_budget_usd": "Reached maximum budget (${budget})",
    "error_max_structured_output_retries": "The answer did not match the required schema "
                                           "after {retries} attempts",
}


@dataclass(frozen=True)
class CompactionMark:
    """A compaction during a run and the history just before it (so a notebook cell can
    record the messages it added on both sides of the boundary)."""

    before: list[dict[str, Any]]
    compaction: Compaction


@dataclass
class Run:
    """Counters for one run of the loop.

    Attributes:
        num_turns: model responses received in this run.
        tool_turns: responses whose tool calls were executed (what `max_turns` counts).
        interrupted: a denial with `interrupt=True` ended the run.
        stopped: why a hook (`continue: false`), a security check or a denied call the
            model kept requesting stopped the run.
        stopped_by: the result's terminal reason when `stopped` is set.
        stop_hook_active: a Stop hook already made the agent continue once.
        history_start: where this run's messages begin in the history.
        repairs: the repair steps already tried on rejected content (see repair.py).
        denied_calls: for each denied call (tool name, canonical input), the tool turns
            (responses) that requested it: how often the model asked again after a denial.
    """

    session: Session
    started: float = field(default_factory=time.monotonic)
    api_ms: int = 0
    num_turns: int = 0
    tool_turns: int = 0
    stop_reason: str | None = None
    interrupted: bool = False
    stopped: str | None = None
    stopped_by: str = "hook_stopped"
    stop_hook_active: bool = False
    stop_continuations: int = 0
    denials: list[dict[str, Any]] = field(default_factory=list)
    #: calls a PreToolUse hook deferred ({id, name, input}); one alone ends the run
    deferred: list[dict[str, Any]] = field(default_factory=list)
    usage_at_start: UsageTotals = field(init=False)
    history_start: int = field(init=False)
    repairs: int = 0
    #: tool_use id -> (monotonic start, output so far) of calls that began executing
    calls_started: dict[str, tuple[float, str]] = field(default_factory=dict)
    denied_calls: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    #: told of each running call's output so far (a frontend's progress display)
    on_progress: ProgressListener | None = None
    #: answers that did not match the output schema (or responses without one)
    structured_failures: int = 0
    #: the compactions of this run, in order
    compactions: list[CompactionMark] = field(default_factory=list)
    #: on replay: the recorded compactions by the turn they happened at (the model is
    #: not asked for a summary, and nothing else is compacted); None when live
    replay_compactions: dict[int, list[Compaction]] | None = None
    #: why the last attempt to compact did not (nothing to compact, a hook, an error)
    compact_note: str | None = None
    #: the API rejected the prompt as too long and the run compacted for it (once per
    #: request: an accepted response resets it)
    compacted_for_rejection: bool = False
    #: the `origin` the prompt's streaming-input message carried, echoed on the result
    origin: dict[str, Any] | None = None
    #: the blocks the prompt added to the history (taken back if it is never answered)
    prompt: list[dict[str, Any]] = field(default_factory=list)
    #: send this run's prompt as typed (a streaming-input message stamped
    #: `client_composed: true`), as `verbatim_prompts` does for every prompt
    verbatim: bool = False

    def __post_init__(self) -> None:
        self.usage_at_start = self.session.usage.snapshot()
        self.history_start = len(self.session.history)

    def log(self, line: str) -> None:
        """One debug line (what the loop does: a line per request, response and tool
        call), as the comparable SDK's CLI writes its debug log: only when asked, with
        `extra_args={"debug": None}` (to the `stderr` callback) or `{"debug-file": PATH}`
        (appended to that file). A clean run sends `stderr` nothing. A callback that
        raises, or a file that cannot be written, is not the run's problem."""
        flags = self.session.options.extra_args
        if not flags or ("debug" not in flags and "debug-file" not in flags):
            return
        text = f"[fuxi {self.session.id[:8]}] {line}"
        callback = self.session.options.stderr
        if "debug" in flags and callback is not None:
            with contextlib.suppress(Exception):
                callback(text)
        target = flags.get("debug-file")
        if target:
            with contextlib.suppress(OSError), open(target, "a", encoding="utf-8") as file:
                file.write(text + "\n")

    def denied_again(self, tool_name: str, tool_input: Any) -> int:
        """Note a denial of this exact call; return in how many responses of this run the
        model has requested it. Copies within one response count once: the model had not
        seen the denial yet when it wrote them."""
        turns = self.denied_calls.setdefault((tool_name, canonical_input(tool_input)), set())
        turns.add(self.tool_turns)
        return len(turns)

    def result(self, subtype: str, *, text: str | None = None, errors: list[str] | None = None,
               terminal_reason: str | None = None, structured_output: Any = None,
               api_error_status: int | None = None,
               deferred_tool_use: Any = None) -> ResultMessage:
        """The ResultMessage that ends this run."""
        session = self.session
        is_error = subtype != "success"
        if is_error and errors is None and subtype in _ERROR_TEXT:
            errors = [_ERROR_TEXT[subtype].format(max_turns=session.options.max_turns,
                                                  budget=session.options.max_budget_usd,
                                                  retries=self.structured_failures)]
        return ResultMessage(
            subtype=subtype,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            duration_api_ms=self.api_ms,
            is_error=is_error,
            num_turns=self.num_turns,
            session_id=session.id,
            stop_reason=self.stop_reason,
            total_cost_usd=session.usage.total_cost_usd,
            usage=session.usage.since(self.usage_at_start),
            result=text if not is_error else None,
            model_usage=session.usage.model_usage(),
            permission_denials=list(self.denials),
            deferred_tool_use=deferred_tool_use,
            errors=errors,
            api_error_status=api_error_status,
            uuid=new_uuid(),
            terminal_reason=terminal_reason or ("completed" if not is_error else None),
            structured_output=structured_output,
            origin=dict(self.origin) if self.origin is not None else None,
        )


def canonical_input(tool_input: Any) -> str:
    """The input as canonical JSON, so that key order or spacing never makes two requests
    of the same call look different."""
    return json.dumps(tool_input, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
