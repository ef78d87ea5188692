"""Renderers: how a `%%fuxi` run shows up in JupyterLab, a terminal, or a headless run.

- `LiveRenderer` (a frontend that can click): one display, updated at most ~20 times a
  second with the live markdown view; approval cards with buttons (`approval_widgets`).
- `TextRenderer` (terminal IPython): prints as it streams; asks y/n/a at the prompt.
- `HeadlessRenderer` (nbclient, papermill, `jupyter execute`): shows nothing live and
  never waits; only the final outputs, so re-runs produce exactly the same cells.
Every renderer ends with the same final outputs, in the same order (`cellrun`): notes, the
transcript + session record, then what the tools showed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

from IPython.display import clear_output, display

from ..options import ToolPermissionContext
from ..sessions.redact import redact_text
from ..types import AssistantMessage, Message, StreamEvent, ToolUseBlock, UserMessage
from .cellrun import FinalOutputs
from .view import LiveView, tool_summary

__all__ = ["Answer", "Coalescer", "HeadlessRenderer", "LiveRenderer", "Renderer", "TextRenderer",
           "always_adds"]

#: An approval answer: ("allow" | "always" | "deny", reason, updated_input)
Answer = tuple[str, str | None, dict[str, Any] | None]
UPDATE_INTERVAL = 0.05  # seconds: at most ~20 updates a second reach the browser


class Renderer(Protocol):
    """What the controller needs from a renderer."""

    interactive: bool
    wants_partial: bool
    holds_outputs: bool
    view: LiveView

    def start(self, prompt: str, notes: list[str]) -> None: ...

    def on_message(self, message: Message) -> None: ...

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer: ...

    async def confirm_replay(self, summary: str) -> bool: ...

    def finish(self, final: FinalOutputs) -> None: ...


def always_adds(context: ToolPermissionContext) -> str:
    """The rule text "Always allow" would add (from the tool's declaration), or ""."""
    return "; ".join(str(rule) for update in context.suggestions for rule in update.rules or [])


def show_final(final: FinalOutputs, *, republish: bool) -> None:
    """The final display, then (after a clear) the tool outputs again."""
    display(final.data, raw=True, metadata=final.metadata)
    if republish and final.published is not None:
        final.published.republish()


class Coalescer:
    """Calls `flush` at most once per `interval`, and always for the latest state."""

    def __init__(self, flush: Callable[[], None], interval: float = UPDATE_INTERVAL) -> None:
        self._flush = flush
        self.interval = interval
        self._last = 0.0
        self._pending: asyncio.TimerHandle | None = None
        self.flushes = 0

    def poke(self) -> None:
        """Something changed: draw now, or once the interval has passed."""
        if self._pending is not None:
            return
        wait = self._last + self.interval - time.monotonic()
        if wait <= 0:
            self._fire()
        else:
            self._pending = asyncio.get_running_loop().call_later(wait, self._fire)

    def _fire(self) -> None:
        self._pending = None
        self._last = time.monotonic()
        self.flushes += 1
        self._flush()

    def close(self) -> None:
        """Cancel a pending draw (the caller draws the final state itself)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


class LiveRenderer:
    """JupyterLab / Notebook 7 / VS Code: a live display and approval buttons."""

    interactive = True
    wants_partial = True
    holds_outputs = False

    def __init__(self) -> None:
        self.view = LiveView()
        self._handle: Any = None
        self._drawn = -1
        self.coalescer = Coalescer(self._draw)

    def start(self, prompt: str, notes: list[str]) -> None:
        for note in notes:
            self.view.items.append(["note", note])
        self._handle = display(self._bundle(), raw=True, display_id=True)

    def _bundle(self) -> dict[str, str]:
        """The live view, redacted: the notebook saves it if the kernel dies mid-run."""
        return {"text/markdown": redact_text(self.view.markdown()),
                "text/plain": redact_text(self.view.text())}

    def _draw(self) -> None:
        if self._handle is not None and self._drawn != self.view.version:
            self._drawn = self.view.version
            self._handle.update(self._bundle(), raw=True)

    def on_message(self, message: Message) -> None:
        self.view.apply(message)
        self.coalescer.poke()

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        from .approval_widgets import ask_with_buttons

        self.view.mark_asking(context.tool_use_id, True)
        self._draw()
        try:
            answer, _ = await ask_with_buttons(tool_name, tool_input, context)
            return answer
        finally:
            self.view.mark_asking(context.tool_use_id, False)
            self.coalescer.poke()

    async def confirm_replay(self, summary: str) -> bool:
        from .approval_widgets import ask_replay

        return await ask_replay(summary)

    def finish(self, final: FinalOutputs) -> None:
        """The live view, cards and decision lines give way to the final outputs, in the
        order a replay produces them (the transcript records every decision)."""
        self.coalescer.close()
        clear_output(wait=False)
        show_final(final, republish=True)


class HeadlessRenderer:
    """No one can click: nothing live, never waits, only the final outputs."""

    interactive = False
    wants_partial = False

    holds_outputs = True  # what tools show comes after the final display, as on replay

    def __init__(self) -> None:
        self.view = LiveView()

    def start(self, prompt: str, notes: list[str]) -> None:
        pass

    def on_message(self, message: Message) -> None:
        self.view.apply(message)

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        raise AssertionError("a headless run never asks")  # can_use_tool is not set

    async def confirm_replay(self, summary: str) -> bool:
        return False  # nobody can answer: headless replay needs an explicit request

    def finish(self, final: FinalOutputs) -> None:
        show_final(final, republish=True)


class TextRenderer:
    """Terminal IPython: prints as it streams and asks at the prompt."""

    interactive = True
    wants_partial = True
    holds_outputs = False

    def __init__(self, write: Callable[[str], Any] | None = None,
                 read: Callable[[str], str] = input) -> None:
        self.view = LiveView()
        self._write = write or sys.stdout.write
        self._read = read
        self._open_text = False

    def start(self, prompt: str, notes: list[str]) -> None:
        for note in notes:
            self._line(note)

    def on_message(self, message: Message) -> None:
        self.view.apply(message)
        if isinstance(message, StreamEvent):
            delta = message.event.get("delta") or {}
            if delta.get("type") == "text_delta":
                self._write(delta["text"])
                self._open_text = True
            return
        if isinstance(message, AssistantMessage) and isinstance(message.content[0],
                                                                ToolUseBlock):
            block = message.content[0]
            self._line(f"→ {block.name} {tool_summary(block.name, block.input)}")
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            card = self.view.cards.get(getattr(message.content[0], "tool_use_id", ""))
            if card is not None:
                first = (card.result or "").strip().splitlines()[:3]
                self._line(f"  {card.status}" + "".join(f"\n  │ {line}" for line in first))

    def _line(self, text: str) -> None:
        if self._open_text:
            self._write("\n")
            self._open_text = False
        self._write(text + "\n")

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        if tool_name == "AskUserQuestion":
            return self._questions(tool_input)
        detail = tool_input.get("command") or tool_input.get("code") or tool_input
        why = f" ({context.decision_reason})" if context.decision_reason else ""
        adds = always_adds(context)
        scope = f"\n  [a]lways adds {adds} for the rest of this session" if adds else ""
        self._line(f"? Allow {tool_name}{why}:\n{detail}{scope}")
        choices = "[y]es / [a]lways / [n]o" if adds else "[y]es / [n]o"
        reply = self._read(f"  {choices}: ").strip().lower()
        if reply in ("y", "yes"):
            return "allow", None, None
        if adds and reply in ("a", "always"):
            return "always", None, None
        reason = self._read("  reason (optional): ").strip() if reply else ""
        return "deny", reason or None, None

    def _questions(self, tool_input: dict[str, Any]) -> Answer:
        """Numbered options; a number (or several, comma-separated) or free text answers."""
        answers: dict[str, Any] = {}
        for question in tool_input.get("questions") or []:
            options = question.get("options", [])
            listing = "".join(f"\n  {n}. {o['label']} — {o['description']}"
                              for n, o in enumerate(options, 1))
            self._line(f"? {question['question']}{listing}")
            reply = self._read("  your choice: ").strip()
            if not reply:
                return "deny", "The user skipped the question.", None
            picked = [options[int(p) - 1]["label"] for p in reply.replace(" ", "").split(",")
                      if p.isdigit() and 0 < int(p) <= len(options)]
            chosen: Any = picked if question.get("multiSelect") else (picked or [reply])[0]
            answers[question["question"]] = chosen or reply
        return "allow", None, {**tool_input, "answers": answers}

    async def confirm_replay(self, summary: str) -> bool:
        self._line(summary.replace("**", "").replace("`", ""))
        return self._read("  Replay? [y]es / [n]o: ").strip().lower() in ("y", "yes")

    def finish(self, final: FinalOutputs) -> None:
        if self._open_text:
            self._write("\n")
        display(final.data, raw=True, metadata=final.metadata)
