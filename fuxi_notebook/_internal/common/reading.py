"""Reading a repository's files safely: bounded, regular files only, never through a
symlink that leaves the folder they belong to.

A checkout is written by whoever wrote the repository. `FUXI.md -> ~/.ssh/id_rsa` would put
a private key into the system prompt (and so into an API request); a FIFO named
`settings.json` would block the session forever; a 2 GB `FUXI.md` would fill memory. So
every file read from a project goes through `read_inside`: it must resolve inside its
zone (the project's folder, or the git root above it), be a regular file, and only the
first `limit` characters are read.

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

__all__ = ["MAX_CONFIG_DEPTH", "RACY_SECONDS", "Outside", "ReadResult", "check_depth",
           "config_errors", "environment", "forget_all", "note", "parse_json", "read_config",
           "read_inside", "read_json_file", "remembered"]

#: a configuration value nested deeper is refused: no real one comes close, and the code
#: that walks values (repr, json.dumps, pydantic, redaction) must stay far from the
#: recursion limit, however deep the stack it runs in (a kernel's is deep)
MAX_CONFIG_DEPTH = 64


class Outside(ValueError):
    """The file cannot be read as a project file (the message says why, for a warning)."""


@dataclass(frozen=True)
class ReadResult:
    """A file's text (at most `limit` characters) and whether it was longer."""

    path: Path
    text: str
    truncated: bool


def read_inside(path: Path, zone: Path | None, limit: int) -> ReadResult | None:
    """The text of `path`, or None when there is no such file.

    `zone` None: no symlink check (the user's own files). Raises `Outside` when the file
    resolves outside `zone` or is not a regular file, and OSError / UnicodeDecodeError
    when it cannot be read.
    """
    note(path)  # a remembered load (below) depends on it
    if not os.path.lexists(path):
        return None
    real = Path(os.path.realpath(path))
    if zone is not None and not real.is_relative_to(os.path.realpath(zone)):
        raise Outside(f"{path} leads outside {zone} (to {real}); it was not read")
    if not real.exists():
        return None  # a dangling symlink is no file
    # O_NONBLOCK: a FIFO swapped in after the check must not block the open; O_NOFOLLOW:
    # nor may a symlink swapped in for the resolved path be followed.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(real, flags)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise Outside(f"{path} is not a regular file; it was not read")
        with os.fdopen(descriptor, encoding="utf-8", errors="strict") as handle:
            descriptor = -1
            text = handle.read(limit + 1)
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    return ReadResult(path=path, text=text[:limit], truncated=len(text) > limit)


def read_config(path: Path, zone: Path | None, limit: int, what: str) -> str | None:
    """A configuration file's whole text (None: no such file). Raises `Outside` as
    `read_inside` does, and ConfigurationError (naming `what` and the file) when it
    cannot be read or is longer than `limit`: half a configuration is never used."""
    from ...errors import ConfigurationError

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
    from ...errors import ConfigurationError

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


def read_json_file(path: Path, where: str) -> Any:
    """The JSON file at `path` (`where` names it in errors: "<where> does not exist", and
    whatever `config_errors` and `parse_json` say)."""
    from ...errors import ConfigurationError

    with config_errors(where):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigurationError(f"{where} does not exist") from None
    return parse_json(text, where)


def parse_json(text: str, where: str) -> Any:
    """`text` as JSON, at most MAX_CONFIG_DEPTH deep; else ConfigurationError naming `where`."""
    with config_errors(where):
        data = json.loads(text)
    check_depth(data, where)
    return data


def check_depth(value: Any, where: str) -> None:
    """ConfigurationError if `value` nests lists / dicts deeper than MAX_CONFIG_DEPTH.

    Iterative and depth-first, so neither a deep value nor a cycle (a Python value can
    hold itself) can recurse or loop: the first path past the limit ends it."""
    from ...errors import ConfigurationError

    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (item.values() if isinstance(item, Mapping)
                    else item if isinstance(item, list | tuple) else None)
        if children is None:
            continue
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigurationError(f"{where}: nested too deeply (more than "
                                     f"{MAX_CONFIG_DEPTH} levels)")
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
