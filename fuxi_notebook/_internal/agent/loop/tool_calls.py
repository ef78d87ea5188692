"""Executing the tool calls of one response.

Every call gets exactly one result, in the model's order: unknown tools, invalid JSON,
schema mismatches, denials and tool failures all become `is_error` results the model
can read. Consecutive calls of `read` tools run concurrently; any other call runs alone.
PostToolUse / PostToolUseFailure hooks see each outcome and may add context for the model.
A denied call the model requests again gets a firmer answer, and then ends the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from ....types import (
    Message,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    block_to_wire,
    new_uuid,
)
from ...sessions.redact import redacted_head
from ...tools.base import ToolError, ToolOutput, reach_of, refusal_of
from ...tools.progress import calling
from .relay import relayed
from .run import Run, canonical_input

__all__ = ["FIRM_DENIAL_AT", "STOP_DENIAL_AT", "CallOutcome", "execute_tool_calls",
           "informational", "interrupted_results", "not_executed"]

_RAW_INPUT_PREVIEW = 2000

# A model that does not accept a denial tends to request the very same call again, turn
# after turn; headless, nobody is there to approve it, so the run went on until max_turns
# or the budget (issue 9: 119 turns). The answer cannot change within a run, so: the second
# request of a denied call (same tool, same input) gets a firmer message, which models
# usually heed; a third, after that message, ends the run, as more turns only cost money.
FIRM_DENIAL_AT = 2
STOP_DENIAL_AT = 3
_SUMMARY_KEYS = ("command", "file_path", "path", "pattern", "code")
_SUMMARY_CHARS = 80


@dataclass
class CallOutcome:
    """One call's result, plus hook context for the model and banners for the user."""

    result: dict[str, Any]
    context: list[str] = field(default_factory=list)
    banners: list[str] = field(default_factory=list)


