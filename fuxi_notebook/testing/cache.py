"""Approximate prompt-cache accounting for the fake Messages API server.

Lets tests and benchmarks measure whether the agent loop places `cache_control`
breakpoints so that each request reads the previous request's prefix from the cache.
The model follows the API's documented rules closely enough for that: the prefix order is
tools, system, messages; a breakpoint writes the prefix ending at its block; a request
reads the longest cached prefix that ends at most `LOOKBACK` blocks before one of its
breakpoints. Tokens are estimated from JSON length, not counted by a tokenizer.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["LOOKBACK", "PromptCache", "Unit", "count_tokens", "estimate_tokens", "request_units"]

LOOKBACK = 20
"""How many block boundaries before a breakpoint the API checks for a cache hit."""


@dataclass(frozen=True)
class Unit:
    """One cacheable block of a request.

    Attributes:
        key: canonical text identifying the block and its place (section, message, role).
        tokens: the estimated token count.
        breakpoint: the block carries `cache_control`.
    """

    key: str
    tokens: int
    breakpoint: bool


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "cache_control"}
    return value


def estimate_tokens(value: Any) -> int:
    """About four characters of canonical JSON per token, at least one per block."""
    return max(1, len(json.dumps(_without_cache_control(value), sort_keys=True)) // 4)


def _unit(tag: str, value: Any) -> Unit:
    plain = _without_cache_control(value)
    text = json.dumps(plain, sort_keys=True)
    marked = isinstance(value, dict) and "cache_control" in value
    return Unit(key=f"{tag}|{text}", tokens=max(1, len(text) // 4), breakpoint=marked)


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def _iter_units(body: dict[str, Any]) -> Iterator[Unit]:
    for tool in body.get("tools") or []:
        yield _unit("tool", tool)
    system = body.get("system")
    if system:
        for block in _blocks(system):
            yield _unit("system", block)
    for number, message in enumerate(body.get("messages") or []):
        tag = f"message {number} {message.get('role', '')}"
        for block in _blocks(message.get("content", "")):
            yield _unit(tag, block)


def request_units(body: dict[str, Any]) -> list[Unit]:
    """The request flattened in cache-prefix order: tools, system blocks, message blocks."""
    return list(_iter_units(body))


def count_tokens(body: dict[str, Any]) -> int:
    """The estimated prompt size; what `/v1/messages/count_tokens` answers."""
    return sum(unit.tokens for unit in _iter_units(body))


def _prefix_hashes(seed: str, units: list[Unit]) -> list[bytes]:
    """Chained hashes, so hashing every prefix stays linear in the request size."""
    hashes: list[bytes] = []
    previous = hashlib.sha256(seed.encode()).digest()
    for unit in units:
        previous = hashlib.sha256(previous + unit.key.encode()).digest()
        hashes.append(previous)
    return hashes


def _usage(uncached: int, created: int, read: int) -> dict[str, int]:
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
    }


class PromptCache:
    """The cached prefixes of one fake server; thread-safe.

    Args:
        min_tokens: prefixes shorter than this are never written (the API's per-model
            minimum cacheable length); 0 caches any prefix.
    """

    def __init__(self, min_tokens: int = 0) -> None:
        self.min_tokens = min_tokens
        self._prefixes: set[bytes] = set()
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._prefixes.clear()

    def account(self, body: dict[str, Any]) -> dict[str, int]:
        """Usage counts for `body` (input, cache creation, cache read); writes its prefixes."""
        units = request_units(body)
        totals = list(itertools.accumulate(unit.tokens for unit in units))
        total = totals[-1] if totals else 0
        marks = [i for i, unit in enumerate(units) if unit.breakpoint]
        if not marks or totals[marks[-1]] < self.min_tokens:
            return _usage(total, 0, 0)
        hashes = _prefix_hashes(str(body.get("model", "")), units)
        with self._lock:
            hit = self._longest_hit(hashes, marks)
            self._prefixes.update(hashes[m] for m in marks if totals[m] >= self.min_tokens)
        last = marks[-1]
        read = totals[hit] if hit is not None else 0
        if hit is not None and hit >= last:
            return _usage(total - read, 0, read)
        return _usage(total - totals[last], totals[last] - read, read)

    def _longest_hit(self, hashes: list[bytes], marks: list[int]) -> int | None:
        """The last unit of the longest cached prefix within lookback of a breakpoint.

        Scanning breakpoints from the last and boundaries downwards, the first hit is the
        longest: any later hit near an earlier breakpoint lies inside the later window.
        """
        for mark in reversed(marks):
            for index in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if hashes[index] in self._prefixes:
                    return index
        return None
