"""The live view's model: what the run has shown so far, rendered to markdown or text.

It folds the message stream (text deltas, thinking, tool calls and results, the
result) into items and renders them on demand; renderers decide when (coalesced) and
which slice of the items each of their displays shows (a figure sits between two).
The model's text and thinking are redacted as they stream (`sessions/redact.StreamRedactor`:
each delta once, the possible start of a secret held back until the next delta or the
block's end), and a card redacts what it shows before cutting it to fit (a cut must not
leave the rest of a secret whose start it cut off); `markdown` and `text` pass every other
part through the renderer's redaction.
A running call's card shows its elapsed time and output so far (`progress`); an image it
returned shows as a thumbnail, numbered, so two figures are told apart. The run's own
task-list calls are one line per run of them, and the checklist they last showed stays
just above the status line, updated in place (`sessions/checklist.py`).
Pure Python: no IPython here, so it is cheap to test.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ....types import (
    AssistantMessage,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ...sessions.redact import StreamRedactor, redact_text, settled
from ...sessions.text.checklist import (
    TASK_TOOLS,
    TaskCalls,
    TaskStep,
    fold_task_steps,
    task_step,
    tasks_markdown,
    tasks_plain,
)
from ...sessions.text.markdown import escape_math, fence, open_fence, quote
from ...sessions.text.transcript import (
    OUTCOME_MARKS,
    builtin_kind,
    call_outcome,
    context_details,
    edit_diff,
    end_words,
    input_summary,
    turns_words,
)
from ...tools.task_list import ChecklistItem

__all__ = ["SPLIT_CHARS", "THUMBNAIL", "KindOf", "LiveView", "ToolCard", "boundary_line",
           "split_text", "tool_summary", "waiting_words"]

#: the most a streaming text or thinking item holds before the rest goes on in a new item
SPLIT_CHARS = 2_000
_FENCE_MARK = re.compile(r"(`{3,}|~{3,})")
_RESULT_PREVIEW_LINES = 20
_RESULT_PREVIEW_CHARS = 3000
#: a thumbnail's source in rendered markdown, replaced by the image only after redaction
#: (a secret pattern must never be looked for, or found, inside image bytes)
THUMBNAIL = "fuxi-thumbnail:"
#: a width (JupyterLab's `img { height: auto }` overrides a height attribute)
_THUMBNAIL_WIDTH = 96
#: redacted texts a card remembers (its result, code, diff and its last few outputs)
_CARD_KEPT = 8
#: how a part of the view is redacted before it is shown (the renderer's, remembered)
Redact = Callable[[str], str]


def _unchanged(text: str) -> str:
    return text


def tool_summary(name: str, tool_input: dict[str, Any], kind: str | None = None) -> str:
    """The most telling input field of a call, on one line (as the transcript shows it);
    `kind` is its tool's declared kind (None: the built-in tool's of that name)."""
    return input_summary(name, tool_input, kind)


#: (tool name) -> its declared kind, None if unknown (`Session.kind`)
KindOf = Callable[[str], "str | None"]


def waiting_words(kind: str | None) -> str:
    """What a card waits for: a question (an `ask` tool) for an answer, any other call
    for an approval."""
    return "waiting for your answer…" if kind == "ask" else "waiting for approval…"


def _images(content: Any) -> list[tuple[str, str]]:
    """(media type, base64 data) of the images of a tool result."""
    found = []
    for block in content if isinstance(content, list) else []:
        source = block.get("source") if isinstance(block, dict) else None
        if (block.get("type") == "image" and isinstance(source, dict)
                and source.get("type") == "base64" and isinstance(source.get("data"), str)):
            found.append((str(source.get("media_type") or "image/png"), source["data"]))
    return found


def _result_text(content: Any, first_figure: int) -> str:
    """The result's text; its images as `[Figure N]` (their thumbnails are in the header)."""
    if isinstance(content, str):
        return content
    parts, number = [], first_figure
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "image":
            parts.append(f"[Figure {number}]")
            number += 1
    return "\n".join(parts)


def _fold(text: str) -> tuple[str, int]:
    """The first lines of a long result and how many lines were left out."""
    lines = text.splitlines()
    shown = "\n".join(lines[:_RESULT_PREVIEW_LINES])[:_RESULT_PREVIEW_CHARS]
    return shown, max(0, len(lines) - _RESULT_PREVIEW_LINES)


