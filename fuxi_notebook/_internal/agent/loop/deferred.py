"""Calls a PreToolUse hook deferred (`permissionDecision: "defer"`).

A deferred call does not run. When it is the only call of its response the run ends
there: a success with `stop_reason` / `terminal_reason` "tool_deferred" and the call in
`ResultMessage.deferred_tool_use`, the call answered as not run (owed, so it travels with
the next prompt). The next run of the conversation (a resume, or the client's next
query) decides it first, as the comparable CLI does on resume: the hooks are asked again
and, allowed, the call runs and its real result replaces the placeholder before the new
prompt is sent; deferred again, the run ends again and the prompt waits. A deferred call
among others is only answered as not run, and the run goes on: ending a run with two
calls half-decided would leave nothing to resume cleanly.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ....types import Message
from ...common.reminders import reminder
from .run import Run
from .tool_calls import DEFERRED_NOTE, execute_tool_calls

__all__ = ["decide_deferred", "deferred_end", "ends_on_deferral"]


def ends_on_deferral(run: Run, calls: list[dict[str, Any]]) -> bool:
    """Whether this round's calls end the run: one call, and a hook deferred it."""
    return len(calls) == 1 and any(d["id"] == calls[0]["id"] for d in run.deferred)


def deferred_end(run: Run) -> Message:
    """The result of a run a deferred call ended."""
    from ....extra_types import DeferredToolUse

    run.stop_reason = "tool_deferred"
    call = run.deferred[-1]
    return run.result("success", terminal_reason="tool_deferred",
                      deferred_tool_use=DeferredToolUse(id=call["id"], name=call["name"],
                                                        input=call["input"]))


def _owed_deferral(run: Run) -> tuple[int, dict[str, Any]] | None:
    """(index in the owed results, the call) of a deferred call still answered by its
    placeholder, or None."""
    session = run.session
    if not session.pending_results or not session.history:
        return None
    last = session.history[-1]
    calls = [b for b in last["content"] if b.get("type") == "tool_use"] if (
        last["role"] == "assistant") else []
    if len(calls) != 1:
        return None
    for index, block in enumerate(session.pending_results):
        if (block.get("type") == "tool_result" and block.get("tool_use_id") == calls[0]["id"]
                and block.get("is_error") and _text(block.get("content")).endswith(
                    DEFERRED_NOTE)):
            return index, calls[0]
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict)).strip()
    return ""


async def decide_deferred(run: Run, ended: list[bool]) -> AsyncGenerator[Message, None]:
    """Decide the call a hook deferred when the conversation's last run ended, before the
    new prompt joins it (`ended` gets True when this run ends here: deferred again, or a
    hook stopped it)."""
    found = _owed_deferral(run)
    if found is None:
        return
    index, call = found
    results: list[dict[str, Any]] = []
    context: list[str] = []
    async for message in execute_tool_calls(run, [call], results, context):
        yield message
    pending = run.session.pending_results
    pending[index] = results[0]
    pending.extend(reminder(text) for text in context)
    if run.deferred:
        ended.append(True)
        yield deferred_end(run)
    elif run.stopped:
        ended.append(True)
        yield run.result("error_during_execution", errors=[run.stopped],
                         terminal_reason=run.stopped_by)
