"""Recovering a conversation that the API rejects because of content this run added.

A 400 `invalid_request_error` (an image the API cannot decode, a document it refuses) or a
413 (too large) caused by a tool result would stay in the history and make every later
request fail the same way. Before giving up, the loop replaces what this run added, step by
step, with a short note the model can read, and sends the request again:

1. image and document blocks (in the run's user messages and tool results);
2. the content of every tool result the run added.

History before the run is never touched, and every `tool_use` keeps its one result, so the
conversation stays valid whatever the outcome.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REPAIR_STEPS", "repair_added_content"]

REPAIR_STEPS = 2
_MEDIA = ("image", "document")


def _note(what: str, reason: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[{what} removed: the API rejected the request with it "
                                    f"({reason[:300]})]"}


def _without_media(blocks: list[Any], reason: str) -> tuple[list[Any], int]:
    changed = 0
    kept: list[Any] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") in _MEDIA:
            kept.append(_note(f"{block['type']}", reason))
            changed += 1
        elif isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(
                block.get("content"), list):
            content, inner = _without_media(block["content"], reason)
            kept.append({**block, "content": content} if inner else block)
            changed += inner
        else:
            kept.append(block)
    return kept, changed


def _without_results(blocks: list[Any], reason: str) -> tuple[list[Any], int]:
    changed = 0
    kept: list[Any] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            kept.append({**block, "content": [_note("this tool result", reason)],
                         "is_error": True})
            changed += 1
        else:
            kept.append(block)
    return kept, changed


def repair_added_content(history: list[dict[str, Any]], pending: list[dict[str, Any]], *,
                         since: int, step: int, reason: str) -> int:
    """Apply repair `step` (1-based) to user messages from `history[since:]` and to the
    pending results, in place; returns how many blocks were replaced (0: nothing to try)."""
    fix = _without_media if step == 1 else _without_results
    changed = 0
    for index in range(max(since, 0), len(history)):
        message = history[index]
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        content, count = fix(message["content"], reason)
        if count:
            history[index] = {**message, "content": content}
            changed += count
    fixed, count = fix(pending, reason)
    pending[:] = fixed
    return changed + count