def _diff(name: str, tool_input: dict[str, Any], redact: Redact) -> str | None:
    """The Edit/Write diff, as the transcript shows it (redacted, then cut for the live
    card)."""
    if name not in ("Edit", "Write") or not isinstance(tool_input.get("file_path"), str):
        return None
    return redact(edit_diff(name, tool_input))[:_RESULT_PREVIEW_CHARS] or None


def _fold_tail(text: str) -> tuple[str, int]:
    """The last lines of output so far (the newest is what tells progress)."""
    lines = text.splitlines()
    shown = "\n".join(lines[-_RESULT_PREVIEW_LINES:])[-_RESULT_PREVIEW_CHARS:]
    return shown, max(0, len(lines) - _RESULT_PREVIEW_LINES)


@dataclass
class ToolCard:
    """One tool call as the user sees it."""

    id: str
    name: str
    input: dict[str, Any]
    started: float = field(default_factory=time.monotonic)
    duration: float | None = None
    result: str | None = None
    is_error: bool = False
    decision: str | None = None
    progress: str = ""  # output so far while it runs
    running_for: float | None = None  # seconds, as of the last progress report
    first_figure: int = 1  # the number of its first image
    images: list[tuple[str, str]] = field(default_factory=list)
    thumbnails: list[str] = field(default_factory=list)  # THUMBNAIL keys of `images`
    parent: str | None = None  # the Agent call of the subagent that made this call
    kind: str | None = None  # its tool's declared kind
    denied_by: str | None = None  # who denied it: user | policy (None: nobody did)
    cut_short: bool = False  # the run was interrupted before the call had a result
    _redacted: dict[tuple[bool, str], str] = field(default_factory=dict, repr=False)

    def shown(self, text: str, *, running: bool = False) -> str:
        """`text` redacted (`running`: output still being written, without the end that
        could be the start of a secret), remembered: a card is drawn again and again."""
        key = (running, text)
        found = self._redacted.get(key)
        if found is None:
            if len(self._redacted) >= _CARD_KEPT:
                self._redacted.clear()
            found = self._redacted[key] = settled(text) if running else redact_text(text)
        return found

    @property
    def outcome(self) -> str | None:
        """How it ended (`sessions.transcript.call_outcome`), None while it runs."""
        if self.result is None:
            return "interrupted" if self.cut_short else None
        return call_outcome(is_error=self.is_error, result=self.result,
                            denied_by=self.denied_by, kind=self.kind)

    @property
    def task_step(self) -> TaskStep | None:
        """How a task-list call of the run itself shows, when it has not failed and is not
        waiting for approval (a subagent's list is its own: its calls stay cards)."""
        if self.name not in TASK_TOOLS or self.parent or self.is_error or self.decision:
            return None
        return task_step(self.name, self.input, self.result)

    @property
    def status(self) -> str:
        """`running · 3 s`, `waiting for approval…`, `✓ · 0.2 s`, `✗ failed · 1.0 s`,
        `✗ denied` (it never ran: no time), `✗ interrupted`."""
        outcome = self.outcome
        if outcome is None:
            if self.decision == "asking":
                return waiting_words(self.kind)
            elapsed = time.monotonic() - self.started
            return f"running · {elapsed:.0f} s" if elapsed >= 1 else "running…"
        mark = OUTCOME_MARKS[outcome]
        if outcome in ("denied", "skipped") or self.result is None:
            return mark
        return f"{mark} · {self.duration or 0:.1f} s"

    def markdown(self) -> str:
        """The card as markdown; the header is HTML because `<summary>` does not render
        markdown (a raw `**Write**` would show)."""
        summary = html.escape(tool_summary(self.name, self.input, self.kind))
        head = (f"<b>{html.escape(self.name)}</b> <code>{summary}</code> — "
                f"{html.escape(self.status)}")
        head += "".join(f' <img src="{key}" width="{_THUMBNAIL_WIDTH}" '
                        f'alt="Figure {n}" title="Figure {n}">'
                        for n, key in enumerate(self.thumbnails, self.first_figure))
        body = []
        diff = _diff(self.name, self.input, self.shown)
        if diff:
            body.append(fence(diff, "diff"))
        elif self.name == "Python" and isinstance(self.input.get("code"), str):
            body.append(fence(self.shown(self.input["code"])[:_RESULT_PREVIEW_CHARS], "python"))
        live = ""
        if self.result is not None:
            shown, more = _fold(self.shown(self.result))
            note = f"\n… ({more} more lines)" if more else ""
            body.append(fence(f"{shown}{note}"))
        elif self.progress:  # below the card, not in its collapsed body: seen as it comes
            shown, more = _fold_tail(self.shown(self.progress, running=True).rstrip("\n"))
            note = f"… ({more} lines before)\n" if more else ""
            live = f"\n\nOutput so far:\n\n{fence(f'{note}{shown}')}"
        inner = "\n\n".join(body)
        if not inner:
            return head + live
        return f"<details><summary>{head}</summary>\n\n{inner}\n\n</details>{live}"


