"""The agent loop: prompt → model → tools → model ... → result.

`run_prompt` is the single implementation behind `query()` and `FuxiSDKClient`. It never
prints and never imports IPython: it yields messages. Each step is a small function.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from ....errors import ModelError
from ....types import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    UserMessage,
    block_from_wire,
    new_uuid,
)
from ...common.reminders import reminder
from ...context.caching import with_cache_breakpoints
from ...models.base import BlockDone, ModelRequest, ModelResponse, RawEvent
from ..extensions.commands import Expansion, expand_prompt
from ..prompt import refresh_system
from ..structured import STRUCTURED_TOOL, accepted_answer, as_json, reminder_text
from .compacting import (
    compact_after_rejection,
    compact_command,
    compact_if_needed,
    compact_now,
    too_long,
)
from .deferred import decide_deferred, deferred_end, ends_on_deferral
from .repair import REPAIR_STEPS, repair_added_content
from .run import Run
from .run_model import model_for_run, running_on
from .tool_calls import (
    execute_tool_calls,
    informational,
    interrupted_results,
    not_executed,
)

__all__ = ["run_prompt"]


async def run_prompt(run: Run,
                     content: str | list[dict[str, Any]]) -> AsyncGenerator[Message, None]:
    """Run the loop for one prompt, yielding every message up to its ResultMessage.

    A `/command` prompt is expanded first (commands.py): hooks, the model and the record
    see the command's text, and its `model` serves this run only (run_model.py). With
    `verbatim_prompts` (or `run.verbatim`: a streaming-input message stamped
    `client_composed`) the prompt is sent as typed: no command, no `/compact`. The loop
    never expands an `@path` and attaches nothing at the start of a turn, in either mode;
    the UserPromptSubmit hooks still run and may add context, as in the comparable SDK."""
    session = run.session
    yield session.init_message()
    for note in session.setup_notes():  # what the project's settings could not apply
        yield informational(note)
    if _blank(content):  # e.g. `client.query("")` to reopen a resumed session
        yield run.result("success", text="")
        return
    verbatim = session.options.verbatim_prompts or run.verbatim
    manual = None if verbatim else compact_command(content)
    if manual is not None:  # `/compact [instructions]`: the conversation is summarised now
        refresh_system(session)
        async with contextlib.aclosing(compact_now(run, manual)) as messages:
            async for message in messages:
                yield message
        return
    # verbatim_prompts: the prompt is sent as written, a leading /name included
    expansion = Expansion(content) if verbatim else expand_prompt(content, session.commands)
    model, notes = model_for_run(session, expansion.command.model if expansion.command else None)
    for note in [*expansion.notes, *notes]:
        yield informational(note)
    with running_on(session, model):
        async with contextlib.aclosing(_run_loop(run, expansion.content)) as messages:
            async for message in messages:
                yield message


async def _run_loop(run: Run, content: str | list[dict[str, Any]]) -> AsyncGenerator[Message, None]:
    """A call deferred when the last run ended is decided first; then the prompt."""
    ended: list[bool] = []
    async with contextlib.aclosing(decide_deferred(run, ended)) as deciding:
        async for message in deciding:
            yield message
    if ended:
        return
    async with contextlib.aclosing(_turns(run, content)) as turns:
        async for message in turns:
            yield message


async def _turns(run: Run, content: str | list[dict[str, Any]]) -> AsyncGenerator[Message, None]:
    """The prompt joins the conversation; model and tools take turns until a result."""
    session = run.session
    blocked = await _submit_prompt(run, content)
    for banner in blocked.banners:
        yield informational(banner)
    if blocked.reason is not None:
        yield run.result("error_during_execution", errors=[blocked.reason],
                         terminal_reason="hook_stopped")
        return
    echo = _prompt_echo(session, content)
    if echo is not None:
        yield echo
    options = session.options
    while True:
        refresh_system(session)  # built at the first request: then kept, or built again
        if _over_budget(session):
            yield run.result("error_max_budget_usd", terminal_reason="budget_exhausted")
            return
        async with contextlib.aclosing(compact_if_needed(run)) as compacting:
            async for message in compacting:
                yield message
        holder: list[ModelResponse] = []
        try:
            async for message in _stream_response(run, holder):
                yield message
        except ModelError as error:
            retry: list[bool] = []
            async with contextlib.aclosing(_recover(run, error, retry)) as recovering:
                async for message in recovering:
                    yield message
            if retry:
                continue
            return
        response = holder[0]
        run.compacted_for_rejection = False  # accepted: a later rejection may compact again
        calls = _tool_calls(response)
        if not calls:
            ended: list[bool] = []
            async with contextlib.aclosing(_answered(run, response, ended)) as answered:
                async for message in answered:
                    yield message
            if ended:
                return
            continue
        answering = all(call["name"] == STRUCTURED_TOOL for call in calls)
        if (options.max_turns is not None and run.tool_turns >= options.max_turns
                and not answering):  # the final answer is not cut off by the turn limit
            session.add_tool_results(not_executed(calls, "maximum number of turns reached"),
                                     send_now=False)
            yield run.result("error_max_turns", terminal_reason="max_turns")
            return
        run.tool_turns += 1
        results: list[dict[str, Any]] = []
        async for message in _run_tools(run, calls, results):
            yield message
        final = _after_tools(run, response, calls, results)
        if final is not None:
            yield final
            return


def _over_budget(session: Any) -> bool:
    """Whether the running cost has reached `max_budget_usd` (no request is sent then)."""
    budget = session.options.max_budget_usd
    return budget is not None and bool(session.usage.cost_usd >= budget)


async def _recover(run: Run, error: ModelError, retry: list[bool]) -> AsyncGenerator[Message, None]:
    """A request the API rejected: compact (a prompt too long, once in a row) or repair
    what this run added, and ask again (`retry` gets True); else the run's error result."""
    if too_long(error) and not run.compacted_for_rejection:
        run.compacted_for_rejection = True
        before = len(run.compactions)
        async with contextlib.aclosing(compact_after_rejection(run, error)) as compacting:
            async for message in compacting:
                yield message
        if len(run.compactions) > before:
            retry.append(True)
            return
    repaired = _repair(run, error)
    if repaired is not None:
        yield informational(repaired)
        retry.append(True)
        return
    if run.num_turns == 0:  # never answered: the next request must not carry it unseen
        run.session.withdraw_prompt(run.prompt)
    yield run.result("error_during_execution", errors=[str(error)], terminal_reason="api_error",
                     api_error_status=error.status)


