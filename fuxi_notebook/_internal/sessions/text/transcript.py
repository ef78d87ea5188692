"""A readable transcript of a session record, as markdown or plain text.

This is what a `%%fuxi` cell leaves visible once the live widgets are gone, and what nbval
compares, so it is built from the record alone and holds nothing that changes between runs
(no costs, no timings). Both renderings come from the same list of parts, so they always
say the same thing; only the syntax differs.

In markdown each tool call is one folded line (its input, diff and whole result one click
away), so a modest request takes a screen. A cell that showed outputs (a figure, a
`display(df)`) is cut into segments after each call that showed them, so the outputs sit
right after the card of the call that made them (`transcript_segments`). Successful calls
of the task-list tools are one line each run of them, and the final checklist follows the
last of them (`checklist.py`).
"""

from __future__ import annotations

import difflib
import functools
import html
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ....types import TextBlock, ThinkingBlock, ToolUseBlock, block_from_wire
from ...common.reminders import REMINDER_CLOSE, REMINDER_OPEN
from ...common.rule_lists import split_rules
from ..record import OUTPUT_REF, ApprovalRecord, CellCall, ResultSummary, SessionRecord
from ..redact import redact_text, redacted_head
from .cell_calls import cell_call
from .checklist import TASK_TOOLS, fold_task_steps, task_step, tasks_markdown, tasks_plain
from .markdown import escape_math, fence, quote

__all__ = ["CONTEXT_TITLE", "END_WORDS", "OUTCOME_MARKS", "Segment", "builtin_kind",
           "call_outcome", "compaction_line", "context_details", "edit_diff", "end_words",
           "input_summary", "interrupted_result", "render_transcript", "render_transcript_text",
           "result_text", "transcript_segments", "turns_taken", "turns_words"]

#: Input fields that say most about a call, best first.
_TELLING_FIELDS = ("command", "file_path", "notebook_path", "pattern", "code", "url", "query",
                   "path", "name", "description", "prompt")
_LANGS = {"command": "bash", "code": "python"}
_SUMMARY_CHARS = 120
#: how the notebook introduces the kernel context it sends with a prompt
CONTEXT_TITLE = "Kernel context (what the user's notebook holds now):"


#: How a call ended, as the live card, the markdown and the plain transcript all say it
#: ("skipped": a question (an `ask` tool) the user did not answer).
OUTCOME_MARKS = {"ok": "✓", "failed": "✗ failed", "denied": "✗ denied", "skipped": "✗ skipped",
                 "interrupted": "✗ interrupted"}
#: How the result of a call cut short begins (`agent/tool_calls.py`: `interrupted_results`,
#: and the calls left after an interrupting denial)
_INTERRUPTED = ("Not executed: interrupted by the user", "Interrupted by the user after ",
                "Not executed: the run was interrupted")


def interrupted_result(text: str | None) -> bool:
    """Whether a call's (error) result says an interrupt cut it short."""
    return isinstance(text, str) and text.lstrip().startswith(_INTERRUPTED)


def call_outcome(*, is_error: bool, result: str | None, denied_by: str | None = None,
                 kind: str | None = None) -> str:
    """How a call ended: ok | failed | denied | skipped | interrupted (`OUTCOME_MARKS`).
    `denied_by` is who denied it (user, rule, policy, replay), None if nobody did; `kind`
    its tool's declared kind (a question the user denied was skipped)."""
    if denied_by is not None:
        return "skipped" if kind == "ask" and denied_by == "user" else "denied"
    if is_error and interrupted_result(result):
        return "interrupted"
    return "failed" if is_error else "ok"


def builtin_kind(name: str) -> str | None:
    """The kind the built-in tool called `name` declares (None: no such built-in tool):
    what a record from before `kinds` existed, or a renderer told nothing, goes by."""
    return _builtin_kinds().get(name)


@functools.cache
def _builtin_kinds() -> dict[str, str]:
    """Read once (no module global is rebound: the policy guard watches them)."""
    from ...tools.base import kind_of
    from ...tools.builtin import builtin_tools

    return {tool.name: kind_of(tool) for tool in builtin_tools()}


#: Characters of a tool result inside a folded markdown card (the record keeps up to
#: MAX_TOOL_RESULT_CHARS); plain text, which cannot fold, shows less.
FOLDED_RESULT_CHARS = 10_000
PLAIN_RESULT_CHARS = 2_000


