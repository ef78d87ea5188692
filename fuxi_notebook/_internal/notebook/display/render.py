"""Renderers: how a `%%fuxi` run shows up in JupyterLab, a terminal, or a headless run.

- `LiveRenderer` (a frontend that can click): the live markdown view, updated at most ~20
  times a second; approval cards with buttons (`approval_widgets`). When something of a
  call is about to appear in the cell (its approval card, a figure it drew), the view's
  display ends after that call's card and a new display continues below it, so cards,
  decision lines and figures stay in order next to their call.
- `TextRenderer` (terminal IPython): prints as it streams; asks y/n/a at the prompt. A
  task-list change is one line (`tasks: 1/3 done · ◐ Fit model`), not a call and a result.
- `HeadlessRenderer` (nbclient, papermill, `jupyter execute`): shows nothing live and
  never waits; only the final outputs, so re-runs produce exactly the same cells.
Every renderer ends with the same final outputs, in the same order (`show_final`): the
transcript in segments, each followed by what the call it ends with showed; the last
segment holds the session record.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from IPython.display import clear_output, display

from ....options import ToolPermissionContext
from ....types import (
    AssistantMessage,
    Message,
    StreamEvent,
    SystemMessage,
    ToolUseBlock,
    UserMessage,
)
from ...common.visible import reveal
from ...sessions.redact import StreamRedactor, redact, redact_text
from ...sessions.text.call_fields import call_fields, fields_text, hidden_warning
from ...tools.task_list import CHANGING_TOOLS, TASK_TOOLS, progress_line
from ..cell.cellrun import FinalOutputs
from .answers import Answer, always_adds
from .view import KindOf, LiveView, ToolCard, boundary_line, tool_summary

if TYPE_CHECKING:
    from ..replay.consent import ReplayConsent

__all__ = ["Answer", "Coalescer", "HeadlessRenderer", "LiveRenderer", "Renderer", "TextRenderer",
           "always_adds"]

UPDATE_INTERVAL = 0.05  # seconds: at most ~20 updates a second reach the browser
ELAPSED_INTERVAL = 1.0  # seconds between redraws of a running call's elapsed time
THREAD_DRAW_INTERVAL = 0.25  # seconds between draws from the Python tool's progress thread
#: settled characters after which the last display ends and a new one continues below it
FREEZE_CHARS = 3_000
_REDACTED_KEPT = 5_000  # redacted paragraphs remembered by a live view


class Renderer(Protocol):
    """What the controller needs from a renderer."""

    interactive: bool
    wants_partial: bool
    holds_outputs: bool
    view: LiveView
    cwd: Path | None  # the session's working directory: cards resolve paths against it
    #: the declared kind of a tool (the session's `kind`): a question (`ask`) waits for an
    #: answer, anything else for an approval. Unset: the built-in tools' declarations.
    kind_of: KindOf | None

    def start(self, prompt: str, notes: list[str]) -> None: ...

    def on_message(self, message: Message) -> None: ...

    def output_coming(self, call: str | None) -> None: ...

    def progress(self, call: str, output: str, elapsed: float) -> None: ...

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer: ...

    async def confirm_replay(self, consent: ReplayConsent) -> bool: ...

    async def confirm_trust(self, summary: str) -> bool: ...

    def finish(self, final: FinalOutputs) -> None: ...

    def close(self) -> None: ...


class _Kinds:
    """`kind_of` of a renderer: kept by its view, which names each card's kind."""

    view: LiveView

    @property
    def kind_of(self) -> KindOf | None:
        return self.view.kind_of

    @kind_of.setter
    def kind_of(self, kind_of: KindOf | None) -> None:
        self.view.kind_of = kind_of


def show_final(final: FinalOutputs, *, republish: bool) -> None:
    """The transcript segments, each followed (after a clear) by the outputs of the call
    it ends with; outputs of no call in the transcript come before the last segment."""
    published = final.published if republish else None
    following = {of for _, _, of in final.segments if of}
    last = len(final.segments) - 1
    for index, (data, metadata, of) in enumerate(final.segments):
        if published is not None and index == last:
            published.publish([o for o in published.outputs if o["call"] not in following])
        if index == last and final.display_id is not None:
            display(data, raw=True, metadata=metadata, display_id=final.display_id)
        else:
            display(data, raw=True, metadata=metadata)
        if published is not None and of:
            published.publish(published.of(of))


