"""Fixtures for the MCP tests: the server script, HTTP servers in subprocesses, pid checks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("server_script.py")


def stdio_config(*flags: str) -> dict[str, object]:
    """A stdio server config running the test server with the venv's python."""
    return {"command": sys.executable, "args": [str(SCRIPT), *flags]}


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2:].split()[0] not in ("Z", "X")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _start_http(flag: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(SCRIPT), flag], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # printed once the socket listens
    assert line.strip().isdigit(), f"the test server did not start ({line!r})"
    port = int(line)
    with socket.create_connection(("127.0.0.1", port), timeout=30):
        pass  # it accepts connections
    return proc, port


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A streamable-HTTP test server on 127.0.0.1: (process, MCP endpoint URL)."""
    proc, port = _start_http("--http")
    yield proc, f"http://127.0.0.1:{port}/mcp"
    _stop(proc)


@pytest.fixture
def sse_server() -> Iterator[str]:
    """An HTTP+SSE test server on 127.0.0.1: its SSE endpoint URL."""
    proc, port = _start_http("--sse")
    yield f"http://127.0.0.1:{port}/sse"
    _stop(proc)
