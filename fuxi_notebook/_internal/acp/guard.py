"""Where every ACP request is answered, and what the process prints: one clear line.

Each method the protocol's router calls on the agent runs through `answering`: a usage
error of ours (a ConfigurationError: a session id that names no session file, a folder
that is not one, an MCP server config that does not parse; a ValueError from a value no
path or name can hold) becomes `RequestError.invalid_params`, anything else unexpected
`RequestError.internal_error`, each with one line of details; a RequestError passes as it
is. So a traceback never answers a request, whatever method a new version of the protocol
adds. What the protocol library itself logs (a line that is not JSON, a notification
whose params do not validate) is one line on stderr too (`log_in_one_line`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from ...errors import ConfigurationError, FuxiSDKError
from ..common.visible import reveal

__all__ = ["MAX_LINE_CHARS", "AnsweringAgent", "answering", "describe", "log_in_one_line",
           "one_line"]

#: a line of details or of stderr is cut here (an echoed input can be any size)
MAX_LINE_CHARS = 500
#: what a usage error is: the client's to fix, answered with invalid params
_USAGE = (ConfigurationError, ValueError)
_PREFIX = "fuxi-acp: "


def one_line(text: str) -> str:
    """`text` on one line of at most MAX_LINE_CHARS, hidden characters escaped."""
    line = reveal(" ".join(text.split())).text
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS - 1]}…"
    return line


def describe(error: BaseException, *, where: bool = False) -> str:
    """One line for `error`: its message (a usage error's) or its type and message, and
    with `where`, the line of our code it came from (for an error that is a bug)."""
    message = str(error) or type(error).__name__
    if not where:
        return one_line(message)
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "fuxi_notebook" in f.filename] or frames
    place = f" (at {ours[-1].filename.rsplit('/', 1)[-1]}:{ours[-1].lineno})" if ours else ""
    return one_line(f"{type(error).__name__}: {message}{place}")


@contextlib.contextmanager
def answering(method: str) -> Iterator[None]:
    """Run a request's handler: what it raises leaves as one JSON-RPC error."""
    try:
        yield
    except RequestError:
        raise
    except ValidationError as error:  # a model we built, not the params (checked before)
        raise _internal(method, error) from None
    except _USAGE as error:
        raise RequestError.invalid_params({"details": describe(error)}) from None
    except FuxiSDKError as error:
        raise RequestError.internal_error({"details": describe(error)}) from None
    except Exception as error:
        raise _internal(method, error) from None


def _internal(method: str, error: Exception) -> RequestError:
    """An error that is ours, not the client's: one line on stderr, one in the answer."""
    line = describe(error, where=True)
    print(f"{_PREFIX}{method} failed: {line}", file=sys.stderr, flush=True)
    return RequestError.internal_error({"details": line})


class AnsweringAgent:
    """The agent as the protocol's router sees it: every coroutine method it has is
    called through `answering`; anything else (on_connect, attributes) is the agent's."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._agent, name)
        if name.startswith("_") or not inspect.iscoroutinefunction(found):
            return found
        return _answered(name, found)


def _answered(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def answered(*args: Any, **kwargs: Any) -> Any:
        with answering(name):
            return await method(*args, **kwargs)
    return answered


class _OneLine(logging.Formatter):
    """A log record as one line: its message and, for an exception, its type and text
    (never the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({describe(record.exc_info[1], where=True)})"
        return f"{_PREFIX}{one_line(text)}"


def log_in_one_line() -> None:
    """Every log record of this process (the protocol library's, asyncio's) as one line
    on stderr: the process's stdout is the protocol's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logging.basicConfig(handlers=[handler], level=logging.WARNING, force=True)