async def _answered(run: Run, response: ModelResponse,
                    ended: list[bool]) -> AsyncGenerator[Message, None]:
    """A response without tool calls: the Stop hooks, then the final result (`ended`
    gets True), or a reminder to answer in the schema, or the hooks' feedback to go on."""
    session = run.session
    done = await _stop_hooks(run, response)
    for banner in done.banners:
        yield informational(banner)
    if not done.go_on and session.structured is not None:
        final = _no_structured_answer(run, response)  # reminded, or out of tries
        if final is not None:
            ended.append(True)
            yield final
        return
    if not done.go_on:
        ended.append(True)
        yield _final_result(run, response)
        return
    session.add_user_prompt(done.go_on)


def _after_tools(run: Run, response: ModelResponse, calls: list[dict[str, Any]],
                 results: list[dict[str, Any]]) -> Message | None:
    """The run's end after a round of tool calls, if it ends: the structured answer was
    given, a hook stopped the run, or a denial interrupted it; None to go on."""
    if run.session.structured is not None and not (run.stopped or run.interrupted):
        final = _structured_answer(run, response, calls, results)
        if final is not None:
            return final
    if run.stopped:
        return run.result("error_during_execution", errors=[run.stopped],
                          terminal_reason=run.stopped_by)
    if ends_on_deferral(run, calls):  # a deferred call ends the run, when alone
        return deferred_end(run)
    if run.interrupted:
        return run.result("error_during_execution", errors=["Interrupted by a permission "
                          "denial."], terminal_reason="aborted_tools")
    if run.session.on_turn is not None:  # the round has joined the conversation
        run.session.on_turn()
    return None


