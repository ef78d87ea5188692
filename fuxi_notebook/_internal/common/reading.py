"""The one reader of files the product did not write: bounded, regular files only, never
through a symlink that leaves the folder they belong to.

A checkout is written by whoever wrote the repository. `FUXI.md -> ~/.ssh/id_rsa` would put
a private key into the system prompt (and so into an API request); a FIFO named
`settings.json` would block the session forever; a 2 GB `FUXI.md`, or `zz.ipynb ->
/dev/zero` (whose size reads 0), would fill memory. So every such file (settings, MCP,
trust, plugin, agent, command, skill and style files, FUXI.md, notebooks, Jupyter's
server files) is opened by `_open_regular`: it must resolve inside its zone when it has
one (the project's folder, or the git root above it), be a regular file by `stat` and
again by `fstat` on the descriptor (opened with O_NONBLOCK, so a FIFO swapped in cannot
block the open, and O_NOFOLLOW), and it is read to a cap checked on the open file and
enforced while reading (`limit + 1` at most). `read_inside` keeps the first `limit`
characters of a text (FUXI.md is cut, not refused); `read_bounded` refuses a file over
its cap, and `read_json_file` / `load_json` add UTF-8 and a nesting-depth cap. Their
failures are `Unreadable`, a ConfigurationError of one line naming the file, which a
notebook cell shows as a UsageError and the command line as one line and exit status 2.

Whatever is wrong with a configuration file or JSON string (not UTF-8, unreadable, invalid,
nested 100,000 deep), `config_errors` and `parse_json` make it one ConfigurationError that
names it: every reader of settings, MCP, trust, plugin, agent, command, skill and style
files goes through them, so none of those reaches a notebook cell as a traceback.

What was read from configuration files is kept while the files stay as they were
(`remembered`, `note`, at the end of this module): a warm process runs query after query
in one folder, and each read the same settings files, FUXI.md files and output styles
again. `remembered(key, load)` runs `load` while
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

import contextlib
import contextvars
import json
import os
import stat
import time
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ...errors import ConfigurationError

__all__ = ["MAX_CONFIG_DEPTH", "MAX_JSON_FILE_BYTES", "RACY_SECONDS", "Outside", "ReadResult",
           "Unreadable", "check_depth", "config_errors", "environment", "forget_all",
           "load_json", "note", "parse_json", "read_bounded", "read_config", "read_inside",
           "read_json_file", "remembered"]

#: a configuration value nested deeper is refused: no real one comes close, and the code
#: that walks values (repr, json.dumps, pydantic, redaction) must stay far from the
#: recursion limit, however deep the stack it runs in (a kernel's is deep)
MAX_CONFIG_DEPTH = 64
#: the most bytes of a JSON file read by `read_json_file` unless its caller says otherwise
MAX_JSON_FILE_BYTES = 8 << 20


class Unreadable(ConfigurationError):
    """A file the product did not write cannot be read as asked (one line: which, and why)."""


class Outside(Unreadable, ValueError):
    """The file cannot be read as a project file: it leads outside its folder, or is not a
    regular file (the message says why, for a warning)."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


def _not_regular(path: Path, mode: int) -> Outside:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return Outside(f"{path} is not a regular file ({kind}); it was not read")


def _open_regular(path: Path, zone: Path | None) -> int | None:
    """A descriptor open for reading on the regular file `path`, or None when there is no
    such file (a dangling symlink is none). Raises `Outside` when it resolves outside
    `zone` (None: no such check, for the user's own files) or is not a regular file, and
    OSError when it cannot be opened. Opening never blocks and never follows a link
    swapped in after the checks."""
    note(path)  # a remembered load (below) depends on it
    if not os.path.lexists(path):
        return None
    real = Path(os.path.realpath(path))
    if zone is not None and not real.is_relative_to(os.path.realpath(zone)):
        raise Outside(f"{path} leads outside {zone} (to {real}); it was not read")
    try:
        found = os.stat(real)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):  # said before opening: opening a device can act
        raise _not_regular(path, found.st_mode)
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NOCTTY", 0))
    descriptor = os.open(real, flags)
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):  # swapped after the stat
        os.close(descriptor)
        raise _not_regular(path, mode)
    return descriptor


