"""A session's MCP servers: started together, their tools offered, stopped together.

    servers = McpServers(parse_mcp_servers(options.mcp_servers), cwd=cwd)
    await servers.start()          # never raises for a server: see status()
    tools = servers.tools()        # McpTool objects (+ ToolSearch when deferred)
    ...
    await servers.close()          # from any task on the same loop; no process left

A server that fails to start is reported by `status()` ("failed" with the reason: the
command was not found, the process exited and what it wrote to stderr, the start timed
out) and offers no tools; the others work. `MCP_TOOL_TIMEOUT` (milliseconds) bounds each
call. `close_now()` is for `atexit` and kernel shutdown, where nothing can be awaited;
every started set is also killed at interpreter exit, so a script that never closed its
client leaves no server process behind.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..tools.base import ToolOutput
from .adapter import McpTool
from .config import McpServerConfig, McpServerStatus, McpToolInfo, parse_mcp_servers
from .connection import CallFailure, Connection
from .convert import to_output
from .names import tool_names
from .tool_search import with_tool_search

__all__ = ["DEFAULT_TOOL_TIMEOUT", "McpServers", "tool_timeout"]

#: seconds a tool call may take unless `MCP_TOOL_TIMEOUT` (ms) says otherwise
DEFAULT_TOOL_TIMEOUT = 600.0


#: every started `McpServers` of the process (weakly: a closed, dropped set goes away)
_STARTED: weakref.WeakSet[McpServers] = weakref.WeakSet()


@atexit.register
def _kill_at_exit() -> None:
    for servers in list(_STARTED):
        servers.close_now()


def tool_timeout() -> float:
    """The per-call limit in seconds (`MCP_TOOL_TIMEOUT` in ms; invalid values ignored)."""
    raw = os.environ.get("MCP_TOOL_TIMEOUT", "").strip()
    try:
        value = float(raw) / 1000
    except ValueError:
        return DEFAULT_TOOL_TIMEOUT
    return value if value > 0 else DEFAULT_TOOL_TIMEOUT


class McpServers:
    """The MCP servers of one session (see the module docstring)."""

    def __init__(self, configs: Mapping[str, McpServerConfig], *, cwd: Path,
                 start_timeout: float = 30.0, log: Callable[[str], None] | None = None
                 ) -> None:
        """Raises `ConfigurationError` for an unusable config (nothing is started)."""
        checked = parse_mcp_servers(dict(configs))
        self.cwd = cwd
        self.start_timeout = start_timeout
        self._connections = {name: Connection(name, config, cwd, log)
                             for name, config in checked.items()}
        self._disabled: set[str] = set()  # switched off by `set_enabled(name, False)`

    def __contains__(self, server: object) -> bool:
        return server in self._connections

    def pid(self, server: str) -> int | None:
        """The process id of a stdio server (None: not stdio, or not started)."""
        return self._connections[server].pid

    async def start(self) -> None:
        """Start every server concurrently; wait until each is connected or failed."""
        _STARTED.add(self)
        await asyncio.gather(*(c.start(self.start_timeout)
                               for c in self._connections.values()))

    def tools(self) -> list[Any]:
        """The tools of the connected servers, in a stable order (server, then tool).
        When they are many, they are deferred and `ToolSearch` comes last."""
        return with_tool_search(self.mcp_tools())

    def mcp_tools(self) -> list[McpTool]:
        """The connected servers' tools without ToolSearch (for an owner that offers the
        tools of several `McpServers` together, see notebook/kernel_mcp.py)."""
        found: list[McpTool] = []
        for server, connection in sorted(self._connections.items()):
            if connection.status != "connected":
                continue
            names = tool_names(server, [t.name for t in connection.tools])
            here = connection.config.get("type") == "sdk"
            found.extend(McpTool(names[t.name], server, t, self.call, in_process=here)
                         for t in sorted(connection.tools, key=lambda t: names[t.name]))
        return found

    def status(self) -> list[McpServerStatus]:
        """Each server as the comparable SDK's `McpServerStatus`."""
        return [{"name": name, "status": "disabled"} if name in self._disabled
                else _status(c) for name, c in self._connections.items()]

    async def call(self, server: str, tool: str, args: dict[str, Any]) -> ToolOutput:
        """Call `tool` (its name on the server); failures are `is_error` outputs."""
        connection = self._connections.get(server)
        if connection is None:
            return ToolOutput(f"There is no MCP server {server!r}.", is_error=True)
        if server in self._disabled:
            return ToolOutput(f"MCP server {server!r} is disabled.", is_error=True)
        outcome = await connection.call(tool, args, tool_timeout())
        if isinstance(outcome, CallFailure):
            return ToolOutput(outcome.message, is_error=True)
        return to_output(outcome)

    async def reconnect(self, server: str) -> None:
        """Stop `server` and start it again from its config (a failed or disabled server
        gets another try). Its tools keep the names the session offers; a tool the
        restarted server no longer has fails as unknown."""
        old = self._connection(server)
        await old.close()
        fresh = Connection(server, old.config, self.cwd, old.log)
        self._connections[server] = fresh
        self._disabled.discard(server)
        await fresh.start(self.start_timeout)

    async def set_enabled(self, server: str, enabled: bool) -> None:
        """Switch `server` off (stopped; its calls fail with "disabled") or on again."""
        connection = self._connection(server)
        if enabled:
            if server in self._disabled or connection.status != "connected":
                await self.reconnect(server)
            return
        self._disabled.add(server)
        await connection.close()

    def _connection(self, server: str) -> Connection:
        found = self._connections.get(server)
        if found is None:
            from ...errors import ConfigurationError

            raise ConfigurationError(f"there is no MCP server {server!r}; the servers are "
                                     f"{', '.join(sorted(self._connections)) or 'none'}")
        return found

    async def close(self) -> None:
        """Stop every server (idempotent); each stdio server's process group is gone."""
        await asyncio.gather(*(c.close() for c in self._connections.values()))

    def close_now(self) -> None:
        """Kill every stdio server's process group now (best effort, no waiting)."""
        for connection in self._connections.values():
            connection.close_now()


def _status(connection: Connection) -> McpServerStatus:
    status: McpServerStatus = {"name": connection.name, "status": connection.status}
    if connection.server_info is not None:
        status["serverInfo"] = {"name": connection.server_info["name"],
                                "version": connection.server_info["version"]}
    if connection.error is not None:
        status["error"] = connection.error
    if connection.status == "connected":
        status["tools"] = [_tool_info(t) for t in connection.tools]
    return status


def _tool_info(tool: Any) -> McpToolInfo:
    info: McpToolInfo = {"name": tool.name}
    if tool.description:
        info["description"] = tool.description
    hints = tool.annotations
    if hints is not None:
        flags = {"readOnly": hints.read_only_hint, "destructive": hints.destructive_hint,
                 "openWorld": hints.open_world_hint}
        info["annotations"] = {k: v for k, v in flags.items() if v is not None}  # type: ignore[typeddict-item]
    return info