def _repair(run: Run, error: ModelError) -> str | None:
    """If the API rejected content this run added: replace it (see repair.py) and say so;
    None when there is nothing (more) to try."""
    if error.status not in (400, 413):
        return None
    session = run.session
    while run.repairs < REPAIR_STEPS:
        run.repairs += 1
        count = repair_added_content(session.history, session.pending_results,
                                     since=run.history_start, step=run.repairs,
                                     reason=str(error))
        if count:
            session.meter.forget()
            what = "image(s) or document(s)" if run.repairs == 1 else "tool result(s)"
            return (f"The API rejected the request ({error}). {count} {what} added in this "
                    "run were replaced by a note, and the request was sent again.")
    return None


@dataclass
class _HookVerdict:
    """Whether a prompt/stop hook blocked (with why), the banners it asked to show, and
    (Stop) what the agent goes on with instead of stopping."""

    reason: str | None = None
    banners: list[str] = field(default_factory=list)
    go_on: list[dict[str, Any]] = field(default_factory=list)


def _blank(content: str | list[dict[str, Any]]) -> bool:
    """A prompt with nothing in it: the model is not asked (the API refuses it)."""
    if isinstance(content, str):
        return not content.strip()
    return not content or all(block.get("type") == "text" and not str(
        block.get("text", "")).strip() for block in content)


def _prompt_echo(session: Any, content: str | list[dict[str, Any]]) -> UserMessage | None:
    """The prompt as a UserMessage, when `extra_args` asks for `replay-user-messages`;
    its uuid marks the files as they were before the prompt (file checkpoints)."""
    uuid = new_uuid()
    if session.checkpoints is not None:
        session.checkpoints.history.mark(uuid)
    if "replay-user-messages" not in (session.options.extra_args or {}):
        return None
    if isinstance(content, str):
        return UserMessage(content=content, uuid=uuid)
    blocks = [block for block in map(block_from_wire, content) if block is not None]
    return UserMessage(content=blocks, uuid=uuid)


async def _submit_prompt(run: Run, content: str | list[dict[str, Any]]) -> _HookVerdict:
    """UserPromptSubmit hooks, then the prompt (plus any hook context) joins the history."""
    session = run.session
    text = content if isinstance(content, str) else "\n".join(
        b.get("text", "") for b in content if b.get("type") == "text")
    hook = await session.hooks.run("UserPromptSubmit", {**session.hook_input(), "prompt": text})
    if hook.block or hook.stop:
        reason = hook.reason or hook.stop_reason or "A UserPromptSubmit hook blocked the prompt."
        return _HookVerdict(reason, hook.system_messages)
    if hook.session_title is not None:  # a blocked prompt's title is not applied
        session.conversation.title = hook.session_title
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    run.prompt = blocks + [reminder(c) for c in hook.additional_context]
    session.add_user_prompt(run.prompt)
    return _HookVerdict(None, hook.system_messages)


_MAX_STOP_CONTINUATIONS = 8


async def _stop_hooks(run: Run, response: ModelResponse) -> _HookVerdict:
    """Stop hooks may make the agent go on: `decision: block` with a reason, or an
    `additionalContext` (feedback, not an error: the agent goes on with it, as the
    comparable SDK 0.2.189 has it). Their input carries `session_crons` (hooks.py)."""
    session = run.session
    if not session.hooks.has("Stop") or response.incomplete:
        return _HookVerdict()
    last = "\n".join(b["text"] for b in response.content if b.get("type") == "text")
    hook = await session.hooks.run("Stop", {**session.hook_input(),
                                            "stop_hook_active": run.stop_hook_active,
                                            "last_assistant_message": last})
    goes_on = hook.block or bool(hook.additional_context)
    if not goes_on or hook.stop or run.stop_continuations >= _MAX_STOP_CONTINUATIONS:
        return _HookVerdict(None, hook.system_messages)
    run.stop_hook_active = True
    run.stop_continuations += 1
    why = hook.reason or "A Stop hook asked to continue."
    feedback = [f"Stop hook feedback: {why}"] if hook.block else []
    return _HookVerdict(None, hook.system_messages, go_on=[
        reminder(text) for text in [*feedback, *hook.additional_context]])


