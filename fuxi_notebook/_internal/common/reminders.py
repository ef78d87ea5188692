"""The tags that mark context the agent added to a conversation, not text a person typed:
a `<system-reminder>` (a hook's or the notebook's context) and a compaction's summary.
One home, so that whoever writes a reminder and whoever reads one agree."""

from __future__ import annotations

from typing import Any

__all__ = ["REMINDER_CLOSE", "REMINDER_OPEN", "SUMMARY_OPEN", "is_summary", "reminder"]

REMINDER_OPEN = "<system-reminder>"
REMINDER_CLOSE = "</system-reminder>"
#: how a compaction's summary message starts (context/compaction.py writes it)
SUMMARY_OPEN = "This conversation was compacted to stay within the model's context window."


def reminder(text: str) -> dict[str, Any]:
    """A text block of context added by a hook (not something the user typed)."""
    return {"type": "text", "text": f"{REMINDER_OPEN}\n{text}\n{REMINDER_CLOSE}"}


def is_summary(message: dict[str, Any]) -> bool:
    """Whether `message` is a compaction's summary message."""
    content = message.get("content")
    return (message.get("role") == "user" and isinstance(content, list) and bool(content)
            and isinstance(content[0], dict)
            and str(content[0].get("text", "")).startswith(SUMMARY_OPEN))
