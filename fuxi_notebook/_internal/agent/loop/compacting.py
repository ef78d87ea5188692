"""Compaction in the loop: when a request would near the context window (or the user
sent `/compact`), the older turns are summarised and replaced (context/compaction.py).

Before each model request the loop asks `compact_if_needed`; `/compact [instructions]`
as a prompt calls `compact_now`. Either way the `PreCompact` hook may block it, the
summariser is the session's own model with the session's system prompt (FUXI.md with
it: its summary instructions are followed) and tools (so the cached prefix is read
again), its cost counts, and the stream gets one `compact_boundary` system message. A
replayed run does not ask the model: it compacts where the record says, with the
recorded summary (`Run.replay_compactions`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from ....errors import ModelError
from ....types import Message, SystemMessage, new_uuid
from ...context.caching import with_cache_breakpoints
from ...context.compaction import (
    Compaction,
    compacted,
    cut_point,
    summary_request_messages,
    summary_text,
)
from ...models.base import ModelRequest, ModelResponse
from .run import CompactionMark, Run
from .tool_calls import informational

__all__ = ["COMPACT_COMMAND", "added_messages", "boundary_message", "compact_after_rejection",
           "compact_command", "compact_if_needed", "compact_now", "context_usage",
           "too_long"]

COMPACT_COMMAND = "/compact"
_NOTHING = "Nothing to compact yet: the conversation has no earlier turns to summarise."


def compact_command(content: str | list[dict[str, Any]]) -> str | None:
    """The instructions of a `/compact [instructions]` prompt ("" for none); None when
    the prompt is something else."""
    from ..extensions.commands import prompt_text

    stripped = (prompt_text(content)[1] or "").strip()  # context blocks before it: skipped
    if stripped != COMPACT_COMMAND and not stripped.startswith(COMPACT_COMMAND + " ") and (
            not stripped.startswith(COMPACT_COMMAND + "\n")):
        return None
    return stripped[len(COMPACT_COMMAND):].strip()


def request_tokens(run: Run) -> tuple[int, bool]:
    """The size of the next request: `(tokens, counted by the API)`."""
    session = run.session
    return session.meter.estimate(session.system, session.tool_definitions, session.history,
                                  session.pending_results)


async def compact_if_needed(run: Run) -> AsyncGenerator[Message, None]:
    """Before a request: compact when it would near the window (on replay: where the
    record did)."""
    session = run.session
    if run.replay_compactions is not None:
        for recorded in run.replay_compactions.pop(run.num_turns, []):
            async for message in _compact(run, recorded.trigger, None, recorded=recorded):
                yield message
        return
    if not session.auto_compact:
        return
    tokens, _ = request_tokens(run)
    if tokens > session.window.threshold:
        async for message in _compact(run, "auto", None):
            yield message


#: how each API says a prompt is over the model's window: the first-party API, Vertex
#: and Foundry ("prompt is too long: N tokens > M maximum"), Bedrock ("Input is too long
#: for requested model.")
_TOO_LONG = ("prompt is too long", "input is too long for requested model")


def too_long(error: Exception) -> bool:
    """Whether the API rejected a request for being over the window (our estimate was
    low: the conversation is compacted and the request sent again, once)."""
    said = str(error).lower()
    return (getattr(error, "status", None) in (400, 413)
            and any(words in said for words in _TOO_LONG))


async def compact_after_rejection(run: Run, error: Exception) -> AsyncGenerator[Message, None]:
    """The API said the prompt is too long: compact now, whatever the estimate said. A
    window the API names ("> N maximum") is the session's from now on; one it does not
    name (Bedrock) is at most the size of the prompt it refused, so compaction comes
    before the next refusal (and its summary request fits)."""
    import re

    stated = re.search(r">\s*(\d+)\s*maximum", str(error))
    run.session.limit_window(int(stated.group(1)) if stated else request_tokens(run)[0])
    if run.replay_compactions is not None or not run.session.auto_compact:
        return
    async for message in _compact(run, "auto", None):
        yield message


async def compact_now(run: Run, instructions: str) -> AsyncGenerator[Message, None]:
    """`/compact [instructions]`: compact now, then end the run with a result saying how
    much it saved (or why nothing was compacted)."""
    before = len(run.compactions)
    if run.replay_compactions is None:
        async for message in _compact(run, "manual", instructions or None):
            yield message
    else:  # a replay compacts only where the recording did, with its summary
        for recorded in run.replay_compactions.pop(0, []):
            async for message in _compact(run, "manual", instructions or None,
                                          recorded=recorded):
                yield message
        run.compact_note = run.compact_note or _NOTHING
    if len(run.compactions) > before:
        done = run.compactions[-1].compaction
        text = (f"Compacted the conversation: {done.pre_tokens:,} → about "
                f"{done.post_tokens:,} tokens ({done.kept} latest message"
                f"{'' if done.kept == 1 else 's'} kept word for word).")
    else:
        text = run.compact_note or "Nothing was compacted."
    yield run.result("success", text=text)


async def _compact(run: Run, trigger: str, instructions: str | None, *,
                   recorded: Compaction | None = None) -> AsyncGenerator[Message, None]:
    session = run.session
    if session.pending_results:  # owed results join the history: they are part of it
        session.add_tool_results(session.pending_results, send_now=True)
        session.pending_results = []
    history = session.history
    pre_tokens, _ = request_tokens(run)
    # `/compact` asks for all of it: only the last exchange stays word for word
    keep = session.window.keep if trigger == "auto" else 0
    cut = len(history) - recorded.kept if recorded is not None else cut_point(history, keep)
    if cut is None or cut < 1 or cut >= len(history):
        run.compact_note = _NOTHING
        if trigger == "manual":
            yield informational(run.compact_note)
        return
    hook = await session.hooks.run("PreCompact", {
        **session.hook_input(), "trigger": trigger, "custom_instructions": instructions},
        match=trigger)
    for banner in hook.system_messages:
        yield informational(banner)
    if hook.block or hook.stop:
        run.compact_note = (f"A PreCompact hook kept the conversation from being compacted"
                            f"{': ' + hook.reason if hook.reason else ''}.")
        yield informational(run.compact_note)
        return
    if recorded is not None:
        summary = recorded.summary
    else:
        summary, problem = await _summarise(run, cut, instructions)
        if problem is not None:
            run.compact_note = f"The conversation could not be compacted: {problem}"
            yield informational(run.compact_note)
            return
        tasks = session.conversation.tasks
        if tasks.visible():  # the calls that built it go: the list itself stays
            summary += f"\n\nThe task list at this point:\n{tasks.checklist()}"
    before = list(history)
    session.history = compacted(history, cut, summary)
    session.meter.forget()
    run.history_start = max(1, run.history_start - cut + 1)
    post_tokens, _ = request_tokens(run)
    if recorded is not None:  # a replay reports what the recording measured
        pre_tokens, post_tokens = recorded.pre_tokens, recorded.post_tokens
    done = Compaction(summary=summary, kept=len(before) - cut, trigger=trigger,
                      pre_tokens=pre_tokens, post_tokens=post_tokens, turn=run.num_turns)
    run.compactions.append(CompactionMark(before=before, compaction=done))
    run.log(f"compacted ({trigger}): {pre_tokens} → {post_tokens} tokens, "
            f"{done.kept} messages kept")
    yield boundary_message(session.id, done)


def boundary_message(session_id: str, done: Compaction) -> SystemMessage:
    """The `compact_boundary` system message, in the comparable SDK's shape."""
    metadata = {"trigger": done.trigger, "pre_tokens": done.pre_tokens,
                "post_tokens": done.post_tokens}
    return SystemMessage(subtype="compact_boundary", data={
        "type": "system", "subtype": "compact_boundary", "uuid": new_uuid(),
        "session_id": session_id, "compact_metadata": metadata})