def _tool_calls(response: ModelResponse) -> list[dict[str, Any]]:
    """The calls to execute; a call cut off by `max_tokens` is never run."""
    calls = [b for b in response.content if b.get("type") == "tool_use"]
    if response.stop_reason == "max_tokens" and response.content:
        last = response.content[-1]
        if last.get("type") == "tool_use":
            last["_invalid_input"] = last.get("_invalid_input") or (
                "(cut off: the response reached max_tokens while writing this call)")
    return calls


def _final_result(run: Run, response: ModelResponse) -> Any:
    if response.incomplete:
        return run.result("error_during_execution", terminal_reason="api_error", errors=[
            "The response stream broke after a partial answer; the answer above may be "
            "incomplete."])
    return run.result("success", text=_response_text(response))


def _structured_answer(run: Run, response: ModelResponse, calls: list[dict[str, Any]],
                       results: list[dict[str, Any]]) -> ResultMessage | None:
    """After the tools ran: the result if StructuredOutput accepted an answer, or if the
    tries ran out; None to go on (an invalid answer's errors are in its result)."""
    tool = run.session.structured
    accepted, answer = accepted_answer(tool, calls, results)
    if accepted:
        text = _response_text(response) or as_json(answer)
        return run.result("success", text=text, structured_output=answer)
    if any(call["name"] == STRUCTURED_TOOL for call in calls):
        return _failed_try(run)
    return None


def _no_structured_answer(run: Run, response: ModelResponse) -> ResultMessage | None:
    """A response ended without the StructuredOutput tool: remind the model (None), or
    end the run once the tries ran out."""
    ended = _failed_try(run)
    if ended is None:
        run.session.add_user_prompt([reminder(reminder_text())])
    return ended


def _failed_try(run: Run) -> ResultMessage | None:
    """Count a failed attempt at the answer; the result once the tries ran out."""
    run.structured_failures += 1
    if run.structured_failures <= run.session.structured.wanted.max_retries:
        return None
    return run.result("error_max_structured_output_retries",
                      terminal_reason="structured_output_retry_exhausted")


def _response_text(response: ModelResponse) -> str:
    return "\n".join(b["text"] for b in response.content if b.get("type") == "text")


async def _run_tools(run: Run, calls: list[dict[str, Any]],
                     results: list[dict[str, Any]]) -> AsyncGenerator[Message, None]:
    """Execute the calls (their results go to `results`); on cancellation, answer every
    call with an interrupted result."""
    context: list[str] = []
    try:
        async for message in execute_tool_calls(run, calls, results, context):
            yield message
    except (asyncio.CancelledError, GeneratorExit):
        done = {r["tool_use_id"] for r in results}
        missing = [c for c in calls if c["id"] not in done]
        run.session.add_tool_results(results + interrupted_results(run, missing),
                                     send_now=False)
        raise
    ended = run.stopped is not None or run.interrupted or ends_on_deferral(run, calls)
    blocks = results + [reminder(text) for text in context]
    if run.session.add_tool_results(blocks, send_now=not ended):
        run.log("tool results cut to fit the context window")


def _request(run: Run) -> ModelRequest:
    session = run.session
    system, tools, messages = with_cache_breakpoints(
        session.system, session.tool_definitions, session.history)
    return ModelRequest(model=session.model_name, messages=messages, system=system,
                        tools=tools, **session.request_params())