class Coalescer:
    """Calls `flush` at most once per `interval`, and always for the latest state."""

    def __init__(self, flush: Callable[[], None], interval: float = UPDATE_INTERVAL) -> None:
        self._flush = flush
        self.interval = interval
        self._last = 0.0
        self._pending: asyncio.TimerHandle | None = None
        self.flushes = 0

    def poke(self) -> None:
        """Something changed: draw now, or once the interval has passed. A draw that is
        overdue (the event loop is held by synchronous code, e.g. a print loop in a
        Python call) happens now."""
        now = time.monotonic()
        if self._pending is not None:
            if now < self._last + self.interval * 2:
                return
            self._pending.cancel()
            self._pending = None
        wait = self._last + self.interval - now
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


@dataclass
class _Display:
    """One display of the live view: items `start:end` (`end` None: still growing);
    `final` once it was drawn with every item settled (it is never drawn again)."""

    start: int
    end: int | None = None
    handle: Any = None
    drawn: tuple[str, str] | None = None
    final: bool = False


def _size(item: list[Any]) -> int:
    """About how many characters an item of the view shows (a card: its result's
    preview and its header)."""
    kind, value = item
    if kind == "tool":
        return 200 + min(len(value.result or ""), 3_000)
    return len(value) if isinstance(value, str) else 200