@dataclass(frozen=True)
class _Tool:
    """One tool call with everything shown about it."""

    id: str
    name: str
    summary: str
    detail: str | None  # the full input when the summary cannot hold it, or a diff
    detail_lang: str
    approvals: tuple[ApprovalRecord, ...]
    result: str | None  # None when the record has no result for the call
    is_error: bool
    shown: tuple[int, ...] = ()  # numbers of the figures it showed below its card
    outputs: int = 0  # outputs it showed below its card (figures and displays)
    kind: str | None = None  # its tool's declared kind

    @property
    def outcome(self) -> str:
        """How it ended (`call_outcome`)."""
        denial = next((a.source for a in self.approvals if a.decision == "deny"), None)
        return call_outcome(is_error=self.is_error, result=self.result, denied_by=denial,
                            kind=self.kind)


@dataclass(frozen=True)
class Segment:
    """A run of the transcript; `outputs_of` names the call whose outputs follow it."""

    markdown: str
    text: str
    outputs_of: str | None


@dataclass(frozen=True)
class _End:
    """The last line: how the run ended, what it spent (`note`), whether this cell's
    outputs come from a replay, and errors the cell states otherwise (`told`)."""

    result: ResultSummary
    note: str = ""
    replayed: bool = False
    told: tuple[str, ...] = ()


#: (kind, payload): kind is prompt | context | text | thinking | user | tool | tasks | end
#: (`task`, one task-list call, before consecutive ones are folded into `tasks`).
_Part = tuple[str, Any]
#: (one-line summary, full detail or None, language of the detail's code block)
_Described = tuple[str, str | None, str]


def render_transcript(record: SessionRecord, *,
                      max_result_chars: int = FOLDED_RESULT_CHARS) -> str:
    """Markdown: the prompt quoted, the model's text, tool calls folded with their results."""
    return "\n\n".join(_markdown(p) for p in _parts(record, max_result_chars))


def render_transcript_text(record: SessionRecord, *,
                           max_result_chars: int = PLAIN_RESULT_CHARS) -> str:
    """The same transcript as plain text, for terminals and `text/plain`."""
    return "\n\n".join(_plain(p) for p in _parts(record, max_result_chars))


def transcript_segments(record: SessionRecord, *, end_note: str = "", replayed: bool = False,
                        told: Collection[str] = ()) -> list[Segment]:
    """The transcript cut after each call that showed outputs (`record.shown_outputs`):
    the cell shows each segment, then that call's outputs, then the next segment.
    `end_note` goes on the last line (what the run spent, which the record leaves out);
    with `replayed` that line says the outputs come from a replay, which asked no model
    (the note is then what the recorded run spent). `told`: errors the cell shows
    otherwise (an interrupt's error line), left out of the end."""
    segments: list[Segment] = []
    end = _End(record.result, end_note, replayed, tuple(told))
    markdown = _parts(record, FOLDED_RESULT_CHARS, end)
    plain = _parts(record, PLAIN_RESULT_CHARS, end)
    start = 0
    for stop, (kind, payload) in enumerate(markdown, 1):
        if kind == "tool" and payload.outputs and stop < len(markdown):
            segments.append(_segment(markdown[start:stop], plain[start:stop], payload.id))
            start = stop
    segments.append(_segment(markdown[start:], plain[start:], None))
    return segments


def _segment(markdown: list[_Part], plain: list[_Part], outputs_of: str | None) -> Segment:
    return Segment("\n\n".join(_markdown(p) for p in markdown),
                   "\n\n".join(_plain(p) for p in plain), outputs_of)


# -- the parts, shared by both renderings ---------------------------------------------------

