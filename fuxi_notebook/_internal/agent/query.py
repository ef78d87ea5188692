"""`query()`: one-shot (or streaming-input) agent runs as an async iterator of messages.

Use `query()` for a single task; use `FuxiSDKClient` to keep one conversation across
many prompts, to send prompts while a turn runs, or to interrupt.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from ...errors import ConfigurationError, ResultError
from ...options import FuxiAgentOptions
from ...types import Message, ResultMessage
from ..common.foreign_loop import needs_bridge
from .loop.loop import run_prompt
from .loop.run import Run
from .mcp_link import start_servers
from .persist import open_session, recorded
from .project_link import load_project
from .subagents.background import TASK_ORIGIN, BackgroundAgents, wait_limit

__all__ = ["prompt_content", "prompt_origin", "prompt_verbatim", "query"]


def prompt_origin(message: Any) -> dict[str, Any] | None:
    """The `origin` a host stamped on a streaming-input message (None: none)."""
    origin = message.get("origin") if isinstance(message, dict) else None
    return dict(origin) if isinstance(origin, dict) else None


def prompt_verbatim(message: Any) -> bool:
    """Whether a streaming-input message is to be sent as typed: stamped
    `client_composed: true`, as the comparable SDK 0.2.189's `verbatim_prompts` stamps
    every message (no `/command`, no `/compact`, no `/clear`)."""
    return isinstance(message, dict) and message.get("client_composed") is True


def prompt_content(message: dict[str, Any] | str) -> str | list[dict[str, Any]]:
    """The content of a streaming-input message (`{"type": "user", "message": {...}}`)."""
    if isinstance(message, str):
        return message
    inner = message.get("message", message) if isinstance(message, dict) else None
    content = inner.get("content") if isinstance(inner, dict) else None
    if not isinstance(content, str | list):
        raise ConfigurationError(
            "a streaming-input message must look like "
            "{'type': 'user', 'message': {'role': 'user', 'content': '...'}}"
        )
    return content


async def query(
    *,
    prompt: str | AsyncIterable[dict[str, Any]],
    options: FuxiAgentOptions | None = None,
) -> AsyncGenerator[Message, None]:
    """Run the agent on `prompt` and yield its messages.

    Args:
        prompt: a string (one run), or an async iterable of user messages (streaming
            input: each message starts a run, in order, in one conversation).
        options: configuration; None = defaults. `resume`, `continue_conversation`,
            `fork_session`, `session_id` and `resume_session_at` choose the session; each
            run is saved to `session_store` (see `persist.py`).

    Raises:
        ResultError: after yielding an error ResultMessage of a single-shot (string)
            prompt; streaming-input sessions stay alive instead.
        ConfigurationError: the options are unusable (before anything is yielded).
    """
    options = options or FuxiAgentOptions()
    if needs_bridge():  # called from trio (or another loop): the loop runs on asyncio
        async with contextlib.aclosing(_bridged(prompt, options)) as messages:
            async for message in messages:
                yield message
        return
    async with contextlib.aclosing(_query(prompt, options)) as messages:
        async for message in messages:
            yield message


async def _bridged(prompt: str | AsyncIterable[dict[str, Any]], options: FuxiAgentOptions
                   ) -> AsyncGenerator[Message, None]:
    from ..common.foreign_loop import AsyncioBridge

    bridge = AsyncioBridge()
    await bridge.start()
    try:
        source = prompt if isinstance(prompt, str) else bridge.feed(prompt)
        async with contextlib.aclosing(bridge.iterate(_query(source, options))) as messages:
            async for message in messages:
                yield message
    finally:
        await bridge.close()


async def _query(prompt: str | AsyncIterable[dict[str, Any]], options: FuxiAgentOptions
                 ) -> AsyncGenerator[Message, None]:
    project = load_project(options)  # read once: its servers, then its session
    servers = await start_servers(options, options.cwd, project)
    try:
        async with contextlib.aclosing(_runs(prompt, options, servers, project)) as messages:
            async for message in messages:
                yield message
    finally:  # the servers live as long as this query (no process outlives it)
        if servers is not None:
            await servers.close()


async def _runs(prompt: str | AsyncIterable[dict[str, Any]], options: FuxiAgentOptions,
                servers: Any, project: Any) -> AsyncGenerator[Message, None]:
    session, transcript = await open_session(options, mcp=servers, settings=project)
    background = session.background = BackgroundAgents(lambda: session.id)
    try:
        async with contextlib.aclosing(_prompted(prompt, session, transcript)) as messages:
            async for message in messages:
                yield message
    finally:  # an agent still in the background when the stream ends is stopped
        await background.close()


async def _prompted(prompt: str | AsyncIterable[dict[str, Any]], session: Any,
                    transcript: Any) -> AsyncGenerator[Message, None]:
    """The runs of the prompt (or of each streamed message), then the turns of the
    background agents they started, as each ends (background.py)."""
    if isinstance(prompt, str):
        last: ResultMessage | None = None
        async with contextlib.aclosing(_recorded_run(Run(session), prompt, session,
                                                     transcript)) as messages:
            async for message in messages:
                if isinstance(message, ResultMessage):
                    last = message
                yield message
        if last is not None and last.is_error:
            raise ResultError(last)
    else:
        async for user_message in prompt:
            one = Run(session, origin=prompt_origin(user_message),
                      verbatim=prompt_verbatim(user_message))
            async with contextlib.aclosing(_recorded_run(one, prompt_content(user_message),
                                                         session, transcript)) as messages:
                async for message in messages:
                    yield message
            async with contextlib.aclosing(_background_turns(session, transcript,
                                                             wait=False)) as turns:
                async for message in turns:
                    yield message
    async with contextlib.aclosing(_background_turns(session, transcript, wait=True)) as turns:
        async for message in turns:
            yield message


def _recorded_run(run: Run, content: Any, session: Any, transcript: Any
                  ) -> AsyncGenerator[Message, None]:
    return recorded(run_prompt(run, content), session, transcript)


async def _background_turns(session: Any, transcript: Any, *, wait: bool
                            ) -> AsyncGenerator[Message, None]:
    """For each background agent that has ended, its notification and the turn it
    starts. `wait`: until none runs (at most `FUXI_BACKGROUND_WAIT_MS`, then those still
    running are stopped); else only those that have ended already."""
    background = session.background
    deadline = time.monotonic() + wait_limit()
    while not background.finished.empty() or (wait and background.running()):
        if background.finished.empty():
            try:
                await asyncio.wait_for(background.changed(), max(deadline - time.monotonic(), 0))
            except TimeoutError:
                await background.close()  # stopped: their notifications are queued now
            continue
        finished = background.finished.get_nowait()
        for message in finished.messages:
            yield message
        if finished.prompt is not None:
            run = Run(session, origin=dict(TASK_ORIGIN))
            async with contextlib.aclosing(_recorded_run(run, finished.prompt, session,
                                                         transcript)) as messages:
                async for message in messages:
                    yield message