def not_executed(calls: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """Error results for calls that will never run, so the history stays valid."""
    return [_error(call["id"], f"Not executed: {reason}.") for call in calls]


def interrupted_results(run: Run, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results for calls an interrupt cut short: one that had started is not "not
    executed" (it may have changed things), and it reports its output so far."""
    results = []
    for call in calls:
        started = run.calls_started.get(call["id"])
        if started is None:
            results.extend(not_executed([call], "interrupted by the user"))
            continue
        seconds = time.monotonic() - started[0]
        text = (f"Interrupted by the user after {seconds:.1f} s. The call had started, so "
                "its effects may be partial (variables set, files written, processes run).")
        if started[1]:
            text += f"\n\nOutput so far:\n{started[1]}"
        results.append(_error(call["id"], text))
    return results


def informational(text: str) -> SystemMessage:
    """A plain status banner (e.g. a hook's systemMessage)."""
    return SystemMessage(subtype="informational", data={"content": text, "level": "info"})


#: the end of a deferred call's placeholder result (how the next run finds it: deferred.py)
DEFERRED_NOTE = "(deferred: the caller decides it later)"


def _error(tool_use_id: str, message: str) -> dict[str, Any]:
    return block_to_wire(ToolResultBlock(tool_use_id=tool_use_id, content=message, is_error=True))


def _batches(run: Run, calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group consecutive calls of `read` tools; every other call is a batch of its own
    (an unknown tool's call is only an error result, so it may join a group)."""
    batches: list[list[dict[str, Any]]] = []
    last_read_only = False
    for call in calls:
        read_only = run.session.kind(call["name"]) in ("read", None)
        if read_only and batches and last_read_only:
            batches[-1].append(call)
        else:
            batches.append([call])
        last_read_only = read_only
    return batches


async def execute_tool_calls(run: Run, calls: list[dict[str, Any]], results: list[dict[str, Any]],
                             context: list[str]) -> AsyncGenerator[Message, None]:
    """Run `calls`, appending one wire result per call to `results` (and hook context to
    `context`), yielding banners and one UserMessage per result. After an interrupting
    denial or a hook's stop the remaining calls are not run."""
    calls = [_canonical(run, call) for call in calls]
    for batch in _batches(run, calls):
        outcomes: list[CallOutcome] = []
        if run.interrupted or run.stopped:
            outcomes = [CallOutcome(r) for r in not_executed(batch, "the run was interrupted")]
        elif _relays(run, batch):  # its calls yield messages of their own while they run
            async for message in relayed(run, _run_batch(run, batch), outcomes):
                yield message
        else:
            outcomes = await _run_batch(run, batch)
        for outcome in outcomes:
            results.append(outcome.result)
            context.extend(outcome.context)
            for banner in outcome.banners:
                yield informational(banner)
            block = ToolResultBlock(tool_use_id=outcome.result["tool_use_id"],
                                    content=outcome.result.get("content"),
                                    is_error=outcome.result.get("is_error", False))
            uuid = new_uuid()
            if run.session.checkpoints is not None:  # files as they are after this result
                run.session.checkpoints.history.mark(uuid)
            yield UserMessage(content=[block], uuid=uuid)


async def _run_batch(run: Run, batch: list[dict[str, Any]]) -> list[CallOutcome]:
    if len(batch) == 1:
        return [await _call(run, batch[0])]
    return list(await asyncio.gather(*(_call(run, call) for call in batch)))


def _canonical(run: Run, call: dict[str, Any]) -> dict[str, Any]:
    """A call of a tool under an older name it still answers to (`aliases`, e.g. Task
    for Agent) is that tool's call: checked, decided and hooked under its own name."""
    registry = run.session.registry
    if call["name"] in registry:
        return call
    for name in registry.names():
        if call["name"] in getattr(registry.get(name), "aliases", ()):
            return {**call, "name": name}
    return call


def _relays(run: Run, batch: list[dict[str, Any]]) -> bool:
    """Whether a call of the batch yields messages while it runs (a subagent's)."""
    return any(getattr(run.session.registry.get(call["name"]), "relays_messages", False)
               for call in batch)


def _precheck(run: Run, call: dict[str, Any]) -> str | None:
    """Why the call cannot even be considered (unknown tool, bad JSON, bad input)."""
    session = run.session
    name = call["name"]
    if session.registry.get(name) is None:
        available = ", ".join(session.registry.names()) or "none"
        return f"No such tool available: {name}. Available tools: {available}."
    if "_invalid_input" in call:
        raw = call["_invalid_input"][:_RAW_INPUT_PREVIEW]
        return (f"The input for {name} was not valid JSON, so the tool did not run. Send the "
                f"input again as one JSON object. Received: {raw}")
    return session.registry.validate(name, call["input"])


async def _call(run: Run, call: dict[str, Any]) -> CallOutcome:
    """Check, approve and run one call; never raises except on cancellation."""

    def keep(text: str) -> None:  # the output so far, for an interrupt's result
        if call["id"] in run.calls_started:
            run.calls_started[call["id"]] = (run.calls_started[call["id"]][0], text)

    with calling(call["id"], keep, run.on_progress):
        return await _checked_call(run, call)


async def _checked_call(run: Run, call: dict[str, Any]) -> CallOutcome:
    session = run.session
    tool_id, name = call["id"], call["name"]
    problem = _precheck(run, call)
    if problem:
        return CallOutcome(_error(tool_id, problem))
    tool_input = call["input"]
    tampered = _tampered(run, name)  # a thread left running may have changed it since
    if tampered is not None:
        return CallOutcome(_error(tool_id, f"Not executed: {tampered}"))
    # what the tool will refuse is decided before anyone is asked (and grants nothing)
    refused = await refusal_of(session.registry.get(name), tool_input, session.tool_ctx)
    if refused is not None:
        return CallOutcome(_error(tool_id, refused))
    decision = await session.permissions.decide(
        name, tool_input, tool_id, base=session.tool_ctx.shell_cwd or session.cwd,
        hook_input=session.hook_input())
    if decision.stop:
        run.stopped = decision.message
    if decision.defer:
        run.deferred.append({"id": tool_id, "name": name, "input": tool_input})
        return CallOutcome(_error(tool_id, f"Not run: {decision.message} {DEFERRED_NOTE}"),
                           decision.context, decision.banners)
    if decision.behavior == "deny":
        run.denials.append({"tool_name": name, "tool_use_id": tool_id, "tool_input": tool_input})
        run.interrupted = run.interrupted or decision.interrupt
        message = decision.message if decision.interrupt else _denied(run, name, tool_input,
                                                                      decision.message)
        return CallOutcome(_error(tool_id, message), decision.context, decision.banners)
    if decision.updated_input is not None:
        tool_input = decision.updated_input
        problem = session.registry.validate(name, tool_input) or await refusal_of(
            session.registry.get(name), tool_input, session.tool_ctx)
        if problem:
            return CallOutcome(_error(tool_id, problem), decision.context, decision.banners)
    session.tool_ctx.approved_targets = decision.targets
    session.tool_ctx.approved_shown = decision.shown
    outcome = await _execute(run, call, tool_input)
    outcome.context[:0] = decision.context
    outcome.banners[:0] = decision.banners
    return outcome


def _denied(run: Run, name: str, tool_input: dict[str, Any], message: str) -> str:
    """The denial's text for the model: as decided the first time, firmer when the model
    asks again for the same call, and at `STOP_DENIAL_AT` the run is stopped too (the loop
    ends it once this response's calls are answered)."""
    times = run.denied_again(name, tool_input)
    call = f"{name}: {_input_summary(tool_input)}"
    if times >= STOP_DENIAL_AT:
        stop = f"Stopped: the model requested the same denied call {times} times ({call})"
        if run.stopped is None:
            run.stopped, run.stopped_by = stop, "repeated_denial"
        return f"{message}\n\n{stop}."
    if times >= FIRM_DENIAL_AT:
        return (f"This exact call ({call}) was already denied, and it will be denied again "
                "however often it is requested. Do not request it again. Either do something "
                "else that does not need it, or finish now and tell the user what you need "
                f"(for example, which permission to grant) to go on.\n\nThe denial: {message}")
    return message


def _input_summary(tool_input: dict[str, Any]) -> str:
    """The most telling part of a call's input on one line, to name the call in a message."""
    value = next((tool_input[k] for k in _SUMMARY_KEYS if isinstance(tool_input.get(k), str)),
                 None)
    text = " ".join((value if value is not None else canonical_input(tool_input)).split())
    head, left = redacted_head(text, _SUMMARY_CHARS)  # redacted whole, then cut
    return head[:-1] + "…" if left else head


async def _execute(run: Run, call: dict[str, Any], tool_input: dict[str, Any]) -> CallOutcome:
    session = run.session
    tool = session.registry.get(call["name"])
    assert tool is not None
    started = time.monotonic()
    error: str | None = None
    # a subagent runs tools of its own, an in-process MCP tool the user's handler on the
    # model's input: the policy is checked after them as after code
    runs_code = (session.kind(call["name"]) == "execute" or getattr(tool, "relays_messages",
                 False) or getattr(tool, "runs_in_process", False))
    if runs_code:
        session.guard.arm()  # from now on the package's code is watched too
    run.calls_started[call["id"]] = (started, "")
    watch = _watch(session, call, tool_input)
    try:
        output = await tool.run(tool_input, session.tool_ctx)
    except asyncio.CancelledError as stop:  # it started: the interrupt may leave effects
        partial = str(getattr(stop, "partial_output", "") or "")
        run.calls_started[call["id"]] = (started, partial or run.calls_started[call["id"]][1])
        raise
    except ToolError as failure:
        error = str(failure)
    except Exception as failure:  # F11: a tool bug must not end the run
        error = f"{tool.name} failed: {type(failure).__name__}: {failure}"
    finally:  # code the model wrote may have run in this process: the policy must be intact
        tampered = _tampered(run, call["name"]) if runs_code else None
        if watch is not None and session.checkpoints is not None:
            with contextlib.suppress(OSError):  # a full disk must not cost the call its result
                session.checkpoints.after(watch)
    if tampered is not None:
        error = tampered
    if error is not None:
        output = ToolOutput(content=error, is_error=True)
    duration_ms = int((time.monotonic() - started) * 1000)
    run.log(f"tool {call['name']} ({call['id']}) "
            f"{'failed' if output.is_error else 'finished'} in {duration_ms} ms")
    outcome = await _after(run, call, tool_input, output, duration_ms)
    if not output.is_error:  # where the model reads, that folder's FUXI.md applies
        for path in _paths_read(session, call["name"], tool_input):
            outcome.context.extend(session.nested_memory(path))
    return outcome


def _watch(session: Any, call: dict[str, Any], tool_input: dict[str, Any]) -> Any:
    """What the call may change, taken before it runs (file checkpoints), or None."""
    checkpoints = session.checkpoints
    if checkpoints is None:
        return None
    kind = session.kind(call["name"]) or "execute"
    if kind == "execute" and session.permissions.reads_only(
            call["name"], tool_input, base=session.tool_ctx.shell_cwd or session.cwd):
        return None  # a read-only command line: nothing to scan for
    writes: list[Any] = []
    if kind == "edit":
        declared = session.permissions.declared.get(call["name"])
        reach = reach_of(declared, tool_input) if declared is not None else None
        writes = [session.tool_ctx.resolve(p) for p in (reach.writes if reach else ())]
    try:
        return checkpoints.before(call["id"], kind, writes)
    except OSError:  # the call runs; what it changes is not kept
        return None


def _paths_read(session: Any, name: str, tool_input: dict[str, Any]) -> tuple[str, ...]:
    """The paths a `read` tool's call read, from its declaration (none for other kinds)."""
    declared = session.permissions.declared.get(name)
    if declared is None or declared.kind != "read":
        return ()
    reach = reach_of(declared, tool_input)
    return reach.reads if reach is not None else ()


def _tampered(run: Run, tool_name: str) -> str | None:
    """If the policy changed outside the approval path: it is restored (by the guard), the
    run stops, and this says what happened."""
    breaches = run.session.guard.check()
    if not breaches:
        return None
    shown = "; ".join(breaches[:5]) + (f"; and {len(breaches) - 5} more"
                                       if len(breaches) > 5 else "")
    message = (f"Security: the agent's permission policy was changed outside the approval "
               f"path, by code run before this {tool_name} call or by it ({shown}). The "
               "change was reverted and the run was stopped.")
    run.stopped = message
    run.stopped_by = "policy_tampered"
    return message


async def _after(run: Run, call: dict[str, Any], tool_input: dict[str, Any], output: ToolOutput,
                 duration_ms: int) -> CallOutcome:
    """PostToolUse (or PostToolUseFailure) hooks: context, replaced output, banners."""
    session = run.session
    base = {**session.hook_input(), "tool_name": call["name"], "tool_input": tool_input,
            "tool_use_id": call["id"], "duration_ms": duration_ms}
    if output.is_error:
        event, data = "PostToolUseFailure", {**base, "error": _text(output.content),
                                             "is_interrupt": False}
    else:
        event, data = "PostToolUse", {**base, "tool_response": output.content}
    hook = await session.hooks.run(event, data, tool_use_id=call["id"], match=call["name"])
    content = output.content
    if hook.updated_output is not None and not output.is_error:
        content = hook.updated_output if isinstance(hook.updated_output, str | list) else str(
            hook.updated_output)
    context = list(hook.additional_context)
    if hook.block and hook.reason:
        context.append(f"{event} hook feedback: {hook.reason}")
    if hook.stop:
        run.stopped = hook.stop_reason or f"A {event} hook stopped the run."
    result = block_to_wire(ToolResultBlock(tool_use_id=call["id"], content=content,
                                           is_error=output.is_error))
    return CallOutcome(result, context, list(hook.system_messages))


def _text(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
