"""A request's body as JSON bytes, each message encoded once per conversation.

A conversation's request repeats every earlier message, so encoding the whole body each
turn costs more each turn (and the `anthropic` client, given a dict, first copies the
whole tree). `BodyEncoder` keeps the encoding of each message, system block and tool
definition it has seen, by identity, and joins them: a turn encodes what it added (plus
the two messages that carry this turn's cache breakpoints, which are new copies), so its
cost does not grow with the history. The client sends the bytes as they are
(`anthropic.py`).

It relies on what the loop does: a message in the history is replaced, never changed in
place (session.py, repair.py, compaction). An entry is reused only while the object, its
content list and that list's length are the ones encoded; anything else is encoded
again. `FUXI_CHECK_WIRE_BODY=1` also encodes the whole body and compares (the tests set
it).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from itertools import repeat
from operator import eq, is_, length_hint
from typing import Any

__all__ = ["BodyEncoder", "dumps"]


def dumps(value: Any) -> bytes:
    """Compact JSON, UTF-8, as the API reads it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _content(item: Any) -> Any:
    """What an item's reuse is checked against besides itself: its content (a list or a
    string, or None), and that content's length (taken with `length_hint`: 0 for None)."""
    return item.get("content") if isinstance(item, dict) else None


def _first_false(flags: Iterable[bool]) -> int:
    """The index of the first false flag (the number of flags if none is)."""
    found = list(flags)
    found.append(False)
    return found.index(False)


class _Last:
    """One conversation's last list: its items and, for each, its content, that content's
    length and its encoding."""

    def __init__(self, items: list[Any], contents: list[Any], sizes: list[int],
                 parts: list[bytes]) -> None:
        self.items, self.contents, self.sizes, self.parts = items, contents, sizes, parts

    def kept(self, items: list[Any]) -> int:
        """How many of `items` lead as the ones encoded last, unchanged: the same objects
        holding the same content of the same length. Each check is one pass in C
        (`map`), not a call per item: this pass is what a turn's cost would grow with."""
        same = _first_false(map(is_, items, self.items))
        try:
            contents = list(map(dict.get, items[:same], repeat("content")))
        except TypeError:  # an item that is not a dict: each is looked up by itself
            return 0
        same = _first_false(map(is_, contents, self.contents))
        return _first_false(map(eq, map(length_hint, contents[:same]), self.sizes))

    def cut(self, size: int) -> None:
        """Keep the first `size` items (the next list goes on from there)."""
        for kept in (self.items, self.contents, self.sizes, self.parts):
            del kept[size:]


class _Items:
    """The encodings of one list's items (messages, system blocks, tools), by identity.

    A conversation's list starts as its last one did (the same objects, up to the
    messages this turn marked or added): that prefix is taken from the last list of the
    conversation (known by its first item), which becomes this one in place, after
    three passes in C that find it (`_Last.kept`), so the Python a turn runs does not
    grow with the history; the rest is looked up by identity among the
    items of the last few bodies, or encoded. Entries not used by the last few bodies are
    dropped, so a model shared by several conversations at once (a parent and its
    subagents) keeps each one's, and the cache never holds much more than the bodies it
    serves."""

    _KEEP = 4  # bodies
    _CONVERSATIONS = 8

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, Any, int, bytes, int]] = {}
        self._lasts: dict[int, _Last] = {}
        self._body = 0

    def encode(self, items: list[Any]) -> bytes:
        """The items' encodings joined by commas (the list without its brackets)."""
        self._body += 1
        seen, body = self._seen, self._body
        last = self._lasts.get(id(items[0])) if items else None
        if last is None:
            last = _Last([], [], [], [])
        last.cut(last.kept(items))  # the conversation's last list, become this one
        for item in items[len(last.items):]:
            content = _content(item)
            size = length_hint(content)
            hit = seen.get(id(item))
            if hit is not None and hit[0] is item and hit[1] is content and hit[2] == size:
                encoded = hit[3]
            else:
                encoded = dumps(item)
            seen[id(item)] = (item, content, size, encoded, body)
            last.items.append(item)
            last.contents.append(content)
            last.sizes.append(size)
            last.parts.append(encoded)
        if items:
            self._keep(last)
        if len(seen) > 2 * len(items) + 64:
            self._seen = {k: v for k, v in seen.items() if v[4] > body - self._KEEP}
        return b",".join(last.parts)

    def _keep(self, last: _Last) -> None:
        lasts, first = self._lasts, id(last.items[0])
        lasts.pop(first, None)
        if len(lasts) >= self._CONVERSATIONS:
            del lasts[next(iter(lasts))]  # the conversation not seen for longest
        lasts[first] = last


class BodyEncoder:
    """Request bodies of one conversation (or any: entries are keyed by identity).

    One model may serve loops in several threads (its client is per event loop), and
    every session's tool list starts with the same definition: a lock keeps one body's
    encoding from changing the lists another is reading (uncontended, it costs about
    0.1 µs)."""

    _LISTS = ("messages", "system", "tools")

    def __init__(self) -> None:
        self._lists = {name: _Items() for name in self._LISTS}
        self._lock = threading.Lock()

    def encode(self, body: dict[str, Any]) -> bytes:
        """`body` as JSON bytes; list-valued `messages`, `system` and `tools` from the
        encodings kept, the other keys encoded as they are. The pieces are joined once
        (a late turn's body is a few hundred kB: each copy of it counts)."""
        pieces: list[bytes] = []
        with self._lock:
            for key, value in body.items():
                pieces += (b",", dumps(key), b":")
                if key in self._lists and isinstance(value, list):
                    pieces += (b"[", self._lists[key].encode(value), b"]")
                else:
                    pieces.append(dumps(value))
        pieces[:1] = [b"{"]  # (for the comma before the first key)
        pieces.append(b"}")
        whole = b"".join(pieces)
        if os.environ.get("FUXI_CHECK_WIRE_BODY") == "1" and json.loads(whole) != body:
            raise AssertionError("the incrementally encoded request body differs from the "
                                 "request (a message was changed in place after it was sent)")
        return whole
