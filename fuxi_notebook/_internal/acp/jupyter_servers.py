"""The kernel of a notebook open on a running Jupyter server on this machine
(`fuxi-acp --notebook PATH`): the servers' info files in the Jupyter runtime folder
(`jpserver-*.json`: url, token, root folder, pid), each live server's `/api/sessions`
(which notebook path has which kernel), and that kernel's connection file
(`kernel-ID.json` in the same folder). Only loopback servers are asked.

An info file is read as a file we did not write: bounded, a regular file only (never a
device or a FIFO), its JSON bounded in depth; one whose url, token or root folder no
request could carry (a tab, a newline, an escape, a port out of range, a value that is
not text) is skipped and named in the one line that says no kernel was found. What a
server answers is checked the same way: a kernel id names a file only when it is a plain
name.
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["NoKernel", "kernel_of_notebook"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: an info file or a server's answer longer than this is not read further
_MAX_INFO_CHARS = 1 << 20
_KERNEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
_NAMED_AT_MOST = 3


class NoKernel(Exception):
    """No running server here has a kernel for that notebook (the message says why)."""


@dataclass(frozen=True)
class _Server:
    url: str
    token: str
    root: Path


class _Unusable(Exception):
    """An info file that holds no server a request can reach (the message says why)."""


def kernel_of_notebook(notebook: str | Path, *, runtime_dir: str | Path | None = None
                       ) -> Path:
    """The connection file of the kernel that `notebook` runs on."""
    from jupyter_core.paths import jupyter_runtime_dir

    target = Path(notebook).expanduser().resolve()
    folder = Path(runtime_dir or jupyter_runtime_dir())
    skipped: list[str] = []
    servers = _servers(folder, skipped)
    if not servers:
        raise NoKernel(f"no Jupyter server is running here (none in {folder})"
                       f"{_skipped(skipped)}")
    for server in servers:
        for path, kernel in _sessions(server):
            if path == target:
                found = folder / f"kernel-{kernel}.json"
                if not found.is_file():
                    raise NoKernel(f"the kernel of {target} has no connection file in "
                                   f"{folder} (is it a remote kernel?)")
                return found
    raise NoKernel(f"no running Jupyter server has a kernel for {target} (open it and "
                   f"start its kernel first){_skipped(skipped)}")


def _skipped(skipped: list[str]) -> str:
    if not skipped:
        return ""
    more = len(skipped) - _NAMED_AT_MOST
    named = "; ".join(skipped[:_NAMED_AT_MOST]) + (f"; and {more} more" if more > 0 else "")
    return f"; skipped server info that is not usable: {named}"


def _servers(folder: Path, skipped: list[str]) -> list[_Server]:
    """The live loopback servers whose info files are in `folder`; each unusable info
    file is added to `skipped` with why."""
    found: list[_Server] = []
    if not folder.is_dir():
        return found
    for info_file in sorted(folder.glob("jpserver-*.json")):
        try:
            server = _server(info_file)
        except _Unusable as why:
            skipped.append(f"{info_file.name} ({why})")
            continue
        if server is not None:
            found.append(server)
    return found


def _server(info_file: Path) -> _Server | None:
    """The server `info_file` describes (None: not running, or not on this machine);
    raises _Unusable for a file that describes none."""
    from ...errors import ConfigurationError
    from ..common.reading import Outside, parse_json, read_inside

    try:
        read = read_inside(info_file, None, _MAX_INFO_CHARS)
        info = parse_json(read.text, "it") if read is not None and not read.truncated \
            else None
    except (Outside, OSError, UnicodeDecodeError, ConfigurationError) as error:
        why = str(error).replace(str(info_file), "it").removeprefix("it: ")
        raise _Unusable(" ".join(why.split())) from None
    if read is None:
        return None
    if info is None:
        raise _Unusable(f"larger than {_MAX_INFO_CHARS} characters")
    if not isinstance(info, dict):
        raise _Unusable("not a JSON object")
    if not _alive(info.get("pid")):
        return None  # a server that stopped without removing its file
    url, token, root = info.get("url"), info.get("token", ""), info.get("root_dir", "")
    if not isinstance(url, str) or not _plain(url):
        raise _Unusable("its url is not one line of printable ASCII")
    if not isinstance(token, str) or not _plain(token):
        raise _Unusable("its token is not one line of printable ASCII")
    if not isinstance(root, str) or "\0" in root:
        raise _Unusable("its root_dir is not a folder's path")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is none
    except ValueError as error:
        raise _Unusable(f"its url cannot be used: {error}") from None
    if parts.scheme not in ("http", "https") or parts.hostname not in _LOOPBACK:
        return None  # only this machine's servers are asked
    return _Server(url, token, Path(root))


def _plain(text: str) -> bool:
    """Printable ASCII without spaces: what a URL or a header's token may hold."""
    return text.isascii() and text.isprintable() and " " not in text


def _alive(pid: Any) -> bool:
    """Whether the server's process runs (another user's counts as running)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True


def _sessions(server: _Server) -> list[tuple[Path, str]]:
    """(notebook path, kernel id) of each session the server has ([]: no usable answer)."""
    from ...errors import ConfigurationError
    from ..common.reading import parse_json

    url = server.url.rstrip("/") + "/api/sessions"
    request = urllib.request.Request(url, headers={"Authorization": f"token {server.token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # loopback only
            found = parse_json(answer.read(_MAX_INFO_CHARS).decode("utf-8"), url)
    except (OSError, ValueError, http.client.HTTPException, ConfigurationError):
        return []
    sessions: list[tuple[Path, str]] = []
    for session in found if isinstance(found, list) else []:
        kernel = session.get("kernel") if isinstance(session, dict) else None
        kernel_id = kernel.get("id") if isinstance(kernel, dict) else None
        path = session.get("path") if isinstance(session, dict) else None
        if not isinstance(kernel_id, str) or not _KERNEL_ID.fullmatch(kernel_id) or \
                not isinstance(path, str):
            continue
        try:
            sessions.append(((server.root / path).resolve(), kernel_id))
        except (OSError, ValueError):
            continue
    return sessions
