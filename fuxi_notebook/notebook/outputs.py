"""The final outputs of a `%%fuxi` cell: one display with the transcript and the record.

`text/markdown` (what JupyterLab shows), `text/plain` (terminals, nbval) and the session
record under its own MIME type are all deterministic; volatile values (cost, tokens,
durations, time) go into output metadata, which nbval ignores.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from ..agent.session import Session
from ..sessions import build_record, record_to_output, render_transcript, render_transcript_text
from ..types import ResultMessage

__all__ = ["final_outputs", "record_outputs"]


def final_outputs(*, cell_id: str, session: Session, parent: str | None, prompt: str,
                  options: dict[str, Any], messages: list[dict[str, Any]],
                  approvals: list[dict[str, Any]], result: ResultMessage,
                  secrets: list[str], shown_images: Collection[str] = ()
                  ) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """(data, metadata, record) for the cell's final display."""
    record = build_record(cell_id=cell_id, session_id=session.id, parent=parent,
                          model=session.model_name, prompt=prompt, options=options,
                          messages=messages, approvals=approvals, result=result,
                          secrets=secrets, cwd=str(session.cwd), shown_images=shown_images,
                          kinds=_kinds(session, messages))
    volatile = {
        "cost_usd": result.total_cost_usd,
        "usage": result.usage,
        "model_usage": result.model_usage,
        "duration_ms": result.duration_ms,
        "duration_api_ms": result.duration_api_ms,
        "session_tokens": dict(session.usage.tokens),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    data, metadata = record_outputs(record, volatile)
    return data, metadata, record


def _kinds(session: Session, messages: list[dict[str, Any]]) -> dict[str, str]:
    """The declared kind of each tool these messages call."""
    called = {block.get("name") for m in messages if m.get("role") == "assistant"
              and isinstance(m.get("content"), list) for block in m["content"]
              if isinstance(block, dict) and block.get("type") == "tool_use"}
    kinds = {name: session.kind(name) for name in sorted(called) if isinstance(name, str)}
    return {name: kind for name, kind in kinds.items() if kind is not None}


def record_outputs(record: Any, volatile: dict[str, Any]) -> tuple[dict[str, Any],
                                                                    dict[str, Any]]:
    """The final display of a record: transcript (markdown, text) + the record itself."""
    data, metadata = record_to_output(record, volatile=volatile)
    data = {**data, "text/markdown": render_transcript(record),
            "text/plain": render_transcript_text(record)}
    return data, metadata