def read_bounded(path: Path, *, limit: int, where: str, zone: Path | None = None
                 ) -> bytes | None:
    """The whole content of the regular file `path` (None: no such file), at most `limit`
    bytes. Raises `Unreadable` naming `where` for anything else: not a regular file,
    outside `zone`, larger than `limit` (by its size, or while reading: a file can grow),
    not readable."""
    try:
        descriptor = _open_regular(path, zone)
    except Outside as why:
        raise Outside(f"{where}: {why}") from None
    except OSError as error:
        raise Unreadable(f"{where}: {error.strerror or error}") from None
    if descriptor is None:
        return None
    try:
        size = os.fstat(descriptor).st_size
        if size > limit:
            raise Unreadable(f"{where}: it is larger than the limit of {limit:,} bytes "
                             f"({size:,} bytes)")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(descriptor, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as error:
        raise Unreadable(f"{where}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    if left <= 0:
        raise Unreadable(f"{where}: it is larger than the limit of {limit:,} bytes")
    return b"".join(chunks)


@dataclass(frozen=True)
class ReadResult:
    """A file's text (at most `limit` characters) and whether it was longer."""

    path: Path
    text: str
    truncated: bool


def read_inside(path: Path, zone: Path | None, limit: int) -> ReadResult | None:
    """The text of `path` (its first `limit` characters), or None when there is no such
    file.

    `zone` None: no symlink check (the user's own files). Raises `Outside` when the file
    resolves outside `zone` or is not a regular file, and OSError / UnicodeDecodeError
    when it cannot be read.
    """
    descriptor = _open_regular(path, zone)
    if descriptor is None:
        return None
    with os.fdopen(descriptor, encoding="utf-8", errors="strict") as handle:
        text = handle.read(limit + 1)
    return ReadResult(path=path, text=text[:limit], truncated=len(text) > limit)


def read_config(path: Path, zone: Path | None, limit: int, what: str) -> str | None:
    """A configuration file's whole text (None: no such file). Raises `Outside` as
    `read_inside` does, and ConfigurationError (naming `what` and the file) when it
    cannot be read or is longer than `limit`: half a configuration is never used."""
    with config_errors(f"{what} {path}"):
        read = read_inside(path, zone, limit)
    if read is None:
        return None
    if read.truncated:
        raise ConfigurationError(f"{what} {path} is larger than {limit} characters")
    return read.text


@contextlib.contextmanager
def config_errors(where: str) -> Iterator[None]:
    """Reading or parsing the configuration `where` names ("settings file /p/x.json"): any
    failure becomes one ConfigurationError line `<where>: <why>`. `Outside` passes: its
    callers skip the file with a warning."""
    try:
        yield
    except (ConfigurationError, Outside):
        raise
    except json.JSONDecodeError as error:
        why = f"invalid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
    except RecursionError:
        why = "nested too deeply to read"
    except MemoryError:
        why = "too large to read"
    except UnicodeDecodeError as error:
        why = f"not UTF-8 text ({error.reason} at byte {error.start})"
    except OSError as error:
        why = error.strerror or str(error)
    except ValueError as error:
        why = str(error)
    else:
        return
    raise ConfigurationError(f"{where}: {' '.join(why.split())}") from None


def read_json_file(path: Path, where: str, *, limit: int = MAX_JSON_FILE_BYTES,
                   zone: Path | None = None, depth: int = MAX_CONFIG_DEPTH) -> Any:
    """The JSON file at `path`, read by `read_bounded` (`where` names it in errors: "<where>
    does not exist", and whatever `read_bounded` and `load_json` say)."""
    data = read_bounded(path, limit=limit, where=where, zone=zone)
    if data is None:
        raise Unreadable(f"{where} does not exist")
    return load_json(data, where, depth=depth)


def load_json(data: bytes, where: str, *, depth: int = MAX_CONFIG_DEPTH) -> Any:
    """The bytes of a file as JSON: UTF-8 (a leading byte-order mark allowed), at most
    `depth` deep; else `Unreadable` naming `where`."""
    try:
        with config_errors(where):
            text = data.decode("utf-8-sig")
        return parse_json(text, where, depth=depth)
    except Unreadable:
        raise
    except ConfigurationError as error:
        raise Unreadable(str(error)) from None


def parse_json(text: str, where: str, *, depth: int = MAX_CONFIG_DEPTH) -> Any:
    """`text` as JSON, at most `depth` deep; else ConfigurationError naming `where`."""
    with config_errors(where):
        data = json.loads(text)
    check_depth(data, where, depth)
    return data


def check_depth(value: Any, where: str, limit: int = MAX_CONFIG_DEPTH) -> None:
    """ConfigurationError if `value` nests lists / dicts deeper than `limit`.

    Iterative and depth-first, so neither a deep value nor a cycle (a Python value can
    hold itself) can recurse or loop: the first path past the limit ends it."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (item.values() if isinstance(item, Mapping)
                    else item if isinstance(item, list | tuple) else None)
        if children is None:
            continue
        if depth > limit:
            raise ConfigurationError(f"{where}: nested too deeply (more than {limit} levels)")
        stack.extend((child, depth + 1) for child in children)


# -- remembered readings ------------------------------------------------------------------

#: a path modified more recently than this makes a result not kept
RACY_SECONDS = 1.0
_RACY_NS = int(RACY_SECONDS * 1e9)
_MAX_KEPT = 64

_T = TypeVar("_T")
_Signature = tuple[tuple[int, ...] | None, tuple[int, ...] | None]
#: the paths the innermost `remembered` load has noted, with their signatures
_NOTED: contextvars.ContextVar[dict[str, _Signature] | None] = contextvars.ContextVar(
    "fuxi_reading_noted", default=None)
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


def environment() -> tuple[Any, ...]:
    """The process environment as a snapshot to compare (its raw items: decoding every
    value each time cost more than what the callers keep)."""
    raw = getattr(os.environ, "_data", None)
    return tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())


def _racy(signatures: dict[str, _Signature], now_ns: int) -> bool:
    return any(stat is not None and max(stat[4], stat[5]) > now_ns - _RACY_NS
               for pair in signatures.values() for stat in pair)


def remembered(key: Hashable, load: Callable[[], _T]) -> _T:
    """`load()`, or what it returned last time for `key` while nothing it noted changed.

    The caller must not change the result: it is shared with later calls."""
    kept = _KEPT.get(key)
    environment_now = environment()
    if kept is not None and kept[1] == environment_now and all(
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
        _KEPT[key] = (noted, environment_now, value)
    return value


def forget_all() -> None:
    """Drop every kept result (a test, or a caller that changed files behind the stamps)."""
    _KEPT.clear()
