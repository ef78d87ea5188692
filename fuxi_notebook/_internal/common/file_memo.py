"""What was read from configuration files, kept while the files stay as they were.

A warm process runs query after query in one folder, and each read the same settings files,
FUXI.md files and output styles again. `remembered(key, load)` runs `load` while
recording every path it notes (`note(path)`: the readers call it before they look at a
path), and keeps the result with each path's signature: its `lstat` and `stat` (type,
inode, device, size, modification and change times), or None where there is nothing. The
next call with the same key returns the kept result when every signature, and the process
environment (`${VAR}` in an MCP config reads it), are unchanged; otherwise it loads again.

File systems stamp times from a coarse clock, so a second write within one tick can leave
every stamp as it was. A result is therefore not kept while any path it read was
modified in the last `RACY_SECONDS` (git's index has the same rule): a file written just
now is always read again.
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["RACY_SECONDS", "forget_all", "note", "remembered"]

#: a path modified more recently than this makes a result not kept
RACY_SECONDS = 1.0
_RACY_NS = int(RACY_SECONDS * 1e9)
_MAX_KEPT = 64

_T = TypeVar("_T")
_Signature = tuple[tuple[int, ...] | None, tuple[int, ...] | None]
#: the paths the innermost `remembered` load has noted, with their signatures
_NOTED: contextvars.ContextVar[dict[str, _Signature] | None] = contextvars.ContextVar(
    "fuxi_file_memo_noted", default=None)
_KEPT: dict[Hashable, tuple[dict[str, _Signature], tuple[Any, ...], Any]] = {}


def _stat(call: Callable[[str], os.stat_result], path: str) -> tuple[int, ...] | None:
    try:
        found = call(path)
    except (OSError, ValueError):  # no such path, or a name no file can have
        return None
    return (found.st_mode, found.st_ino, found.st_dev, found.st_size, found.st_mtime_ns,
            found.st_ctime_ns)


def _signature(path: str) -> _Signature:
    return _stat(os.lstat, path), _stat(os.stat, path)


def note(path: os.PathLike[str] | str) -> None:
    """`path` is about to be looked at (read, listed, tested) by a load being remembered."""
    noted = _NOTED.get()
    if noted is not None:
        name = os.fspath(path)
        if name not in noted:
            noted[name] = _signature(name)


def _environment() -> tuple[Any, ...]:
    raw = getattr(os.environ, "_data", None)
    return tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())


def _racy(signatures: dict[str, _Signature], now_ns: int) -> bool:
    return any(stat is not None and max(stat[4], stat[5]) > now_ns - _RACY_NS
               for pair in signatures.values() for stat in pair)


def remembered(key: Hashable, load: Callable[[], _T]) -> _T:
    """`load()`, or what it returned last time for `key` while nothing it noted changed.

    The caller must not change the result: it is shared with later calls."""
    kept = _KEPT.get(key)
    environment = _environment()
    if kept is not None and kept[1] == environment and all(
            _signature(path) == signature for path, signature in kept[0].items()):
        outer = _NOTED.get()
        if outer is not None:  # a load around this one depends on the same paths
            outer.update({p: s for p, s in kept[0].items() if p not in outer})
        return kept[2]  # type: ignore[no-any-return]
    now_ns = time.time_ns()
    noted: dict[str, _Signature] = {}
    token = _NOTED.set(noted)
    try:
        value = load()
    finally:
        _NOTED.reset(token)
    outer = _NOTED.get()
    if outer is not None:
        outer.update({p: s for p, s in noted.items() if p not in outer})
    if _racy(noted, now_ns):
        _KEPT.pop(key, None)
    else:
        if len(_KEPT) >= _MAX_KEPT:
            _KEPT.clear()
        _KEPT[key] = (noted, environment, value)
    return value


def forget_all() -> None:
    """Drop every kept result (a test, or a caller that changed files behind the stamps)."""
    _KEPT.clear()
