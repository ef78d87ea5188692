"""Running a subagent for one Agent call: its loop, its messages in the parent's stream,
the SubagentStart / SubagentStop hooks, and the one result the parent's model reads.

The subagent's loop is the ordinary `run_prompt` on its own session. What it yields goes
to the parent's stream (`relay`), tagged with `parent_tool_use_id` = the Agent call's id:
its tool calls and their results always, its text and thinking only with
`forward_subagent_text` (its `init` and result stay inside). Only its final message comes
back, as the Agent call's result, with an `agentId:` line; a subagent that did not finish
(turn limit, budget, error) is an `is_error` result saying why. A denial with
`interrupt=True` or tampering with the policy inside the subagent ends the parent's run
too; its permission denials are the parent's as well. As it starts, the session's
`on_subagent` is told of it (persist.py saves its conversation beside the session's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ....types import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ...common.reminders import reminder
from ...sessions.redact import redacted_head
from ...tools.base import ToolOutput
from ...tools.progress import current_call, report_output
from ..loop.loop import run_prompt
from ..loop.relay import current_relay, relay
from ..loop.run import Run
from ..session import Session

__all__ = ["run_subagent"]

_MAX_STOP_CONTINUATIONS = 8
_PROGRESS_LINES = 20
_SUMMARY_KEYS = ("command", "file_path", "path", "pattern", "description", "code", "prompt")


async def run_subagent(parent: Session, child: Any, input: dict[str, Any]) -> ToolOutput:
    """Run `child` (a SubagentSession) on the call's prompt; its final message."""
    tool_use_id = current_call()
    base = {**parent.hook_input(), "agent_id": child.agent_id, "agent_type": child.agent_type}
    start = await parent.hooks.run("SubagentStart", base, match=child.agent_type)
    _banners(start.system_messages, tool_use_id)
    if start.stop:
        _stop_parent(start.stop_reason or "A SubagentStart hook stopped the run.")
        return ToolOutput("Not started: a SubagentStart hook stopped the run.", is_error=True)
    content = [{"type": "text", "text": input["prompt"]},
               *(reminder(text) for text in start.additional_context)]
    if parent.on_subagent is not None:  # its conversation is saved with the session's
        parent.on_subagent(child, tool_use_id)
    watch = _Watch(tool_use_id, forward=parent.options.forward_subagent_text)
    active = False
    for continuation in range(_MAX_STOP_CONTINUATIONS + 1):
        run = Run(child)
        result = await watch.drive(run, content)
        _propagate(run, result)
        stop = await parent.hooks.run("SubagentStop", {
            **base, "stop_hook_active": active, "agent_transcript_path": None,
            "last_assistant_message": watch.last_text}, match=child.agent_type)
        _banners(stop.system_messages, tool_use_id)
        if stop.stop:
            _stop_parent(stop.stop_reason or "A SubagentStop hook stopped the run.")
        # `decision: block` or an `additionalContext` (feedback, not an error: the
        # comparable SDK 0.2.189) makes the subagent go on, as Stop does for the agent
        goes_on = stop.block or bool(stop.additional_context)
        if (not goes_on or stop.stop or result.is_error
                or continuation == _MAX_STOP_CONTINUATIONS):
            break
        why = stop.reason or "A SubagentStop hook asked to continue."
        content = [reminder(text) for text in [
            *([f"SubagentStop hook feedback: {why}"] if stop.block else []),
            *stop.additional_context]]
        active = True
    return _output(child, result, watch.last_text, _notes(input))