@dataclass
class LiveView:
    """Items shown so far; `version` changes whenever there is something new to draw."""

    items: list[Any] = field(default_factory=list)
    cards: dict[str, ToolCard] = field(default_factory=dict)
    status: str = "starting…"
    version: int = 0
    result: ResultMessage | None = None
    live_status: Any = None  # () -> str while running (turns, tokens, cost so far)
    run_cost: Any = None  # () -> float | None: what this run cost (None: price unknown)
    figures: int = 0  # images shown in cards so far
    thumbnails: dict[str, tuple[str, str]] = field(default_factory=dict)
    checklist: tuple[ChecklistItem, ...] | None = None  # the last a task call showed
    #: the declared kind of a tool (`Session.kind`); None: the built-in tools' own
    kind_of: KindOf | None = None
    _streaming: dict[int, _Streaming] = field(default_factory=dict)

    def kind(self, tool_name: str) -> str | None:
        """The declared kind of `tool_name`, as the session took it."""
        declared = self.kind_of(tool_name) if self.kind_of is not None else None
        return declared or builtin_kind(tool_name)

    def apply(self, message: Message) -> None:
        """Fold one message in."""
        if isinstance(message, StreamEvent):
            self._stream(message.event)
        elif isinstance(message, AssistantMessage):
            self._assistant(message)
        elif isinstance(message, UserMessage):
            self._tool_results(message)
        elif isinstance(message, ResultMessage):
            self.result = message
            self._ended(message)
            self.status = self._result_status(message)
        elif isinstance(message, SystemMessage) and message.subtype == "informational":
            self.items.append(["note", str(message.data.get("content", ""))])
        elif isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
            self.items.append(["note", boundary_line(message)])
        self.version += 1

    def _stream(self, event: dict[str, Any]) -> None:
        """Text and thinking as they stream, redacted (a block cut off before its end
        never shows the end it held back)."""
        kind = event.get("type")
        if kind == "message_start":
            self._streaming = {}
        elif kind == "content_block_start":
            block = event["content_block"]
            if block.get("type") in ("text", "thinking"):
                self._streaming[event["index"]] = _Streaming(block["type"], self.items)
        elif kind == "content_block_delta":
            growing = self._streaming.get(event["index"])
            delta = event["delta"]
            if growing is not None:
                growing.add(str(delta.get("text", "") or delta.get("thinking", "")))
        elif kind == "content_block_stop" and event.get("index") in self._streaming:
            self._streaming[event["index"]].end()

    def _assistant(self, message: AssistantMessage) -> None:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                card = ToolCard(block.id, block.name, block.input,
                                parent=message.parent_tool_use_id, kind=self.kind(block.name))
                self.cards[block.id] = card
                self.items.append(["tool", card])
            elif isinstance(block, TextBlock) and not self._streamed("text", block.text):
                self.items.append(["text", redact_text(block.text)])
            elif isinstance(block, ThinkingBlock) and not self._streamed("thinking",
                                                                         block.thinking):
                self.items.append(["thinking", redact_text(block.thinking)])
        for streaming in self._streaming.values():
            streaming.end()  # the message is whole: nothing more of it will come

    def _streamed(self, kind: str, text: str) -> bool:
        return any(s.kind == kind and s.raw == text for s in self._streaming.values())

    def _tool_results(self, message: UserMessage) -> None:
        for block in message.content if isinstance(message.content, list) else []:
            if isinstance(block, ToolResultBlock) and block.tool_use_id in self.cards:
                card = self.cards[block.tool_use_id]
                card.first_figure = self.figures + 1
                card.images = _images(block.content)
                card.thumbnails = []
                for image in card.images:
                    self.figures += 1
                    key = f"{THUMBNAIL}{len(self.thumbnails)}"
                    self.thumbnails[key] = image
                    card.thumbnails.append(key)
                card.result = _result_text(block.content, card.first_figure)
                card.is_error = bool(block.is_error)
                card.duration = time.monotonic() - card.started
                step = card.task_step
                if step is not None and step.checklist is not None:
                    self.checklist = step.checklist

    def progress(self, tool_use_id: str, output: str) -> None:
        """A running call's output so far."""
        card = self.cards.get(tool_use_id)
        if card is not None and card.result is None:
            card.progress = output
            self.version += 1

    def settled(self, index: int) -> bool:
        """Whether item `index` shows as it will stay, so a renderer need not draw it
        again: a text or thinking item that no longer grows, a call that ended and waits
        for nobody, a note."""
        kind, value = self.items[index]
        if kind == "tool":
            return bool(value.outcome is not None and value.decision is None)
        if kind in ("text", "thinking", "more-thinking"):
            item = self.items[index]
            return not any(s.item is item and not s.ended for s in self._streaming.values())
        return True

    def card_index(self, tool_use_id: str) -> int | None:
        """Where a call's card is among the items."""
        card = self.cards.get(tool_use_id)
        return next((i for i, (kind, value) in enumerate(self.items)
                     if kind == "tool" and value is card), None) if card else None

    def mark_asking(self, tool_use_id: str | None, asking: bool) -> None:
        card = self.cards.get(tool_use_id or "")
        if card is not None:
            card.decision = "asking" if asking else None
            card.started = time.monotonic()
            self.version += 1

    def mark_decided(self, tool_use_id: str | None, verdict: str) -> None:
        """The user answered a call's card: a denial shows as one ("✗ denied", not as a
        call that ran and failed)."""
        card = self.cards.get(tool_use_id or "")
        if card is not None and verdict == "deny":
            card.denied_by = "user"
            self.version += 1

    def _ended(self, result: ResultMessage) -> None:
        """The run's end tells what the cards could not: which calls a rule or the policy
        denied, and which an interrupt cut short (they never got a result)."""
        for denial in result.permission_denials or []:
            card = self.cards.get(str(denial.get("tool_use_id", "")))
            if card is not None and card.denied_by is None:
                card.denied_by = "policy"
        if (result.terminal_reason or "").startswith("aborted"):
            for card in self.cards.values():
                card.cut_short = card.result is None

    def _result_status(self, result: ResultMessage) -> str:
        """The final status line: turns, how it ended, tokens, cost and time (`spend`)."""
        from .spend import spend_words

        word = "Stopped" if result.is_error else "Done"
        turns = turns_words(result.subtype, result.num_turns)
        if self.run_cost is not None:  # this run's own cost (None: a price is unknown)
            cost = self.run_cost()
        else:  # the result's total, unless a model of it has no known price
            unpriced = any(isinstance(entry, dict) and entry.get("costUSD") is None
                           for entry in (result.model_usage or {}).values())
            cost = None if unpriced else result.total_cost_usd
        spent = spend_words(result.usage or {}, cost, result.duration_ms)
        return " · ".join(part for part in (f"{word} after {turns}", end_words(result.subtype),
                                            spent) if part)

    def markdown(self, start: int = 0, end: int | None = None, *, status: bool = True,
                 redact: Redact = _unchanged) -> str:
        """Items `start:end` as markdown (JupyterLab renders `<details>` as collapsibles),
        with the status line if `status`. Thumbnails are `THUMBNAIL` keys (see
        `with_thumbnails`). Text and thinking are redacted already; `redact` is applied to
        every other part."""
        parts = []
        for kind, value in self._shown(start, end):
            if kind == "tasks":
                parts.append(redact(tasks_markdown(value)))
            elif kind == "text" and value:
                parts.append(escape_math(value))
            elif kind in ("thinking", "more-thinking") and value:
                title = "Thinking" if kind == "thinking" else "Thinking (continued)"
                parts.append(f"<details><summary>{title}</summary>\n\n"
                             f"{escape_math(value)}\n\n</details>")
            elif kind == "tool":
                parts.append(redact(value.markdown()))
            elif kind == "note":
                parts.append(redact(quote(escape_math(value))))
            elif kind == "context":
                parts.append(redact(context_details(value)))
        if status and self.checklist:
            parts.append(redact(tasks_markdown(TaskCalls((), self.checklist))))
        if status:
            parts.append(redact(f"*{escape_math(self._status_line())}*"))
        return "\n\n".join(parts)

    def _shown(self, start: int, end: int | None) -> list[tuple[str, Any]]:
        """Items `start:end`, the run's consecutive task-list calls as one `tasks` item."""
        items = [("task", step) if kind == "tool" and (step := value.task_step) is not None
                 else (kind, value) for kind, value in self.items[start:end]]
        return fold_task_steps(items, attach=False)

    def with_thumbnails(self, markdown: str) -> str:
        """The thumbnail keys in `markdown` replaced by the images, as data URIs."""
        for key, (media_type, data) in self.thumbnails.items():
            if key in markdown:
                markdown = markdown.replace(f'"{key}"', f'"data:{media_type};base64,{data}"')
        return markdown

    def _status_line(self) -> str:
        if self.result is None and self.live_status is not None:
            return str(self.live_status())
        return self.status

    def text(self, start: int = 0, end: int | None = None, *, status: bool = True,
             redact: Redact = _unchanged) -> str:
        """Items `start:end` as plain text (`redact` as for `markdown`)."""
        parts = []
        for kind, value in self._shown(start, end):
            if kind == "tasks":
                parts.append(redact(tasks_plain(value)))
            elif kind == "tool":
                shown = value.shown(value.result) if value.result else ""
                result = f"\n  {shown[:500]}" if shown else ""
                summary = tool_summary(value.name, value.input, value.kind)
                parts.append(redact(f"[{value.name}] {summary} ({value.status}){result}"))
            elif kind == "more-thinking":
                continue  # the plain text shows a thinking block's start only
            elif kind in ("text", "thinking"):
                if value:
                    parts.append(value if kind == "text" else f"(thinking) {value[:200]}")
            elif value:
                parts.append(redact(str(value)))
        if status and self.checklist:
            parts.append(redact(tasks_plain(TaskCalls((), self.checklist))))
        if status:
            parts.append(redact(f"[{self._status_line()}]"))
        return "\n".join(parts)


