"""Environment switches that change what the agent may do, read once per process.

`IS_SANDBOX` (permits `bypassPermissions` as root), `FUXI_FRONTEND` (whether anyone can
answer an approval) and `FUXI_REPLAY` (whether a headless run re-executes recorded calls)
widen or redirect the policy; so does where the user's own settings are read from;
`FUXI_MAX_BUDGET_USD` (what all the `%%fuxi` cells of a kernel may spend) bounds it. Code
the model runs in the kernel can set `os.environ`; a switch read at decision time would
let it grant itself more. So the values are taken when this module is first imported — at
`%load_ext`, or at the first use of the package in a script — and later changes to the
environment are ignored (say so in the README). Tests change them through
`pytest.MonkeyPatch.setitem(switches.VALUES, ...)`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from .config_folder import PROJECT_FOLDER

__all__ = ["CONFIG_DIR", "NAMES", "VALUES", "config_dir", "config_dir_of", "config_dirs",
           "pin_config_dir", "switch"]

NAMES = ("IS_SANDBOX", "FUXI_FRONTEND", "FUXI_REPLAY", "FUXI_MAX_BUDGET_USD")
#: the values at load; integrity checks (`permissions/integrity.py`) watch this dict
VALUES: dict[str, str | None] = {name: os.environ.get(name) for name in NAMES}
#: The key under which a kernel pins its user folder (`pin_config_dir`).
CONFIG_DIR = "config_dir"


def switch(name: str) -> str | None:
    """The value `name` had in the environment when the package was loaded."""
    return VALUES.get(name)


def pin_config_dir(path: str) -> None:
    """Fix the user folder (settings, trust store, sessions) for this process. A kernel
    does it at `%load_ext`: code the model runs there can set `HOME` or `FUXI_CONFIG_DIR`,
    and a later cell must not read another folder's settings as the user's own. A
    script's folder stays read on each call (tests point it away per test)."""
    VALUES[CONFIG_DIR] = path


#: a session's own user folder (its `options.env["FUXI_CONFIG_DIR"]`), while it is read
_SESSION_DIR: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "fuxi_session_config_dir", default=None)


@contextlib.contextmanager
def config_dir_of(env: Mapping[str, Any] | None) -> Iterator[None]:
    """Within the block, the user folder is `env["FUXI_CONFIG_DIR"]` when given: a
    session's `options.env` is the environment the comparable SDK starts its CLI with,
    so code that points it at another folder there gets that folder's settings, agents
    and sessions here. Use it around synchronous reads only (it is a context variable,
    and an `await` inside would let other tasks see it); a kernel's pin still wins."""
    configured = (env or {}).get("FUXI_CONFIG_DIR")
    token = _SESSION_DIR.set(Path(str(configured)).expanduser() if configured else None)
    try:
        yield
    finally:
        _SESSION_DIR.reset(token)


def config_dir() -> Path:
    """The user folder: `FUXI_CONFIG_DIR`, else `~/.fuxi`; as pinned at `%load_ext` in a
    kernel (`pin_config_dir`), else a session's own (`config_dir_of`), else read on each
    call (so tests can point it away)."""
    return config_dirs()[0]


@lru_cache(maxsize=64)
def _process_dir(configured: str | None, home: str | None) -> Path:
    """The process's user folder for FUXI_CONFIG_DIR and HOME (`Path.home()` reads
    HOME, and is slow: every reader of settings asks for the folder)."""
    return Path(configured).expanduser() if configured else Path.home() / PROJECT_FOLDER


def config_dirs() -> tuple[Path, ...]:
    """Every user folder in force, the one in use first: a session's own
    (`config_dir_of`), then the process's. Writing into any of them needs confirmation
    (permissions/paths.py): a session pointed at another folder must not edit the
    process's, nor its own, unasked."""
    pinned = VALUES.get(CONFIG_DIR)
    if pinned:
        return (Path(pinned),)
    process = _process_dir(os.environ.get("FUXI_CONFIG_DIR"), os.environ.get("HOME"))
    session = _SESSION_DIR.get()
    return (session, process) if session is not None and session != process else (process,)
