"""Session records: what a `%%fuxi` cell stores in the notebook, and how it is shown.

A record is plain, versioned, validated JSON (pydantic) holding one cell's run, redacted of
secrets and capped in size; the transcript renders it without the live widgets. This
package is core: it never imports IPython, ipywidgets or anthropic.
"""

from __future__ import annotations

from .record import (
    MAX_IMAGE_BYTES,
    MAX_TOOL_RESULT_CHARS,
    RECORD_MIME,
    RECORD_VERSION,
    ApprovalRecord,
    ResultSummary,
    SessionRecord,
    build_record,
    json_safe,
    load_record,
    record_content,
    record_to_output,
    summary_line,
)
from .redact import REDACTED, redact, redact_text
from .transcript import render_transcript, render_transcript_text

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_TOOL_RESULT_CHARS",
    "RECORD_MIME",
    "RECORD_VERSION",
    "REDACTED",
    "ApprovalRecord",
    "ResultSummary",
    "SessionRecord",
    "build_record",
    "json_safe",
    "load_record",
    "record_content",
    "record_to_output",
    "redact",
    "redact_text",
    "render_transcript",
    "render_transcript_text",
    "summary_line",
]
