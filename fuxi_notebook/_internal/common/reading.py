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
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .file_memo import note

__all__ = ["MAX_CONFIG_DEPTH", "Outside", "ReadResult", "check_depth", "config_errors",
           "parse_json", "read_config", "read_inside", "read_json_file"]

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
    note(path)  # a remembered load (file_memo.py) depends on it
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
