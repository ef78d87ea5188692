"""Builds a response from raw Messages API stream events, block by block.

We accumulate ourselves instead of using the SDK's stream helper because the helper raises
mid-stream on invalid tool-input JSON; here such a block is kept with its raw text so the
loop can answer it with an `is_error` result. Both model implementations feed this.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .base import BlockDone, ModelResponse, ModelStreamItem, RawEvent

__all__ = ["Accumulator", "play_events"]

#: blocks whose `input` streams as `input_json_delta` (a server tool's call, too)
_JSON_INPUT = frozenset({"tool_use", "server_tool_use"})


def play_events(events: Iterable[dict[str, Any]]) -> Iterator[ModelStreamItem]:
    """A whole response's events as a model streams them: each raw event, each block as it
    completes, then the response (for models that have it all at once: scripted, replay)."""
    acc = Accumulator()
    for event in events:
        yield RawEvent(event)
        done = acc.feed(event)
        if done is not None:
            yield done
    yield acc.response()


class Accumulator:
    """Folds raw stream events into completed blocks and a final `ModelResponse`."""

    def __init__(self) -> None:
        self.message_id = ""
        self.model = ""
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.completed: list[dict[str, Any]] = []
        self._json: dict[int, list[str]] = {}
        #: (block index, field) -> the text deltas so far, joined when the block ends: a
        #: long answer's text grown a delta at a time would be copied whole every delta
        self._text: dict[tuple[int, str], list[str]] = {}
        self.started = False
        self.stopped = False

    def feed(self, event: dict[str, Any]) -> BlockDone | None:
        """Apply one event; returns the block it completed, if any."""
        kind = event.get("type")
        if kind == "message_start":
            message = event["message"]
            self.started = True
            self.message_id = message.get("id", "")
            self.model = message.get("model", "")
            self.usage = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            self._apply_delta(event["index"], event["delta"])
        elif kind == "content_block_stop":
            return self._finish_block(event["index"])
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason", self.stop_reason)
            for key, value in (event.get("usage") or {}).items():
                if value is not None:
                    self.usage[key] = value
        elif kind == "message_stop":
            self.stopped = True
        return None

    def _apply_delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks[index]
        kind = delta.get("type")
        if kind == "text_delta":
            self._grow(index, block, "text", delta["text"])
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            self._grow(index, block, "thinking", delta["thinking"])
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        elif kind == "citations_delta":
            if not isinstance(block.get("citations"), list):  # absent, or `null` at start
                block["citations"] = []
            block["citations"].append(delta.get("citation"))

    def _grow(self, index: int, block: dict[str, Any], name: str, piece: str) -> None:
        parts = self._text.get((index, name))
        if parts is None:
            parts = self._text[(index, name)] = [block.get(name) or ""]
        parts.append(piece)

    def _finish_block(self, index: int) -> BlockDone:
        block = self.blocks[index]
        for name in ("text", "thinking"):
            parts = self._text.pop((index, name), None)
            if parts is not None:
                block[name] = "".join(parts)
        if block.get("type") in _JSON_INPUT and index in self._json:
            raw = "".join(self._json.pop(index))
            if raw.strip():
                try:
                    parsed = json.loads(raw)
                except json.JSONDecodeError:
                    parsed = None
                if isinstance(parsed, dict):
                    block["input"] = parsed
                else:
                    block["input"] = {}
                    block["_invalid_input"] = raw
        self.completed.append(block)
        return BlockDone(index=index, block=block)

    def response(self, *, api_duration_ms: int = 0) -> ModelResponse:
        """The response so far; `incomplete` unless the stream ended normally."""
        complete = self.stopped and self.stop_reason is not None
        return ModelResponse(
            id=self.message_id,
            model=self.model,
            content=list(self.completed),
            stop_reason=self.stop_reason,
            usage=self.usage,
            incomplete=not complete,
            api_duration_ms=api_duration_ms,
        )
