"""Locate and run the ripgrep binary (`rg`) for the Glob and Grep tools.

ripgrep is used because it is fast on big trees and honours `.gitignore` (also outside git
repositories with `--no-require-git`), which keeps build output and vendored code out of
results. It always runs without a shell, and is killed if the tool call is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..base import ToolError

__all__ = ["COMMON_ARGS", "RgResult", "rg_path", "run_rg"]

COMMON_ARGS = ["--no-config", "--color", "never", "--hidden", "--no-require-git", "--glob", "!.git"]
"""Flags for every call: no user config, include dotfiles, honour ignore files, skip .git."""
_STDERR_LIMIT = 64 * 1024


@dataclass
class RgResult:
    """What one rg run produced; `truncated` means stdout hit the byte cap and rg was killed."""

    returncode: int
    stdout: str
    stderr: str
    truncated: bool


def rg_path() -> str:
    """The `rg` next to the venv's Python (from the `ripgrep` wheel), else the one on PATH."""
    local = Path(sys.executable).parent / "rg"
    if local.is_file():
        return str(local)
    found = shutil.which("rg")
    if found:
        return found
    raise ToolError(
        "ripgrep (`rg`) is not installed, so this search tool cannot run. Install the "
        "`ripgrep` Python package, or use Bash with find/grep instead."
    )


async def run_rg(args: list[str], cwd: Path, max_bytes: int) -> RgResult:
    """Run `rg *args` in `cwd`, keeping at most `max_bytes` of stdout."""
    try:
        proc = await asyncio.create_subprocess_exec(
            rg_path(),
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise ToolError(f"Could not run ripgrep in {cwd}: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(_read_capped(proc.stderr, _STDERR_LIMIT, drain=True))
    try:
        stdout, truncated = await _read_capped(proc.stdout, max_bytes, drain=False)
        if truncated:
            proc.kill()
        stderr, _ = await stderr_task
        returncode = await proc.wait()
    except BaseException:
        stderr_task.cancel()
        await _kill(proc)
        raise
    return RgResult(
        returncode=returncode,
        stdout=stdout.decode("utf-8", errors="replace"),
        stderr=stderr.decode("utf-8", errors="replace").strip(),
        truncated=truncated,
    )


async def _read_capped(
    stream: asyncio.StreamReader, limit: int, *, drain: bool
) -> tuple[bytes, bool]:
    """Read up to `limit` bytes; (data, True) if there was more.

    With `drain`, keep reading (and discarding) to EOF so rg never blocks on a full pipe;
    without it, return as soon as the cap is hit (the caller then kills rg).
    """
    data = bytearray()
    over = False
    while chunk := await stream.read(65536):
        if len(data) + len(chunk) > limit:
            data += chunk[: limit - len(data)]
            over = True
            if not drain:
                break
        else:
            data += chunk
    return bytes(data), over


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Stop rg after a cancellation or error, and reap it so no zombie is left."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await asyncio.shield(proc.wait())