def _parts(record: SessionRecord, cap: int, end: _End | None = None) -> list[_Part]:
    results = _results_by_id(record.messages, _Figures())
    approvals = _approvals_by_id(record.approvals)
    parts: list[_Part] = [("prompt", record.prompt)]
    seen: set[str] = set()
    compactions = {c.at: c for c in record.compactions}
    for index, message in enumerate(record.messages):
        if index in compactions:
            parts.append(("compact", compactions.pop(index)))
        if message["role"] == "user":
            if index > 0:
                parts.extend(("user", t) for t in _user_texts(message["content"]))
            else:
                parts.extend(("context", t) for t in _kernel_context(message["content"]))
            continue
        for wire in _blocks(message["content"]):
            part = _assistant_part(wire, results, approvals, cap, record)
            if part is not None and part[0] == "tool":
                outputs = record.shown_outputs.get(part[1].id, 0)
                part = ("tool", _with_outputs(part[1], outputs))
            if part is not None:
                parts.append(part)
                if part[0] in ("tool", "task"):
                    seen.add(wire["id"])
    parts.extend(("compact", done) for done in compactions.values())  # at the very end
    for tool_use_id, orphans in approvals.items():
        if tool_use_id not in seen:
            notes = "; ".join(_approval_note(a, str) for a in orphans)
            parts.append(("user", f"{orphans[0].tool_name} call not recorded: {notes}"))
    parts.append(("end", end or _End(record.result)))
    return fold_task_steps(parts)


def _with_outputs(tool: _Tool, outputs: int) -> _Tool:
    from dataclasses import replace

    return replace(tool, outputs=max(0, int(outputs))) if outputs else tool


def _assistant_part(wire: dict[str, Any], results: dict[str, _Result],
                    approvals: dict[str, list[ApprovalRecord]], cap: int,
                    record: SessionRecord) -> _Part | None:
    if wire.get("type") == "redacted_thinking":
        return ("thinking", "(redacted by the API)")
    if wire.get("type") == "tool_use" and not _well_formed_call(wire):
        return None
    block = block_from_wire(wire)
    if isinstance(block, TextBlock):
        return ("text", block.text) if block.text.strip() else None
    if isinstance(block, ThinkingBlock):
        return ("thinking", block.thinking)
    if isinstance(block, ToolUseBlock):
        result = results.get(block.id)
        if (block.name in TASK_TOOLS and result is not None and not result[1]
                and not approvals.get(block.id)):  # a plain success: a line, not a card
            return ("task", task_step(block.name, block.input, result[0]))
        kind = record.kinds.get(block.name) or builtin_kind(block.name)
        return ("tool", _tool(block, result, approvals.get(block.id, []), cap, kind,
                              record.cells.get(block.id)))
    return None


def _well_formed_call(wire: dict[str, Any]) -> bool:
    """A saved notebook may have been edited by hand; render what makes sense, skip the rest."""
    return (isinstance(wire.get("id"), str) and isinstance(wire.get("name"), str)
            and isinstance(wire.get("input", {}), dict))


def _tool(block: ToolUseBlock, result: _Result | None, approvals: list[ApprovalRecord],
          cap: int, kind: str | None, cell: CellCall | None) -> _Tool:
    summary, detail, lang = _describe_input(block.name, block.input, cap, kind, cell)
    text, is_error, figures = result if result is not None else (None, False, ())
    if text is not None:
        text = _cap(text, cap) if text.strip() else "(no output)"
    return _Tool(id=block.id, name=block.name, summary=summary, detail=detail,
                 detail_lang=lang, approvals=tuple(approvals), result=text,
                 is_error=is_error, shown=figures, kind=kind)


def _describe_input(name: str, tool_input: dict[str, Any], cap: int,
                    kind: str | None = None, cell: CellCall | None = None) -> _Described:
    """(one-line summary, optional full detail, detail language) for a call's input;
    `kind` is the tool's declared kind (None: the built-in tool's of that name), `cell`
    the notebook cell a cell tool's call found (`cell_calls.py`)."""
    described = cell_call(name, tool_input, cell)
    if described is not None:
        summary, detail, lang, more = described
        return _one_line(summary, more=more), _cap(detail, cap) if detail else None, lang
    if name in ("Edit", "Write") and isinstance(tool_input.get("file_path"), str):
        return tool_input["file_path"], _cap(edit_diff(name, tool_input), cap), "diff"
    if (kind or builtin_kind(name)) == "ask" and isinstance(tool_input.get("questions"), list):
        return _questions(tool_input)
    for field in _TELLING_FIELDS:
        value = tool_input.get(field)
        if isinstance(value, str) and value.strip():
            value = redact_text(value)  # whole, before its first line is cut from it
            lines = value.strip().splitlines()
            summary = _one_line(lines[0], more=len(lines) > 1)
            whole = len(lines) > 1 or len(lines[0]) > _SUMMARY_CHARS  # never hide any of it
            detail = _cap(value.strip(), cap) if whole else None
            return summary, detail, _LANGS.get(field, "")
    compact = json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    return _one_line(compact, more=False), None, ""