class LiveRenderer(_Kinds):
    """JupyterLab / Notebook 7 / VS Code: a live display and approval buttons.

    The view is shown in one or more displays: when something of a call is about to
    appear in the cell (`output_coming`: its approval card, a figure it drew), the last
    display ends after that call's card, and the items that follow go into a new display
    below it. The status line is on the last display, so no display is ever empty.
    """

    interactive = True
    wants_partial = True
    holds_outputs = False

    def __init__(self) -> None:
        self.view = LiveView()
        self.displays = [_Display(0)]
        self.coalescer = Coalescer(self._draw)
        self._lock = threading.RLock()  # progress may be reported from another thread
        self._loop_thread = threading.get_ident()
        self._ticker: asyncio.Task[None] | None = None
        self.cwd: Path | None = None  # the session's, for the paths cards show
        self._publisher: Any = None
        self._thread_drawn = 0.0
        self._redacted: dict[str, str] = {}
        self._loop_seen = time.monotonic()  # when the loop last ran the ticker
        self._stop = threading.Event()

    def start(self, prompt: str, notes: list[str]) -> None:
        from IPython import get_ipython

        for note in notes:
            self.view.items.append(["note", note])
        # the view's own displays bypass whatever stands in for the publisher later (the
        # Python tool captures what user code shows; the cell notes what tools show)
        shell = get_ipython()
        self._publisher = shell.display_pub if shell is not None else None
        self._draw()
        with contextlib.suppress(RuntimeError):  # no running loop: no elapsed-time ticks
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
            threading.Thread(target=self._watch, name="fuxi-elapsed", daemon=True).start()

    def _running(self) -> bool:
        return any(card.result is None for card in self.view.cards.values())

    async def _tick(self) -> None:
        """Redraw while calls run, so their elapsed time moves without new messages."""
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                self._loop_seen = time.monotonic()
                await asyncio.sleep(ELAPSED_INTERVAL)
                self._loop_seen = time.monotonic()
                if self._running():
                    self.coalescer.poke()

    def _watch(self) -> None:
        """While synchronous code holds the loop (a Python call that prints nothing), the
        ticker cannot run: redraw from this thread (ipykernel routes the update to the
        running cell), so the elapsed time still moves. Ends with the run."""
        while not self._stop.wait(ELAPSED_INTERVAL):
            if self._ticker is None or self._ticker.done():
                return
            held = time.monotonic() - self._loop_seen > ELAPSED_INTERVAL * 1.5
            if held and self._running():
                with self._lock, contextlib.suppress(Exception):  # never the run's problem
                    self._draw()

    def _bundle(self, shown: _Display) -> tuple[str, str]:
        """(markdown, text) of one display, redacted: the notebook saves it if the kernel
        dies mid-run. The model's text is redacted once, as it streams (the view's); every
        other part here. Thumbnails are put in after redaction (images are not text)."""
        status = shown is self.displays[-1]
        return (self.view.markdown(shown.start, shown.end, status=status, redact=self._redact),
                self.view.text(shown.start, shown.end, status=status, redact=self._redact))

    def _redact(self, text: str) -> str:
        """`redact_text`, paragraph by paragraph, remembering paragraphs already done: a
        draw redacts what changed, not the whole growing view (no secret pattern spans a
        blank line, so the result is the same)."""
        done = []
        for paragraph in text.split("\n\n"):
            redacted = self._redacted.get(paragraph)
            if redacted is None:
                if len(self._redacted) > _REDACTED_KEPT:
                    self._redacted.clear()
                redacted = self._redacted[paragraph] = redact_text(paragraph)
            done.append(redacted)
        return "\n\n".join(done)

    def _show(self, shown: _Display) -> None:
        bundle = self._bundle(shown)
        if bundle == shown.drawn:
            return
        data = {"text/markdown": self.view.with_thumbnails(bundle[0]), "text/plain": bundle[1]}
        if self._publisher is None:  # no shell (benchmarks): IPython's own display
            if shown.handle is None:
                shown.handle = display(data, raw=True, display_id=True)
            else:
                shown.handle.update(data, raw=True)
        else:
            update = shown.handle is not None
            shown.handle = shown.handle or uuid.uuid4().hex
            self._publisher.publish(data=data, metadata={},
                                    transient={"display_id": shown.handle}, update=update)
        shown.drawn = bundle

    def _draw(self) -> None:
        """Every display that can still change, as it is now: a display whose items all
        settled is drawn a last time and then left alone, so a draw costs (and sends) what
        is still live, not everything shown since the run began."""
        with self._lock:
            last = self.displays[-1]
            if last.end is not None and len(self.view.items) > last.end:
                self.displays.append(_Display(last.end))  # below what was shown under it
            self._freeze()
            for shown in self.displays:
                if shown.final:
                    continue
                done = shown.end is not None and all(
                    self.view.settled(index) for index in range(shown.start, shown.end))
                self._show(shown)
                shown.final = done

    def _freeze(self) -> None:
        """End the last display once `FREEZE_CHARS` of what it shows settled (finished
        text, ended calls), so what it shows stays bounded however long the run: the rest
        continues in a new display below it."""
        items = self.view.items
        last = self.displays[-1]
        size, index = 0, last.start
        while last.end is None and index < len(items) and self.view.settled(index):
            size += _size(items[index])
            index += 1
            if size >= FREEZE_CHARS:
                last.end = index
                last = _Display(index)
                self.displays.append(last)
                size = 0

    def on_message(self, message: Message) -> None:
        with self._lock:
            self.view.apply(message)
        self.coalescer.poke()

    def output_coming(self, call: str | None) -> None:
        """Something of `call` is about to appear below the view: end the last display
        after that call's card (or after everything, if the card is further up)."""
        with self._lock:
            self._draw()  # every item so far is on screen, above the output
            last = self.displays[-1]
            if last.end is None:
                index = self.view.card_index(call) if call else None
                last.end = (index + 1 if index is not None and index >= last.start
                            else len(self.view.items))
                self._show(last)  # what follows the card goes below the output

    def progress(self, call: str, output: str, elapsed: float) -> None:
        """A running call's output so far, from the tool: on the loop's thread (Bash), or
        from the Python tool's reporting thread while user code holds the loop, which
        then draws itself (ipykernel routes it to the running cell), a few times a second."""
        with self._lock:
            self.view.progress(call, output)
            if threading.get_ident() == self._loop_thread:
                self.coalescer.poke()
            elif time.monotonic() - self._thread_drawn >= THREAD_DRAW_INTERVAL:
                self._thread_drawn = time.monotonic()
                self._draw()

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        from .approval_widgets import ask_with_buttons

        self.view.mark_asking(context.tool_use_id, True)
        self.output_coming(context.tool_use_id)  # the card goes right below its call
        try:
            answer, _ = await ask_with_buttons(tool_name, tool_input, context, self.cwd,
                                               kind=self.view.kind(tool_name))
            self.view.mark_decided(context.tool_use_id, answer[0])
            return answer
        finally:
            self.view.mark_asking(context.tool_use_id, False)
            self.coalescer.poke()

    async def confirm_replay(self, consent: ReplayConsent) -> bool:
        from .approval_widgets import ask_replay

        return await ask_replay(consent.markdown)

    async def confirm_trust(self, summary: str) -> bool:
        from .approval_widgets import ask_trust

        return await ask_trust(summary)

    def finish(self, final: FinalOutputs) -> None:
        """The live view, cards and decision lines give way to the final outputs, in the
        order a replay produces them (the transcript records every decision)."""
        self.close()
        clear_output(wait=True)  # cleared as the first final output arrives: no moment
        show_final(final, republish=True)  # without the record (see controller)

    def close(self) -> None:
        """Nothing live any more: no pending draw, no ticker, no watch thread."""
        self.coalescer.close()
        self._stop.set()
        if self._ticker is not None:
            self._ticker.cancel()