class _Watch:
    """Follows the subagent's messages: relays them, reports progress, keeps its last
    text."""

    def __init__(self, tool_use_id: str | None, *, forward: bool) -> None:
        self.tool_use_id = tool_use_id
        self.forward = forward
        self.last_text = ""
        self._message_id: str | None = None
        self._lines: list[str] = []

    async def drive(self, run: Run, content: list[dict[str, Any]]) -> ResultMessage:
        result: ResultMessage | None = None
        async for message in run_prompt(run, content):
            if isinstance(message, ResultMessage):
                result = message
                continue
            self._note(message)
            tagged = _tagged(message, self.tool_use_id, self.forward)
            if tagged is not None:
                relay(tagged)
        assert result is not None, "run_prompt always ends with a ResultMessage"
        return result

    def _note(self, message: Message) -> None:
        """Its own (not a nested agent's) last response text, and its calls as progress."""
        if not isinstance(message, AssistantMessage) or message.parent_tool_use_id:
            return
        if message.message_id != self._message_id:
            self._message_id, self.last_text = message.message_id, ""
        for block in message.content:
            if isinstance(block, TextBlock):
                self.last_text = (self.last_text + "\n" + block.text).strip()
            elif isinstance(block, ToolUseBlock):
                self._lines.append(f"{block.name}: {_summary(block.input)}")
                report_output("\n".join(self._lines[-_PROGRESS_LINES:]))


def _summary(tool_input: dict[str, Any]) -> str:
    value = next((tool_input[k] for k in _SUMMARY_KEYS if isinstance(tool_input.get(k), str)),
                 "")
    text = " ".join(value.split())
    head, left = redacted_head(text, 80)  # redacted whole, then cut: a card shows it
    return head[:-1] + "…" if left else head


def _tagged(message: Message, tool_use_id: str | None, forward: bool) -> Message | None:
    """The message as the parent's stream carries it (None: it stays inside)."""
    if isinstance(message, SystemMessage):
        if message.subtype == "init":
            return None
        return SystemMessage(message.subtype, {"parent_tool_use_id": tool_use_id,
                                               **message.data})
    if isinstance(message, AssistantMessage) and not forward and not any(
            isinstance(block, ToolUseBlock) for block in message.content):
        return None
    if isinstance(message, StreamEvent) and not forward:
        return None
    if isinstance(message, AssistantMessage | UserMessage | StreamEvent) and (
            message.parent_tool_use_id is None):
        return replace(message, parent_tool_use_id=tool_use_id)
    return message


def _banners(texts: list[str], tool_use_id: str | None) -> None:
    for text in texts:
        relay(SystemMessage("informational", {"content": text, "level": "info",
                                              "parent_tool_use_id": tool_use_id}))


def _stop_parent(reason: str) -> None:
    """End the parent's run once this call is answered (as a hook's stop does)."""
    sink = current_relay()
    if sink is not None and sink.run.stopped is None:
        sink.run.stopped = reason


def _propagate(run: Run, result: ResultMessage) -> None:
    """What the subagent's run says about the parent's: denials are the parent's too; an
    interrupting denial or tampering with the policy ends it."""
    sink = current_relay()
    if sink is None:
        return
    sink.run.denials.extend(run.denials)
    if run.interrupted:
        sink.run.interrupted = True
    if result.terminal_reason == "policy_tampered" and sink.run.stopped is None:
        sink.run.stopped = (result.errors or ["Security: the policy was tampered with."])[0]
        sink.run.stopped_by = "policy_tampered"


def _notes(input: dict[str, Any]) -> list[str]:
    """What the call asked for that cannot apply here, said in its result."""
    notes = []
    if input.get("run_in_background"):
        notes.append("Note: this host cannot take a result later, so the agent ran in the "
                     "foreground (not in the background) and has finished.")
    if input.get("isolation"):
        notes.append(f"Note: isolation {input['isolation']!r} is not supported here; the "
                     "agent worked in the shared working directory.")
    return notes


def _output(child: Any, result: ResultMessage, last_text: str, notes: list[str]) -> ToolOutput:
    tail = "\n".join([*notes, f"agentId: {child.agent_id}"])
    if not result.is_error:
        answer = result.result or "(The agent ended without a final message.)"
        return ToolOutput(f"{answer}\n\n{tail}")
    why = "; ".join(result.errors or []) or result.subtype
    text = f"The {child.agent_type} agent did not finish ({result.subtype}): {why}"
    if last_text:
        text += f"\n\nIts last message:\n{last_text}"
    return ToolOutput(f"{text}\n\n{tail}", is_error=True)