def _questions(tool_input: dict[str, Any]) -> _Described:
    """A question as the user saw it: the question, its options, and the answer."""
    questions = [q for q in tool_input["questions"] if isinstance(q, dict)]
    answers = tool_input.get("answers") or {}
    lines = []
    for question in questions:
        labels = " / ".join(str(o.get("label", "")) for o in question.get("options", []))
        answer = answers.get(question.get("question"))
        chosen = ", ".join(answer) if isinstance(answer, list) else answer
        lines.append(f"{question.get('question', '')} [{labels}]"
                     + (f" → {chosen}" if chosen else ""))
    first = str(questions[0].get("question", "")) if questions else "(no question)"
    return _one_line(first, more=len(questions) > 1), "\n".join(lines) or None, ""


def input_summary(name: str, tool_input: dict[str, Any], kind: str | None = None) -> str:
    """The most telling part of a call's input, on one line (live view, cards, transcript);
    `kind` is the tool's declared kind (None: the built-in tool's of that name)."""
    return _describe_input(name, tool_input, _SUMMARY_CHARS, kind)[0]


def edit_diff(name: str, tool_input: dict[str, Any]) -> str:
    """A unified diff of what an Edit or Write does to the file."""
    path = tool_input["file_path"]
    if name == "Write":
        old, new = "", str(tool_input.get("content", ""))
    else:
        old, new = str(tool_input.get("old_string", "")), str(tool_input.get("new_string", ""))
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(),
                                fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}",
                                lineterm="")
    text = "\n".join(diff)
    if tool_input.get("replace_all"):
        text += "\n(all occurrences)"
    return text


def _one_line(text: str, *, more: bool) -> str:
    """`text` on one line of a summary: redacted whole, then cut (`redacted_head`), so a
    cut never leaves the rest of a secret whose start it dropped (the live view and the
    terminal summarise a call's input before anything else redacts it)."""
    head, left = redacted_head(text, _SUMMARY_CHARS)
    if left:
        return head + "…"
    return head + " …" if more else head


def _cap(text: str, cap: int) -> str:
    """`text` shown up to `cap` characters: redacted whole, then cut."""
    head, left = redacted_head(text, cap)
    return f"{head}\n… ({left} more characters)" if left else head


def _blocks(content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)]


def _user_texts(content: str | list[Any]) -> list[str]:
    """Text the user side added after the prompt (not tool results or hook reminders)."""
    return [b["text"] for b in _blocks(content) if b.get("type") == "text"
            and isinstance(b.get("text"), str) and b["text"].strip()
            and not b["text"].lstrip().startswith(REMINDER_OPEN)]


def _kernel_context(content: str | list[Any]) -> list[str]:
    """What the notebook sent of the kernel with the prompt (shown folded: exactly that)."""
    found = []
    for block in _blocks(content):
        text = block.get("text") if block.get("type") == "text" else None
        if isinstance(text, str) and text.lstrip().startswith(REMINDER_OPEN) and (
                CONTEXT_TITLE in text[:200]):
            body = text.split(CONTEXT_TITLE, 1)[1]
            found.append(body.rsplit(REMINDER_CLOSE, 1)[0].strip())
    return found


#: (result text, is_error, numbers of the figures it showed)
_Result = tuple[str, bool, tuple[int, ...]]


class _Figures:
    """Numbers the figures a cell showed, in order, and labels the images of results."""

    def __init__(self) -> None:
        self.count = 0
        self.numbers: list[int] = []

    def label(self, block: dict[str, Any]) -> str:
        given = block.get("source")
        source: dict[str, Any] = given if isinstance(given, dict) else {}
        kind = str(source.get("media_type") or "image").removeprefix("image/").upper()
        if block.get("type") == "image" and source.get("type") == OUTPUT_REF:
            self.count += 1
            self.numbers.append(self.count)
            return f"[Figure {self.count} ({kind}), shown below]"
        if block.get("type") == "image":
            return f"[{kind} image, seen by the model]"
        return f"[{block.get('type', 'block')}]"


def _results_by_id(messages: list[dict[str, Any]], figures: _Figures) -> dict[str, _Result]:
    found: dict[str, _Result] = {}
    for message in messages:
        if message["role"] != "user":
            continue
        for block in _blocks(message["content"]):
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                figures.numbers = []
                text = result_text(block.get("content"), label=figures.label)
                found[block["tool_use_id"]] = (text, bool(block.get("is_error")),
                                               tuple(figures.numbers))
    return found


