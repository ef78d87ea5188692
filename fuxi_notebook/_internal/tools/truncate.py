"""Caps on tool output, so one huge result cannot flood the model's context.

Head and tail are both kept because the start of an output says what ran and the end
usually holds the verdict (the error, the summary line, the exit status).

Every cut made here is marked (`CUT_MARK`): the text on either side of a cut may hold part
of a secret the cut split, which redaction could not recognise from that part alone. The
model sees the output as it is; everything that leaves the process is redacted
(`sessions/redact.py`), which finds these marks and hides what either side of a cut could
hold of a split secret. So an output is cut here, or by `redact.redacted_head` above this
layer (redacted whole, then cut), never by slicing it.
"""

from __future__ import annotations

import re

__all__ = ["CUT_MARK", "HeadTailBuffer", "cap_head_tail", "cap_line", "join_head_tail",
           "strip_ansi"]

#: Where a cap here cut a text: the text before a mark was cut at its end; after
#: `join_head_tail`'s middle notice (group `middle`) the text was cut at its start too,
#: while what follows `cap_line`'s mark is the next line, whole.
CUT_MARK = re.compile(r"(?P<middle>\n\n\.\.\. \[\d+ (?:characters|bytes of output) truncated\]"
                      r" \.\.\.\n\n)|\.\.\. \[line truncated, \d+ more characters\]")

_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
)


def strip_ansi(text: str) -> str:
    """`text` without terminal escape codes, which only waste tokens for the model."""
    return _ANSI_RE.sub("", text)


def cap_head_tail(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, keeping its start and end.

    The middle is replaced by a notice saying how many characters were dropped, so the
    model knows the output is incomplete and by how much.
    """
    if len(text) <= limit:
        return text
    head_len = limit // 2
    tail_len = limit - head_len
    omitted = len(text) - head_len - tail_len
    return join_head_tail(text[:head_len], text[-tail_len:], f"{omitted} characters")


def join_head_tail(head: str, tail: str, omitted: str) -> str:
    """Head and tail with the standard middle notice (`omitted` says how much, with unit)."""
    return f"{head}\n\n... [{omitted} truncated] ...\n\n{tail}"


def cap_line(line: str, limit: int) -> str:
    """One line cut to `limit` characters with a marker saying how much was cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... [line truncated, {len(line) - limit} more characters]"


class HeadTailBuffer:
    """Keeps the first and last bytes of a stream of any size in bounded memory.

    Used while a subprocess is still writing: a command printing gigabytes only costs
    `head_bytes + tail_bytes` of memory, yet both ends of its output survive.
    """

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head_limit = head_bytes
        self._tail_limit = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add the next piece of the stream."""
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail += chunk
        excess = len(self._tail) - self._tail_limit
        if excess > 0:
            del self._tail[:excess]

    @property
    def dropped(self) -> int:
        """How many bytes from the middle were discarded."""
        return self.total - len(self._head) - len(self._tail)

    def text(self, limit: int) -> str:
        """The stream decoded, ANSI-stripped and capped to about `limit` characters."""
        if self.dropped == 0:
            return cap_head_tail(strip_ansi(_decode(self._head + self._tail)), limit)
        head = strip_ansi(_decode(self._head))[: limit // 2]
        tail_len = limit - limit // 2
        tail = strip_ansi(_decode(self._tail))[-tail_len:] if tail_len else ""
        shown = len(head.encode()) + len(tail.encode())
        return join_head_tail(head, tail, f"{max(self.total - shown, 0)} bytes of output")


def _decode(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")
