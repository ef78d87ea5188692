"""Shared helpers for the settings tests: files, and waiting for evidence."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def user_dir() -> Path:
    """The user folder the test-wide fixture set up (never the real ~/.fuxi)."""
    return Path(os.environ["FUXI_CONFIG_DIR"])


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def project_settings(root: Path, data: Any, name: str = "settings.json") -> Path:
    return write_json(root / ".fuxi" / name, data)


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting to be reaped does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


async def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll until `condition` holds (evidence, not a fixed sleep)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the condition"
        await asyncio.sleep(0.01)


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
