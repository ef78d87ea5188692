"""Stream a window of lines out of a text file of any size, for the Read tool.

Files are read line by line, so asking for lines 10-20 of a 1 GB log costs a scan but not
1 GB of memory; only the requested lines are decoded and kept.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NoReturn

from ..base import ToolError
from ..truncate import cap_line

__all__ = ["MAX_LINE_CHARS", "Window", "read_window"]

MAX_LINE_CHARS = 2000
"""Displayed characters per line; longer lines are cut with a marker."""
MAX_LINE_BYTES = 10 * 1024 * 1024
"""A displayed line longer than this is refused instead of loaded."""
MAX_WINDOW_CHARS = 100_000
"""Stop adding lines once the window holds this much text (the rest stays readable)."""
_SNIFF_BYTES = 8192
_CHUNK = 1 << 20


@dataclass
class Window:
    """The lines shown (already cut), where they start (1-based) and the file's length."""

    lines: list[str]
    first: int
    total: int


def read_window(path: Path, first: int, count: int) -> Window:
    """Lines `first`..`first+count-1` of `path`, plus the total number of lines."""
    with path.open("rb") as handle:
        _sniff(handle, path)
        skipped = 0
        while skipped < first - 1 and _skip_line(handle):
            skipped += 1
        lines = _take_lines(handle, path, skipped + 1, count)
        total = skipped + len(lines) + _count_rest(handle)
    return Window(lines=lines, first=skipped + 1, total=total)


def _sniff(handle: BinaryIO, path: Path) -> None:
    """Refuse binary files early: NUL bytes or invalid UTF-8 in the first block."""
    head = handle.read(_SNIFF_BYTES)
    handle.seek(0)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        _binary(path)
    if b"\x00" in head:
        _binary(path)


def _binary(path: Path) -> NoReturn:
    raise ToolError(
        f"Cannot read {path}: it looks like a binary file (not UTF-8 text). Use Bash with a "
        "suitable tool (e.g. `file`, `xxd | head`, `strings`) to inspect it."
    )


def _skip_line(handle: BinaryIO) -> bool:
    """Consume one line without keeping it (however long); False at end of file."""
    piece = handle.readline(_CHUNK)
    if not piece:
        return False
    while not piece.endswith(b"\n"):
        piece = handle.readline(_CHUNK)
        if not piece:
            break
    return True


def _take_lines(handle: BinaryIO, path: Path, number: int, count: int) -> list[str]:
    """Up to `count` decoded lines, stopping early once the window text gets too big."""
    lines: list[str] = []
    size = 0
    while len(lines) < count and (not lines or size < MAX_WINDOW_CHARS):
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        if len(raw) > MAX_LINE_BYTES:
            raise ToolError(
                f"Line {number} of {path} is longer than 10 MB and cannot be shown. Use "
                f"Bash (e.g. `sed -n '{number}p' FILE | cut -c1-2000`) to look at part of it."
            )
        line = _decode(raw, number, path)
        lines.append(line)
        size += len(line) + 8
        number += 1
    return lines


def _decode(raw: bytes, number: int, path: Path) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"Cannot read {path}: line {number} is not valid UTF-8, so this looks like a "
            "binary or non-UTF-8 file. Use Bash (e.g. `iconv`, `xxd`) to inspect it."
        ) from None
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return cap_line(text, MAX_LINE_CHARS)


def _count_rest(handle: BinaryIO) -> int:
    """Lines left after the current position (a last line without newline counts)."""
    count = 0
    last = b"\n"
    while chunk := handle.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)