class HeadlessRenderer(_Kinds):
    """No one can click: nothing live, never waits, only the final outputs."""

    interactive = False
    wants_partial = False
    cwd: Path | None = None

    holds_outputs = True  # what tools show comes after the final display, as on replay

    def __init__(self) -> None:
        self.view = LiveView()

    def start(self, prompt: str, notes: list[str]) -> None:
        pass

    def on_message(self, message: Message) -> None:
        self.view.apply(message)

    def output_coming(self, call: str | None) -> None:
        pass  # outputs are held until the final outputs

    def progress(self, call: str, output: str, elapsed: float) -> None:
        pass  # nothing live

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        raise AssertionError("a headless run never asks")  # can_use_tool is not set

    async def confirm_replay(self, consent: ReplayConsent) -> bool:
        return False  # nobody can answer: headless replay needs an explicit request

    async def confirm_trust(self, summary: str) -> bool:
        return False  # nobody can answer: a headless run never trusts a folder

    def finish(self, final: FinalOutputs) -> None:
        show_final(final, republish=True)

    def close(self) -> None:
        pass  # nothing live


class TextRenderer(_Kinds):
    """Terminal IPython: prints as it streams and asks at the prompt.

    No kernel stands between it and the terminal, so it redacts what it prints itself:
    the model's text as it streams through a `StreamRedactor` a block (as the live view's),
    flushed when the block or the run ends or a line comes; every line whole. A question
    shows the call's whole input, every field, revealed and redacted, and what it does
    beyond its input (`context.shown`), in the consent card's text form
    (`sessions/text/call_fields.py`).
    """

    interactive = True
    wants_partial = True
    holds_outputs = False
    cwd: Path | None = None

    def __init__(self, write: Callable[[str], Any] | None = None,
                 read: Callable[[str], str] = input) -> None:
        self.view = LiveView()
        self._write = write or sys.stdout.write
        self._read = read
        self._open_text = False
        self._streams: dict[int, StreamRedactor] = {}  # a text block's, by its index

    def start(self, prompt: str, notes: list[str]) -> None:
        for note in notes:
            self._line(note)

    def on_message(self, message: Message) -> None:
        self.view.apply(message)
        if isinstance(message, StreamEvent):
            self._streamed(message.event)
            return
        if isinstance(message, AssistantMessage):
            self._flush()  # the message is whole: nothing more of its text will come
            self._streams.clear()
        if isinstance(message, AssistantMessage) and isinstance(message.content[0],
                                                                ToolUseBlock):
            block = message.content[0]
            if block.name not in TASK_TOOLS or message.parent_tool_use_id:  # see _result
                summary = tool_summary(block.name, block.input, self.view.kind(block.name))
                self._line(f"→ {block.name} {summary}")
        elif isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            self._line(f"— {boundary_line(message)} —")
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            card = self.view.cards.get(getattr(message.content[0], "tool_use_id", ""))
            if card is not None:
                self._result(card)

    def _streamed(self, event: dict[str, Any]) -> None:
        """A text delta, printed redacted (its end held while it could become a secret);
        a block's end prints what its block held."""
        kind, index = event.get("type"), event.get("index", 0)
        delta = event.get("delta") or {}
        if kind == "content_block_delta" and delta.get("type") == "text_delta":
            self._text(self._streams.setdefault(index, StreamRedactor()).feed(
                str(delta.get("text", ""))))
        elif kind == "content_block_stop" and index in self._streams:
            self._text(self._streams.pop(index).flush())

    def _text(self, text: str) -> None:
        if text:
            self._write(text)
            self._open_text = True

    def _flush(self) -> None:
        """Print what every text block holds back (a line comes, or the run ends); each
        block's redactor stays until the block ends, so the rest of a secret whose start
        was printed is still replaced."""
        for redactor in self._streams.values():
            self._text(redactor.flush())

    def _result(self, card: ToolCard) -> None:
        """A call's status and first lines; a task-list call of the run's own, which
        printed no line when called, prints one line if it changed the list, its call
        and result if it failed, nothing if it only read the list."""
        own_task = card.name in TASK_TOOLS and not card.parent
        step = card.task_step
        if own_task and step is not None:
            if card.name in CHANGING_TOOLS and step.checklist is not None:
                self._line(progress_line(list(step.checklist)))
            return
        if own_task:
            self._line(f"→ {card.name} {tool_summary(card.name, card.input, card.kind)}")
        shown = card.shown(card.result) if card.result else ""  # redacted whole, then cut
        first = shown.strip().splitlines()[:3]
        self._line(f"  {card.status}" + "".join(f"\n  │ {line}" for line in first))

    def output_coming(self, call: str | None) -> None:
        pass  # a terminal shows outputs as they come

    def progress(self, call: str, output: str, elapsed: float) -> None:
        pass  # the terminal shows the result when the call ends

    def _line(self, text: str) -> None:
        """`text` on lines of its own, redacted (after what the text blocks held)."""
        self._flush()
        if self._open_text:
            self._write("\n")
            self._open_text = False
        self._write(redact_text(text) + "\n")

    async def ask(self, tool_name: str, tool_input: dict[str, Any],
                  context: ToolPermissionContext) -> Answer:
        answer = self._ask(tool_name, tool_input, context)
        self.view.mark_decided(context.tool_use_id, answer[0])
        return answer

    def _ask(self, tool_name: str, tool_input: dict[str, Any],
             context: ToolPermissionContext) -> Answer:
        if self.view.kind(tool_name) == "ask" and isinstance(tool_input.get("questions"), list):
            return self._questions(tool_input)
        adds = always_adds(context)
        self._line(_question(tool_name, tool_input, context, adds))
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

    async def confirm_replay(self, consent: ReplayConsent) -> bool:
        self._line(consent.text)  # the card's content as text: every call, revealed
        return self._read("  Replay? [y]es / [n]o: ").strip().lower() in ("y", "yes")

    async def confirm_trust(self, summary: str) -> bool:
        self._line(summary.replace("**", "").replace("`", ""))
        return self._read("  Trust this folder? [y]es / [n]o: ").strip().lower() in (
            "y", "yes")

    def finish(self, final: FinalOutputs) -> None:
        self._flush()
        if self._open_text:
            self._write("\n")
        final.display_id = None  # a terminal cannot update what it printed
        show_final(final, republish=False)  # what the tools showed is already on screen

    def close(self) -> None:
        pass  # it prints as it goes


def _question(tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext,
              adds: str) -> str:
    """The terminal's approval question: the call's whole input and what it does beyond
    it, every field, redacted, then revealed (as the consent card's text shows a call)."""
    safe = redact(dict(tool_input))
    beyond = {str(k): str(v) for k, v in redact(dict(context.shown or {})).items()}
    fields = call_fields(safe, beyond)
    name = reveal(tool_name).text
    reason = reveal(redact_text(context.decision_reason)).text if context.decision_reason else ""
    rules = reveal(redact_text(adds)).text
    warning = hidden_warning([tool_name, reason, rules], fields)
    lines = [f"? Allow {name}{f' ({reason})' if reason else ''}:"]
    lines += [f"     ! this input {warning}"] if warning else []
    lines += fields_text(fields) or ["     (no input)"]
    if rules:
        lines.append(f"  [a]lways adds {rules} for the rest of this session")
    return "\n".join(lines)