def result_text(content: Any, *, label: Callable[[dict[str, Any]], str] | None = None) -> str:
    """A tool result's content as text: its text blocks, `[type]` (or `label(block)`) for
    the others."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            pieces.append(str(block.get("text", "")))
        elif isinstance(block, dict):
            pieces.append(label(block) if label else f"[{block.get('type', 'block')}]")
    return "\n".join(pieces)


def _approvals_by_id(approvals: list[ApprovalRecord]) -> dict[str, list[ApprovalRecord]]:
    found: dict[str, list[ApprovalRecord]] = {}
    for approval in approvals:
        found.setdefault(approval.tool_use_id, []).append(approval)
    return found


_VERBS = {"allow": "allowed", "always_allow": "always allowed", "deny": "denied"}
_WHO = {"user": "by you", "rule": "by rule", "policy": "by policy", "replay": "on replay"}


def _failed(tool: _Tool) -> str:
    """` ✗ failed` for a call that ran and failed, ` ✗ interrupted` for one an interrupt
    cut short; a denial already says what happened (its note: `denied by you`)."""
    outcome = tool.outcome
    return f" {OUTCOME_MARKS[outcome]}" if outcome in ("failed", "interrupted") else ""


def _approval_note(approval: ApprovalRecord, code: Callable[[str], str],
                   prose: Callable[[str], str] = str, kind: str | None = None) -> str:
    """E.g. `allowed by you`, `denied by policy: outside the project`, `answered by you`
    or `skipped by you` for a question (an `ask` tool) (`prose` escapes the reason, which
    someone else wrote)."""
    asks = kind == "ask"
    if approval.decision == "deny":
        verb = "skipped" if asks and approval.source == "user" else "denied"
    else:
        verb = "answered" if approval.answers or (asks and approval.source == "user") else (
            _VERBS[approval.decision])
    note = f"{verb} {_WHO[approval.source]}"
    granted = split_rules(approval.rule)
    rules = ", ".join(code(rule) for rule in granted)
    if rules and approval.source == "rule":
        note += f" {rules}"
    elif rules:
        note += f", rule{'s' if len(granted) > 1 else ''} {rules}"
    return note + (f": {prose(approval.reason)}" if approval.reason else "")


# -- markdown ---------------------------------------------------------------------------------

def _markdown(part: _Part) -> str:
    kind, payload = part
    if kind == "prompt":
        return quote(escape_math(payload))
    if kind == "text":
        return escape_math(payload.strip())
    if kind == "thinking":
        return (f"<details><summary>Thinking</summary>\n\n{escape_math(payload.strip())}"
                "\n\n</details>")
    if kind == "user":
        return quote(escape_math(payload))
    if kind == "tool":
        return _markdown_tool(payload)
    if kind == "context":
        return context_details(payload)
    if kind == "tasks":
        return tasks_markdown(payload)
    if kind == "compact":
        return (f"<details><summary>{html.escape(compaction_line(payload))}</summary>\n\n"
                f"{escape_math(payload.summary.strip())}\n\n</details>")
    return escape_math(_ending(payload, bold=True))


def compaction_line(done: Any) -> str:
    """One line for a compaction (a record's, or a `compact_boundary` message's data)."""
    how = "automatically" if done.trigger == "auto" else "on request (/compact)"
    return (f"Context compacted {how}: {done.pre_tokens:,} → about {done.post_tokens:,} "
            "tokens; the earlier turns were replaced by a summary")


def _markdown_tool(tool: _Tool) -> str:
    """One folded line: `<summary>` does not render markdown, so the header is HTML."""
    header = f"<b>{html.escape(tool.name)}</b> {_html_code(tool.summary)}"
    header += "".join(f" ({_approval_note(a, _html_code, html.escape, tool.kind)})"
                      for a in tool.approvals)
    header += html.escape(_failed(tool)) + html.escape(_below(tool))
    lines = []
    if tool.detail:
        lines.append(fence(tool.detail, tool.detail_lang))
    lines.append(fence(tool.result) if tool.result is not None else "*(no result recorded)*")
    body = "\n\n".join(lines)
    return f"<details><summary>{header}</summary>\n\n{body}\n\n</details>"


def _html_code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _below(tool: _Tool) -> str:
    """` · Figure 2 below`: which outputs under the card are this call's."""
    if not tool.outputs:
        return ""
    if tool.shown:
        first, last = tool.shown[0], tool.shown[-1]
        joint = " and " if len(tool.shown) == 2 else " to "
        figures = f"Figure {first}" if first == last else f"Figures {first}{joint}{last}"
        others = tool.outputs - len(tool.shown)
        more = f" and {others} more output{'s' if others > 1 else ''}" if others > 0 else ""
        return f" · {figures}{more} below"
    return f" · {tool.outputs} output{'s' if tool.outputs > 1 else ''} below"


