"""The final outputs of a `%%fuxi` cell: the transcript (in segments) and the record.

The transcript is cut after each call that showed outputs, so those outputs go right
after its card (`transcript_segments`); the last segment also holds the session record.
`text/markdown` (what JupyterLab shows) and `text/plain` (terminals, nbval) come from the
record, and its last line says what the run spent (tokens, cost, time) from the volatile
values kept in the output's metadata: a replay shows the recorded run's numbers.

That line also says whether the outputs come from a replay, read only from the output's
own metadata (`end_line`), so every run of a cell writes what the next replay writes
again: a replay someone watches (JupyterLab, a terminal) sets `end_line: "replayed"` and its
line reads `Replayed · 0 requests · recorded: 3 turns · …` (no model was asked, the numbers
are the recording's); a headless replay (nbval, `jupyter execute`), whose outputs are
compared with the saved ones, keeps `end_line` as it found it, so its line is the saved
line: a live run's `Done · …`, or an earlier watched replay's `Replayed · …`. (Every
replay notes its mode under `replayed`, which the line does not read.)

A cell the user interrupted ends with its error line ("Stopped: interrupted by the
user; …"): the transcript's end does not repeat the interrupt as one of its errors.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

from ....types import ResultMessage
from ...agent.session import Session
from ...sessions.record import build_record, record_to_output
from ...sessions.text.transcript import transcript_segments
from ..display.spend import cell_cost, spend_words

__all__ = ["Bundle", "final_outputs", "record_outputs", "saved_bundle", "with_undone"]

#: One output: (data, metadata, the tool_use id whose outputs follow it, or None)
Bundle = tuple[dict[str, Any], dict[str, Any], str | None]


def final_outputs(*, cell_id: str, session: Session, parent: str | None, prompt: str,
                  options: dict[str, Any], messages: list[dict[str, Any]],
                  approvals: list[dict[str, Any]], result: ResultMessage,
                  secrets: list[str], shown_images: Collection[str] = (),
                  shown_outputs: dict[str, int] | None = None,
                  cells: dict[str, dict[str, Any]] | None = None,
                  cell_cost_usd: float | None = None,
                  compactions: list[dict[str, Any]] | None = None
                  ) -> tuple[list[Bundle], Any]:
    """(the cell's final outputs, record)."""
    record = build_record(cell_id=cell_id, session_id=session.id, parent=parent,
                          model=session.model_name, prompt=prompt, options=options,
                          messages=messages, approvals=approvals, result=result,
                          secrets=secrets, cwd=str(session.cwd), shown_images=shown_images,
                          kinds=_kinds(session, messages), shown_outputs=shown_outputs,
                          cells=cells, compactions=compactions or ())
    volatile = {
        "cost_usd": result.total_cost_usd,  # the session's total so far
        "cell_cost_usd": cell_cost_usd,  # this cell's (None: a model without a known price)
        "usage": result.usage,
        "model_usage": result.model_usage,
        "duration_ms": result.duration_ms,
        "duration_api_ms": result.duration_api_ms,
        "session_tokens": dict(session.usage.tokens),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return record_outputs(record, volatile, told=_told(result)), record


def _told(result: ResultMessage) -> tuple[str, ...]:
    """The errors the cell states otherwise: an interrupted cell (live_cell.py ends its
    run with `terminal_reason="aborted"`) raises an error line that says why it stopped."""
    return tuple(result.errors or ()) if result.terminal_reason == "aborted" else ()


def _kinds(session: Session, messages: list[dict[str, Any]]) -> dict[str, str]:
    """The declared kind of each tool these messages call."""
    called: set[Any] = {block.get("name") for m in messages if m.get("role") == "assistant"
              and isinstance(m.get("content"), list) for block in m["content"]
              if isinstance(block, dict) and block.get("type") == "tool_use"}
    kinds = {name: session.kind(name) for name in sorted(called) if isinstance(name, str)}
    return {name: kind for name, kind in kinds.items() if kind is not None}


def record_outputs(record: Any, volatile: dict[str, Any], *,
                   told: Collection[str] = ()) -> list[Bundle]:
    """The transcript segments of a record (markdown, text); the last one also holds the
    record itself, with `volatile` as its metadata (its `end_line` "replayed": the line
    says the outputs come from a replay; see the module docstring). `told`: errors the
    cell shows otherwise."""
    data, metadata = record_to_output(record, volatile=volatile)
    spent = spend_words(volatile.get("usage"), cell_cost(volatile), volatile.get("duration_ms"))
    segments = transcript_segments(record, end_note=spent,
                                   replayed=volatile.get("end_line") == "replayed", told=told)
    bundles: list[Bundle] = [({"text/markdown": s.markdown, "text/plain": s.text}, {},
                              s.outputs_of) for s in segments[:-1]]
    last = segments[-1]
    markdown, plain = last.markdown, last.text
    undone = metadata["fuxi"].get("undone")
    if isinstance(undone, Mapping):
        markdown, plain = _with_undone_line(markdown, plain, undone)
    bundles.append(({**data, "text/markdown": markdown, "text/plain": plain}, metadata, None))
    return bundles


def with_undone(data: Mapping[str, Any], metadata: Mapping[str, Any],
                undone: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record output as shown, once `%fuxi undo` took its cell's changes back: `undone`
    (redacted, each list capped) under `fuxi.undone`, and the folded line `record_outputs`
    draws from it, so a replay that keeps the saved metadata draws the same output."""
    from ...sessions.redact import redact
    from .cellrun import secrets

    kept = redact({key: (_capped(value) if isinstance(value, list) else value)
                   for key, value in undone.items()}, secrets=secrets())
    fuxi = {**dict(metadata.get("fuxi") or {}), "undone": kept}
    markdown = str(data.get("text/markdown", ""))
    plain = str(data.get("text/plain", ""))
    markdown, plain = _with_undone_line(markdown, plain, kept)
    return ({**data, "text/markdown": markdown, "text/plain": plain},
            {**dict(metadata), "fuxi": fuxi})


#: items of each list `fuxi.undone` keeps, at most
UNDONE_ITEMS = 40


def _capped(items: list[Any]) -> list[Any]:
    if len(items) <= UNDONE_ITEMS:
        return list(items)
    return [*items[:UNDONE_ITEMS], f"... and {len(items) - UNDONE_ITEMS} more"]


def _with_undone_line(markdown: str, plain: str,
                      undone: Mapping[str, Any]) -> tuple[str, str]:
    """The transcript's end, with one folded line saying what `%fuxi undo` took back."""
    import html

    from ...sessions.text.markdown import escape_math

    restored = [str(item) for item in undone.get("restored") or ()]
    kept = [str(item) for item in undone.get("kept") or ()]
    head = f"Undone by %fuxi undo: {len(restored)} restored" + (
        f", {len(kept)} not undone" if kept else "")
    lines = ([f"restored {item}" for item in restored]
             + [f"not undone: {item}" for item in kept])
    details = "\n".join(f"- {escape_math(line)}" for line in lines)
    folded = (f"<details><summary>{html.escape(head)}</summary>\n\n{details}\n\n</details>"
              if details else escape_math(head))
    return (f"{markdown}\n\n{folded}",
            "\n".join([plain, head, *(f"  {line}" for line in lines)]))


def saved_bundle(data: Mapping[str, Any]) -> dict[str, Any]:
    """A saved output's data, to show again: a notebook file keeps each text value as a
    list of lines (nbformat), and a frontend shows a list it is sent joined by commas
    (`> a,>,> b`: one blockquote with ", ," in it). JSON types stay as they are."""
    return {mime: "".join(str(line) for line in value)
            if isinstance(value, list) and not _json_mime(mime) else value
            for mime, value in data.items()}


def _json_mime(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")
