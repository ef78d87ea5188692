"""The API key an `apiKeyHelper` command prints: run, checked, cached, refreshed, secret.

A gateway that wants short-lived keys gives its users a command that prints one (the
comparable CLI's `apiKeyHelper` setting). `KeyHelper` runs that command and hands out its
output as the API key:

    helper = KeyHelper("vault read -field=key secret/llm", cwd=project_root,
                       origin="user settings /home/me/.fuxi/settings.json")
    key = await helper.key()                  # before a request: cached, re-run after the TTL
    ...                                       # the API answered 401 to `key`:
    key = await helper.refresh(rejected=key)  # run again (once, however many callers ask)

How it runs: `/bin/sh -c <command>` in `cwd`, in a process group of its own, stdin empty,
stderr discarded, stdout stripped of surrounding blank space; a timeout (`timeout`, default
`DEFAULT_TIMEOUT` s) or a cancelled caller kills the whole group, and so does the shell's
exit (a child left behind, `sleep 100 &`, goes with it). The output must be one line of
visible ASCII (what an HTTP header can carry); anything else (the command cannot start,
exits non-zero, is killed, times out, prints nothing, several lines, more than `MAX_OUTPUT`
bytes) is one `ConfigurationError` line naming where the helper came from, never its
output: that could be the key, or part of it.

The key is kept in memory only (never in the environment, a file or an error) for the TTL:
`FUXI_API_KEY_HELPER_TTL_MS` in `env` (or the process environment; default 5 minutes, as
the comparable CLI's), after which the next `key()` runs the command again; `refresh()`
runs it at once (the caller got a 401). Callers in one event loop share one run: while it
is under way, every `key()` and `refresh()` waits for that run, and the command is stopped
only when every one of them was cancelled.

Every key a helper printed is a secret of the process (`helper_keys()`): the redaction
(`sessions/redact.py`) replaces it wherever text is shown or stored, as it does the values
of secret-named environment variables.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ....errors import ConfigurationError
from ...common.process.group import kill_group, spawn_group

__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_TTL_MS", "MAX_OUTPUT", "TTL_VARIABLE", "KeyHelper",
           "helper_keys", "ttl_ms_from"]

#: the variable that sets how long a key is used before the command runs again
TTL_VARIABLE = "FUXI_API_KEY_HELPER_TTL_MS"
#: milliseconds a key is used when `TTL_VARIABLE` is not set (the comparable CLI's 5 minutes)
DEFAULT_TTL_MS = 5 * 60 * 1000
#: seconds the command may run (a single sign-on helper can take a while)
DEFAULT_TIMEOUT = 60.0
#: bytes of output read at most (a key is well under a kilobyte)
MAX_OUTPUT = 64 << 10
#: keys shorter than this are used but not redacted (replacing "abc" everywhere would
#: destroy every text and protect nothing; the environment's secrets follow the same rule)
MIN_REDACTED = 8
#: how many keys of this process are remembered for redaction (a key changes every few
#: minutes at most: a long-running kernel stays far below)
_MAX_REMEMBERED = 256
#: seconds the pipe gets to deliver what the command printed once its shell has exited
_READ_GRACE = 0.5
_POLL = 0.005
_KEY_SHAPE = re.compile(r"[\x21-\x7e]+")

_REMEMBERED: dict[str, None] = {}  # insertion-ordered: the oldest goes first


class _Keys:
    """The keys of `_REMEMBERED` as one frozen set, rebuilt when a key is added (the
    redaction asks for it on every text it redacts)."""

    current: frozenset[str] = frozenset()


def helper_keys() -> frozenset[str]:
    """Every key a helper of this process printed (at least `MIN_REDACTED` characters):
    secrets the redaction replaces wherever text is shown or stored."""
    return _Keys.current


def _remember(key: str) -> None:
    if len(key) < MIN_REDACTED or key in _REMEMBERED:
        return
    _REMEMBERED[key] = None
    while len(_REMEMBERED) > _MAX_REMEMBERED:
        del _REMEMBERED[next(iter(_REMEMBERED))]
    _Keys.current = frozenset(_REMEMBERED)


def ttl_ms_from(env: Mapping[str, str]) -> int:
    """`FUXI_API_KEY_HELPER_TTL_MS` of `env` as milliseconds (`DEFAULT_TTL_MS` when unset);
    anything but a whole number >= 0 is a ConfigurationError."""
    raw = env.get(TTL_VARIABLE)
    if raw is None or not raw.strip():
        return DEFAULT_TTL_MS
    text = raw.strip()
    if not text.isdigit():
        raise ConfigurationError(f"{TTL_VARIABLE} must be a whole number of milliseconds "
                                 f"(0 or more), not {raw!r}")
    return int(text)


@dataclass
class _Run:
    """One run of the command, shared by the callers of one event loop."""

    loop: asyncio.AbstractEventLoop
    task: asyncio.Task[str]
    waiters: int = 0


@dataclass
class _Ended:
    """How the command ended: its exit status (None: killed after the timeout) and the
    bytes it printed (at most `MAX_OUTPUT` + 1)."""

    status: int | None
    output: bytes = field(default=b"", repr=False)


class KeyHelper:
    """The API key of an `apiKeyHelper` command (see the module docstring).

    Args:
        command: the shell command, as the setting holds it.
        cwd: the folder it runs in (the project folder).
        origin: where the setting came from, for error lines ("user settings <path>").
        env: variables set for the command over the process environment; its
            `FUXI_API_KEY_HELPER_TTL_MS` (else the process's) sets the TTL.
        ttl_ms: the TTL in milliseconds, instead of the variable.
        timeout: seconds the command may run.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, command: str, *, cwd: Path | str, origin: str = "settings",
                 env: Mapping[str, str] | None = None, ttl_ms: int | None = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not isinstance(command, str) or not command.strip():
            raise ConfigurationError(f"the apiKeyHelper of {origin} must be a non-empty "
                                     "command")
        self.command, self.cwd, self.origin = command, Path(cwd), origin
        self.env = dict(env or {})
        if ttl_ms is None:
            ttl_ms = ttl_ms_from({**os.environ, **self.env})
        elif isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
            raise ConfigurationError(f"the apiKeyHelper's TTL must be a whole number of "
                                     f"milliseconds (0 or more), not {ttl_ms!r}")
        self.ttl = ttl_ms / 1000
        self.timeout = timeout
        self._clock = clock
        self._key: str | None = None
        self._fetched_at = 0.0
        self._run: _Run | None = None
        self.runs = 0  # how many times the command was started (for `%fuxi` and tests)

    def __repr__(self) -> str:  # never the key
        state = "a key cached" if self._key is not None else "no key yet"
        return f"KeyHelper(apiKeyHelper of {self.origin}, {state})"

    def cached(self) -> str | None:
        """The key while it is within its TTL, without running anything (None: `key()`
        would run the command)."""
        if self._key is not None and self._clock() - self._fetched_at < self.ttl:
            return self._key
        return None

    async def key(self) -> str:
        """The key: the cached one within its TTL, else the command's output (a run under
        way in this event loop is joined, not repeated). Raises ConfigurationError."""
        cached = self.cached()
        if cached is not None:
            return cached
        return await self._shared()

    async def refresh(self, rejected: str | None = None) -> str:
        """Run the command again and return its key: the API refused the key. With
        `rejected` (the key that was refused), a key that differs from it and came from a
        run since is returned as it is: several requests refused at once run it once."""
        if rejected is not None:
            cached = self.cached()
            if cached is not None and cached != rejected:
                return cached
        self.invalidate()
        return await self._shared()

    def invalidate(self) -> None:
        """Forget the cached key: the next `key()` runs the command."""
        self._key = None

    async def _shared(self) -> str:
        loop = asyncio.get_running_loop()
        run = self._run
        if run is None or run.loop is not loop or run.task.done():
            run = self._run = _Run(loop, loop.create_task(self._fetch()))
            run.task.add_done_callback(_retrieve)
        run.waiters += 1
        try:
            return await asyncio.shield(run.task)
        finally:
            run.waiters -= 1
            if run.waiters == 0 and not run.task.done():
                run.task.cancel()  # nobody waits for it any more: stop the command
            if self._run is run and run.task.done():
                self._run = None

    async def _fetch(self) -> str:
        self.runs += 1
        try:
            ended = await _run_command(self.command, cwd=self.cwd,
                                       env={**os.environ, **self.env}, timeout=self.timeout)
        except OSError as error:
            raise self._failed(f"could not start: {error.strerror or type(error).__name__}"
                               ) from None
        key = self._checked(ended)
        self._key, self._fetched_at = key, self._clock()
        _remember(key)
        return key

    def _checked(self, ended: _Ended) -> str:
        """The key in the output of a run that ended, or a ConfigurationError that says
        what was wrong without showing any of it."""
        if ended.status is None:
            raise self._failed(f"did not finish within {self.timeout:g} s and was stopped")
        if ended.status < 0:
            raise self._failed(f"was killed by signal {-ended.status}")
        if ended.status != 0:
            raise self._failed(f"exited with status {ended.status}")
        if len(ended.output) > MAX_OUTPUT:
            raise self._failed(f"printed more than {MAX_OUTPUT} bytes")
        try:
            text = ended.output.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise self._failed("printed bytes that are not UTF-8") from None
        if not text:
            raise self._failed("printed nothing")
        if "\n" in text or "\r" in text:
            raise self._failed("printed more than one line; it must print the key alone")
        if not _KEY_SHAPE.fullmatch(text):
            raise self._failed("printed characters an API key cannot hold (spaces, "
                               "control or non-ASCII characters)")
        return text

    def _failed(self, what: str) -> ConfigurationError:
        return ConfigurationError(
            f"the apiKeyHelper of {self.origin} {what} (its output is not shown: it may "
            "hold the key; run the command in a terminal to see its messages)")


def _retrieve(task: asyncio.Task[str]) -> None:
    """Mark a run's failure as seen (its callers may all have gone)."""
    if not task.cancelled():
        task.exception()


async def _run_command(command: str, *, cwd: Path, env: Mapping[str, str],
                       timeout: float) -> _Ended:
    """Run `command` with `/bin/sh -c` in a process group of its own (see the module
    docstring). Raises OSError when it cannot start; cancellation kills the group."""
    proc = await spawn_group(
        "/bin/sh", "-c", command, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=cwd,
        env=dict(env))
    assert proc.stdout is not None
    reader = asyncio.ensure_future(_read_capped(proc.stdout))
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            return _Ended(None)
        finally:
            kill_group(proc.pid)  # what the shell left behind, or all of it
        done, _ = await asyncio.wait([reader], timeout=_READ_GRACE)
        return _Ended(proc.returncode, reader.result() if done else b"")
    finally:
        kill_group(proc.pid)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(proc.wait(), _READ_GRACE)
        transport = getattr(proc, "_transport", None)  # the pipes closed now, not at
        if transport is not None:                       # garbage collection
            transport.close()


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    """Up to `MAX_OUTPUT` + 1 bytes of `stream` (one more tells it was too long), the rest
    read and dropped so the command never blocks on a full pipe."""
    kept = bytearray()
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await stream.read(1 << 16):
            kept += chunk[:max(MAX_OUTPUT + 1 - len(kept), 0)]
    return bytes(kept)


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Until the shell has exited (not `proc.wait()`, which on Python 3.11 also waits for
    the pipes, which a child left behind may hold open)."""
    while proc.returncode is None:
        await asyncio.sleep(_POLL)