async def _summarise(run: Run, cut: int, instructions: str | None) -> tuple[str, str | None]:
    """`(summary, None)`, or `("", what went wrong)`; the request's cost is counted."""
    session = run.session
    params = session.request_params()
    prefix = sum(session.meter.prefix(session.system, session.tool_definitions))
    messages = summary_request_messages(session.history, cut, instructions=instructions,
                                        words=session.window.summary_tokens // 2,
                                        budget=session.window.threshold - prefix)
    system, tools, messages = with_cache_breakpoints(session.system,
                                                     session.tool_definitions, messages)
    request = ModelRequest(model=session.model_name, messages=messages, system=system,
                           tools=tools, tool_choice={"type": "none"} if tools else None,
                           **params)
    response: ModelResponse | None = None
    try:
        async with contextlib.aclosing(session.model.stream(request)) as stream:
            async for item in stream:
                if isinstance(item, ModelResponse):
                    response = item
    except ModelError as error:
        return "", str(error)
    if response is None:
        return "", "the model sent no response"
    session.usage.add(response.model or session.model_name, response.usage)
    run.api_ms += response.api_duration_ms
    summary = summary_text(response.content)
    if not summary:
        return "", "the summary came back empty"
    return summary, None


def context_usage(session: Any) -> dict[str, Any]:
    """How full the context window is: the comparable SDK's `get_context_usage()` shape
    (camelCase keys) plus snake_case totals."""
    window = session.window
    system, tools = session.meter.prefix(session.system, session.tool_definitions)
    total, counted = session.meter.estimate(session.system, session.tool_definitions,
                                            session.history, session.pending_results)
    messages = max(0, total - system - tools)
    categories = [{"name": "System prompt", "tokens": system},
                  {"name": "Tools", "tokens": tools},
                  {"name": "Messages", "tokens": messages},
                  {"name": "Free space", "tokens": max(0, window.threshold - total)},
                  {"name": "Reserved (answer and margin)", "tokens": window.reserve}]
    percentage = round(100 * total / window.size, 1)
    return {
        "categories": categories, "totalTokens": total, "maxTokens": window.threshold,
        "rawMaxTokens": window.size, "percentage": percentage,
        "autoCompactThreshold": window.threshold, "isAutoCompactEnabled": session.auto_compact,
        "model": session.model_name, "counted": counted,
        "total_tokens": total, "max_tokens": window.size,
    }


def added_messages(run: Run, history: list[dict[str, Any]], start: int
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`(messages, compactions)`: what a run added to the conversation from `start` (an
    index into the history as it was when the run began), across its compactions, and
    each compaction with `at` = how many of `messages` came before it. Joining
    `messages` to the earlier history and applying each compaction at its place gives
    `history` back (sessions/history.py does that for a notebook's records)."""
    states = [mark.before for mark in run.compactions] + [history]
    messages = list(states[0][start:])
    compactions = []
    for index, mark in enumerate(run.compactions):
        compactions.append({"at": len(messages), **mark.compaction.as_record()})
        messages += states[index + 1][1 + mark.compaction.kept:]
    return messages, compactions