async def _stream_response(run: Run, holder: list[ModelResponse]) -> AsyncGenerator[Message, None]:
    """Stream one model response: StreamEvents (if asked), one AssistantMessage per
    completed block; the finished response is recorded in history and usage.

    Usage counts while the response streams (`message_start`, then each `message_delta`),
    replaced by the final count at the end: a retried attempt's count is replaced by the
    next attempt's, a failed request's is dropped (as before), an interrupted response keeps
    what it had streamed (the API read that input)."""
    session = run.session
    run.log(f"request {run.num_turns + 1} to {session.model_name}: "
            f"{len(session.history)} messages")
    partial = session.options.include_partial_messages
    message_id, model, usage = None, session.model_name, None
    texts: dict[int, str] = {}  # text shown so far, by block index (kept on interrupt)
    key = object()  # this response, in session.usage
    streamed: dict[str, Any] = {}  # its usage so far (cumulative)
    try:
        async for item in session.model.stream(_request(run)):
            if isinstance(item, RawEvent):
                _follow_text(texts, item.event)
                if item.event.get("type") == "message_start":
                    start = item.event["message"]
                    message_id, usage = start.get("id"), start.get("usage")
                    model = start.get("model") or model
                if _follow_usage(streamed, item.event):
                    session.usage.streaming(key, model, streamed)
                if partial:
                    yield StreamEvent(uuid=new_uuid(), session_id=session.id, event=item.event)
            elif isinstance(item, BlockDone):
                block = block_from_wire(item.block)
                if block is not None:
                    yield AssistantMessage(content=[block], model=model,
                                           message_id=message_id, usage=usage,
                                           session_id=session.id, uuid=new_uuid())
            else:
                _record(run, item, key)
                holder.append(item)
    except (asyncio.CancelledError, GeneratorExit):
        if not holder:
            _keep_cut_off_text(run, texts)
            if streamed:
                session.usage.settle(key, model, streamed)
        raise
    finally:  # a failed request (ModelError): its streamed count goes, as it never counted
        session.usage.settle(key)


def _follow_usage(streamed: dict[str, Any], event: dict[str, Any]) -> bool:
    """Fold an event's usage into `streamed` (the response's usage so far); whether it
    changed. `message_start` begins it afresh (a retry's new attempt replaces the old);
    `message_delta` counts are cumulative, so they replace, never add."""
    kind = event.get("type")
    if kind == "message_start":
        streamed.clear()
        streamed.update(event["message"].get("usage") or {})
        return True
    if kind == "message_delta" and event.get("usage"):
        streamed.update({k: v for k, v in event["usage"].items() if v is not None})
        return True
    return False


def _follow_text(texts: dict[int, str], event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "message_start":
        texts.clear()
    elif kind == "content_block_start" and event.get("content_block", {}).get("type") == "text":
        texts[event["index"]] = event["content_block"].get("text", "")
    elif kind == "content_block_delta" and event.get("index") in texts:
        texts[event["index"]] += event.get("delta", {}).get("text", "") or ""


_CUT_OFF = "\n\n[cut off: the user interrupted the response here]"


def _keep_cut_off_text(run: Run, texts: dict[int, str]) -> None:
    """An interrupt mid-response: the text the user already saw stays in the conversation
    (and the record), marked as cut off, and counts as a turn. Tool calls in it were never
    run and are dropped, so the history stays valid."""
    shown = [texts[index] for index in sorted(texts) if texts[index].strip()]
    if not shown:
        return
    shown[-1] += _CUT_OFF
    run.num_turns += 1
    run.session.add_assistant([{"type": "text", "text": text} for text in shown])


def _record(run: Run, response: ModelResponse, key: object) -> None:
    """The finished response joins the history; its final usage replaces the streamed."""
    session = run.session
    usage = response.usage or {}
    run.log(f"response {run.num_turns + 1} from {response.model or session.model_name}: "
            f"stop_reason {response.stop_reason}, {usage.get('input_tokens', 0)} in / "
            f"{usage.get('output_tokens', 0)} out tokens, {response.api_duration_ms} ms")
    run.num_turns += 1
    run.api_ms += response.api_duration_ms
    run.stop_reason = response.stop_reason
    session.usage.settle(key, response.model or session.model_name, response.usage)
    session.add_assistant(response.content)
    session.meter.measured(response.usage, session.history)
