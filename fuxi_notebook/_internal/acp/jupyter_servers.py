"""The kernel of a notebook open on a running Jupyter server on this machine
(`fuxi-acp --notebook PATH`): the servers' info files in the Jupyter runtime folder
(`jpserver-*.json`: url, token, root folder, pid), each live server's `/api/sessions`
(which notebook path has which kernel), and that kernel's connection file
(`kernel-ID.json` in the same folder). Only loopback servers are asked."""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["NoKernel", "kernel_of_notebook"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class NoKernel(Exception):
    """No running server here has a kernel for that notebook (the message says why)."""


def kernel_of_notebook(notebook: str | Path, *, runtime_dir: str | Path | None = None
                       ) -> Path:
    """The connection file of the kernel that `notebook` runs on."""
    from jupyter_core.paths import jupyter_runtime_dir

    target = Path(notebook).expanduser().resolve()
    folder = Path(runtime_dir or jupyter_runtime_dir())
    servers = list(_servers(folder))
    if not servers:
        raise NoKernel(f"no Jupyter server is running here (none in {folder})")
    for server in servers:
        for session in _sessions(server):
            path = (Path(server.get("root_dir") or "") / str(session.get("path", ""))).resolve()
            kernel = (session.get("kernel") or {}).get("id")
            if path == target and isinstance(kernel, str):
                found = folder / f"kernel-{kernel}.json"
                if not found.is_file():
                    raise NoKernel(f"the kernel of {target} has no connection file in "
                                   f"{folder} (is it a remote kernel?)")
                return found
    raise NoKernel(f"no running Jupyter server has a kernel for {target} (open it and "
                   "start its kernel first)")


def _servers(folder: Path) -> Any:
    if not folder.is_dir():
        return
    for info_file in sorted(folder.glob("jpserver-*.json")):
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and _alive(info.get("pid")) and urllib.parse.urlsplit(
                str(info.get("url", ""))).hostname in _LOOPBACK:
            yield info


def _alive(pid: Any) -> bool:
    """Whether the server's process runs (another user's counts as running)."""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _sessions(server: dict[str, Any]) -> list[dict[str, Any]]:
    url = str(server["url"]).rstrip("/") + "/api/sessions"
    token = str(server.get("token", ""))
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # loopback only
            found = json.loads(answer.read())
    except (OSError, ValueError):
        return []
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []
