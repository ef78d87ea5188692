"""How many tokens a request holds: the API's own count where it gave one, an estimate
for the rest.

After each response the API has told us exactly how big that request was (`usage`:
input + cache reads + cache writes) and how long the answer is (`output_tokens`). The next
request is that plus whatever joined the conversation since, so only the new messages are
estimated. The estimate (documented in the README) errs on the large side: one token per
three bytes of UTF-8 JSON (English text runs about four bytes a token, code and CJK text
closer to three or fewer), 1,600 tokens per image (the API's cap for a full-size image)
and a third of a document's decoded bytes. Estimating high means compacting a little
early, never sending a request over the window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["IMAGE_TOKENS", "RequestMeter", "estimate_tokens", "usage_prompt_tokens"]

IMAGE_TOKENS = 1_600
_BYTES_PER_TOKEN = 3


def estimate_tokens(value: Any) -> int:
    """An upper-side estimate of the tokens of `value` (blocks, messages, or lists of
    either); images and documents count by what the API charges, not their base64."""
    if isinstance(value, list):
        return sum(estimate_tokens(item) for item in value)
    if isinstance(value, dict):
        kind = value.get("type")
        source = value.get("source")
        if kind in ("image", "document") and isinstance(source, dict):
            return _media_tokens(kind, source)
        if "content" in value and isinstance(value["content"], list):
            rest = {k: v for k, v in value.items() if k != "content"}
            return _json_tokens(rest) + estimate_tokens(value["content"])
    return _json_tokens(value)


def _json_tokens(value: Any) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return max(1, -(-len(text.encode("utf-8")) // _BYTES_PER_TOKEN))


def _media_tokens(kind: str, source: dict[str, Any]) -> int:
    if kind == "image" or source.get("type") != "base64":
        return IMAGE_TOKENS
    data = source.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return max(IMAGE_TOKENS, size // _BYTES_PER_TOKEN)


def usage_prompt_tokens(usage: dict[str, Any] | None) -> int:
    """The whole prompt of a request as the API counted it (uncached input + cache
    reads + cache writes)."""
    usage = usage or {}
    return sum(int(usage.get(key) or 0) for key in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))


@dataclass
class _Measured:
    """The last request the API counted: its tokens (prompt + answer) and how many
    messages of the history they cover."""

    tokens: int
    messages: int
    first: int  # id() of the history's first message then: a compaction replaces it


class RequestMeter:
    """The size of the next request of one conversation: the larger of the API's count
    of the last request plus an estimate of what joined since, and an estimate of the
    whole (each message estimated once: history messages are replaced, never changed in
    place, so a message's identity keys its estimate)."""

    def __init__(self) -> None:
        self._measured: _Measured | None = None
        self._sizes: dict[int, tuple[dict[str, Any], int]] = {}
        #: the last history estimated, and its messages' estimates (`_estimates`)
        self._history: list[dict[str, Any]] = []
        self._history_sizes: list[int] = []

    def measured(self, usage: dict[str, Any] | None, history: list[dict[str, Any]]) -> None:
        """A response has joined `history` (as its last message); `usage` is the API's
        count for its request and answer."""
        prompt = usage_prompt_tokens(usage)
        if not prompt or not history:
            self._measured = None
            return
        answer = int((usage or {}).get("output_tokens") or 0)
        self._measured = _Measured(prompt + answer, len(history), id(history[0]))

    def forget(self) -> None:
        """The history was rewritten (compacted, repaired): the API's count no longer
        describes it."""
        self._measured = None

    def estimate(self, system: list[dict[str, Any]], tools: list[dict[str, Any]],
                 history: list[dict[str, Any]],
                 pending: Sequence[dict[str, Any]] = ()) -> tuple[int, bool]:
        """`(tokens, counted)`: the size of a request of `history` (plus `pending`
        results), and whether the API's count of the last request went into it."""
        sizes = self._estimates(history)
        owed = estimate_tokens(list(pending))
        whole = sum(self.prefix(system, tools)) + sum(sizes) + owed
        known = self._measured
        if (known is not None and history and known.messages <= len(history)
                and known.first == id(history[0])):
            counted = known.tokens + sum(sizes[known.messages:]) + owed
            return max(whole, counted), True
        return whole, False

    def _estimates(self, history: list[dict[str, Any]]) -> list[int]:
        """Each message's estimate: those the last history had (the same objects, in the
        same places: one pass of identity checks) from then, the rest estimated."""
        last, kept = self._history, self._history_sizes
        same, limit = 0, min(len(history), len(last))
        while same < limit and history[same] is last[same]:
            same += 1
        sizes = kept[:same] + [self._size(message) for message in history[same:]]
        self._history, self._history_sizes = list(history), sizes
        return sizes

    def _size(self, message: dict[str, Any]) -> int:
        key = id(message)
        cached = self._sizes.get(key)
        if cached is not None and cached[0] is message:
            return cached[1]
        size = estimate_tokens(message)
        if len(self._sizes) > 4_096:  # messages of a compacted-away past
            self._sizes.clear()
        self._sizes[key] = (message, size)
        return size

    def prefix(self, system: list[dict[str, Any]], tools: list[dict[str, Any]]
               ) -> tuple[int, int]:
        """`(system tokens, tool tokens)`: the part of every request that stays the same
        (deferred tools are not in the prompt)."""
        cached = self._prefix
        if cached is not None and cached[0] is system and cached[1] is tools:
            return cached[2]
        sizes = (estimate_tokens(system),
                 sum(_tool_tokens(tool) for tool in _plain_tools(tools)))
        self._prefix = (system, tools, sizes)
        return sizes

    _prefix: tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[int, int]] | None = None


#: (name, description) -> (the input schema, the definition's estimate): every session
#: builds its tool definitions afresh, and they are nearly always the same
_TOOL_SIZES: dict[tuple[str, str], tuple[Any, int]] = {}


def _tool_tokens(tool: dict[str, Any]) -> int:
    """A tool definition's estimate, computed once per tool and schema."""
    key = (str(tool.get("name")), str(tool.get("description")))
    schema = tool.get("input_schema")
    cached = _TOOL_SIZES.get(key)
    if cached is not None and cached[0] == schema:  # a C-level comparison: cheap
        return cached[1]
    size = estimate_tokens(tool)
    if len(_TOOL_SIZES) > 1_024:
        _TOOL_SIZES.clear()
    _TOOL_SIZES[key] = (schema, size)
    return size


def _plain_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Deferred tools (MCP tool search) are not in the prompt until loaded."""
    return [tool for tool in tools if tool.get("defer_loading") is not True]