class _Streaming:
    """A text or thinking block as it streams: what arrived, and the items that show it
    (redacted, without the end that could still be the start of a secret).

    A long block is shown as several items of at most about `SPLIT_CHARS` each: the item
    that grows is cut where a paragraph ends (else a line, else a word; a code block cut
    in two is closed and reopened), its head stays as a finished item and the rest goes
    on in a new one. So adding a piece costs what the growing item holds, not the whole
    block, and a renderer can keep what is finished as it is (`LiveView.settled`). An item
    is only split while it is the view's last (a note that came in between is left where
    it is)."""

    def __init__(self, kind: str, items: list[Any]) -> None:
        self.kind = kind
        self.item: list[Any] = [kind, ""]
        self.ended = False
        self._items = items
        self._pieces: list[str] = []
        self._redactor = StreamRedactor()
        items.append(self.item)

    @property
    def raw(self) -> str:
        """The block's text as it arrived."""
        return "".join(self._pieces)

    def add(self, piece: str) -> None:
        self._pieces.append(piece)
        self._grow(self._redactor.feed(piece))

    def end(self) -> None:
        self._grow(self._redactor.flush())
        self.ended = True

    def _grow(self, shown: str) -> None:
        if not shown:
            return
        self.item[1] += shown
        while len(self.item[1]) > SPLIT_CHARS and self._items and self._items[-1] is self.item:
            head, rest = split_text(self.item[1])
            self.item[1] = head
            self.item = ["more-thinking" if self.kind == "thinking" else self.kind, rest]
            self._items.append(self.item)


def split_text(text: str, size: int = SPLIT_CHARS) -> tuple[str, str]:
    """`text` cut in two near `size` (the head at least half of it): where a paragraph
    ends, else a line, else a word, else anywhere; a fenced code block open at the cut is
    closed in the head and reopened in the rest, so each renders on its own."""
    low = size // 2
    for mark in ("\n\n", "\n", " "):
        cut = text.rfind(mark, low, size)
        if cut >= low:
            head, rest = text[:cut], text[cut + len(mark):]
            break
    else:
        head, rest = text[:size], text[size:]
    opener = open_fence(head)
    if opener is not None:
        marks = _FENCE_MARK.match(opener)
        head += "\n" + (marks.group(1) if marks else "```")
        rest = f"{opener}\n{rest}"
    return head, rest


def boundary_line(message: SystemMessage) -> str:
    """The one line a `compact_boundary` message is shown as."""
    from types import SimpleNamespace

    from ...sessions.text.transcript import compaction_line

    meta = message.data.get("compact_metadata") or {}
    return compaction_line(SimpleNamespace(trigger=meta.get("trigger", "auto"),
                                           pre_tokens=int(meta.get("pre_tokens") or 0),
                                           post_tokens=int(meta.get("post_tokens") or 0)))