def context_details(text: str) -> str:
    """The context sent with a prompt, folded: one click shows exactly what went."""
    return (f"<details><summary>Context sent with the prompt ({len(text):,} characters)"
            f"</summary>\n\n{fence(text, 'text')}\n\n</details>")


#: How a run ended, in a user's words (the record keeps the API's subtype).
END_WORDS = {"success": "", "error_max_turns": "the turn limit was reached",
             "error_max_budget_usd": "the budget was reached",
             "error_max_structured_output_retries": "the answer never matched the schema",
             "error_during_execution": ""}


def turns_taken(subtype: str, num_turns: int) -> int:
    """Turns as `--max-turns` counts them: a run stopped at the limit got one more
    response, whose tool calls were not run; it is not a turn taken (so `--max-turns 1`
    reports 1 turn, not the 2 responses of `ResultMessage.num_turns`)."""
    return max(0, num_turns - 1) if subtype == "error_max_turns" else num_turns


def turns_words(subtype: str, num_turns: int) -> str:
    """`3 turns` (see `turns_taken`)."""
    taken = turns_taken(subtype, num_turns)
    return f"{taken} turn{'' if taken == 1 else 's'}"


def end_words(subtype: str) -> str:
    """`the turn limit was reached`, `` for a plain end (the errors below say why)."""
    return END_WORDS.get(subtype, subtype.replace("_", " "))


def _ending(end: _End, *, bold: bool) -> str:
    """`Done · 4 turns`, or `Stopped · the turn limit was reached · 3 turns` with errors;
    the note (tokens, cost, time) joins the line. A replay's: `Replayed · 0 requests ·
    recorded: 4 turns · …` (nothing was asked of a model; the numbers are the recording's)."""
    result = end.result
    word = "Stopped" if result.is_error else "Done"
    turns = turns_words(result.subtype, result.num_turns)
    why = end_words(result.subtype)
    if end.replayed:
        recorded = " · ".join(p for p in ("stopped" if result.is_error else "", why, turns,
                                            end.note) if p)
        parts: tuple[str, ...] = ("**Replayed**" if bold else "Replayed", "0 requests",
                                  f"recorded: {recorded}")
    else:
        parts = (f"**{word}**" if bold else word, why, turns, end.note)
    line = " · ".join(part for part in parts if part)
    errors = [e for e in result.errors or [] if e not in end.told]
    if errors:
        line += "\n" + "\n".join(f"- {e}" for e in errors)
    return line


# -- plain text -------------------------------------------------------------------------------

def _plain(part: _Part) -> str:
    kind, payload = part
    render: dict[str, Callable[[Any], str]] = {
        "prompt": lambda p: _indent(p.strip(), "> "),
        "text": lambda p: p.strip(),
        "thinking": lambda p: "Thinking:\n" + _indent(p.strip(), "  "),
        "user": lambda p: _indent(p.strip(), "> "),
        "context": lambda p: f"(context sent with the prompt: {len(p):,} characters)",
        "tool": _plain_tool,
        "tasks": tasks_plain,
        "compact": lambda p: f"— {compaction_line(p)} —",
        "end": lambda p: _ending(p, bold=False),
    }
    return render[kind](payload)


def _plain_tool(tool: _Tool) -> str:
    header = f"{tool.name}: {tool.summary}"
    header += "".join(f" ({_approval_note(a, str, kind=tool.kind)})" for a in tool.approvals)
    header += _failed(tool) + _below(tool)
    lines = [header]
    if tool.detail:
        lines.append(_indent(tool.detail, "    "))
    result = tool.result if tool.result is not None else "(no result recorded)"
    lines.append("  ⎿ " + _indent(result, "    ").removeprefix("    "))
    return "\n".join(lines)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.splitlines())
