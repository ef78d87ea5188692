"""The final outputs of a `%%fuxi` cell: the transcript (in segments) and the record.

The transcript is cut after each call that showed outputs, so those outputs go right
after its card (`transcript_segments`); the last segment also holds the session record.
`text/markdown` (what JupyterLab shows) and `text/plain` (terminals, nbval) come from the
record, and its last line says what the run spent (tokens, cost, time) from the volatile
values kept in the output's metadata: a replay shows the recorded run's numbers, so a
replayed cell's outputs equal the saved ones, which is what nbval compares.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from ..agent.session import Session
from ..sessions import build_record, record_to_output
from ..sessions.transcript import transcript_segments
from ..types import ResultMessage
from .spend import cell_cost, spend_words

__all__ = ["Bundle", "final_outputs", "record_outputs"]

#: One output: (data, metadata, the tool_use id whose outputs follow it, or None)
Bundle = tuple[dict[str, Any], dict[str, Any], str | None]


def final_outputs(*, cell_id: str, session: Session, parent: str | None, prompt: str,
                  options: dict[str, Any], messages: list[dict[str, Any]],
                  approvals: list[dict[str, Any]], result: ResultMessage,
                  secrets: list[str], shown_images: Collection[str] = (),
                  shown_outputs: dict[str, int] | None = None,
                  cell_cost_usd: float | None = None,
                  compactions: list[dict[str, Any]] | None = None
                  ) -> tuple[list[Bundle], Any]:
    """(the cell's final outputs, record)."""
    record = build_record(cell_id=cell_id, session_id=session.id, parent=parent,
                          model=session.model_name, prompt=prompt, options=options,
                          messages=messages, approvals=approvals, result=result,
                          secrets=secrets, cwd=str(session.cwd), shown_images=shown_images,
                          kinds=_kinds(session, messages), shown_outputs=shown_outputs,
                          compactions=compactions or ())
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
    return record_outputs(record, volatile), record


def _kinds(session: Session, messages: list[dict[str, Any]]) -> dict[str, str]:
    """The declared kind of each tool these messages call."""
    called = {block.get("name") for m in messages if m.get("role") == "assistant"
              and isinstance(m.get("content"), list) for block in m["content"]
              if isinstance(block, dict) and block.get("type") == "tool_use"}
    kinds = {name: session.kind(name) for name in sorted(called) if isinstance(name, str)}
    return {name: kind for name, kind in kinds.items() if kind is not None}


def record_outputs(record: Any, volatile: dict[str, Any]) -> list[Bundle]:
    """The transcript segments of a record (markdown, text); the last one also holds the
    record itself, with `volatile` as its metadata."""
    data, metadata = record_to_output(record, volatile=volatile)
    spent = spend_words(volatile.get("usage"), cell_cost(volatile), volatile.get("duration_ms"))
    segments = transcript_segments(record, end_note=spent)
    bundles: list[Bundle] = [({"text/markdown": s.markdown, "text/plain": s.text}, {},
                              s.outputs_of) for s in segments[:-1]]
    last = segments[-1]
    bundles.append(({**data, "text/markdown": last.markdown, "text/plain": last.text},
                    metadata, None))
    return bundles
