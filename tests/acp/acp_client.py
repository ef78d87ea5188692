"""A test ACP client: the protocol package's client side driving `fuxi-acp` (the checkout
under test, `python -m fuxi_notebook acp`) over stdio against the fake Messages API."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, schema, spawn_agent_process

#: answers a permission ask: an option id, or None (cancelled)
Decide = Callable[[schema.RequestPermissionRequest], str | None]


class RecordingClient:
    """Keeps every session update; answers permission asks with `decide`."""

    def __init__(self, decide: Decide | None = None) -> None:
        self.updates: list[Any] = []
        self.asks: list[schema.RequestPermissionRequest] = []
        #: updates and asks together, in the order they came
        self.events: list[Any] = []
        self.decide = decide or (lambda ask: "allow_once")
        self.changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.events.append(update)
        self.changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> schema.RequestPermissionResponse:
        ask = schema.RequestPermissionRequest(session_id=session_id, tool_call=tool_call,
                                              options=options)
        self.asks.append(ask)
        self.events.append(ask)
        self.changed.set()
        chosen = self.decide(ask)
        if asyncio.iscoroutine(chosen):
            chosen = await chosen
        if chosen is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen))

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "session_update", None) == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    async def until(self, found: Callable[[], Any], timeout: float = 30) -> Any:
        """Wait for evidence (an update or ask that `found` sees)."""
        async with asyncio.timeout(timeout):
            while not (value := found()):
                self.changed.clear()
                await self.changed.wait()
        return value


def agent_env(server: Any, **extra: str) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key",
            "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5", **extra}


@contextlib.asynccontextmanager
async def acp_agent(client: RecordingClient, server: Any, cwd: Path, *args: str,
                    **env: str) -> AsyncIterator[tuple[Any, Any]]:
    """The agent process and the client's connection to it, initialized."""
    async with spawn_agent_process(client, sys.executable, "-m", "fuxi_notebook", "acp",
                                   *args, env=agent_env(server, **env), cwd=str(cwd)) as (
            conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        yield conn, process


async def new_session(conn: Any, cwd: Path, servers: list[Any] | None = None) -> str:
    """A new session in `cwd`; its id."""
    return str((await conn.new_session(cwd=str(cwd), mcp_servers=servers or [])).session_id)


async def appears(path: Path, timeout: float = 60) -> None:
    """Wait until a tool call has made `path` (evidence it is running)."""
    async with asyncio.timeout(timeout):
        while not path.exists():
            await asyncio.sleep(0.05)
