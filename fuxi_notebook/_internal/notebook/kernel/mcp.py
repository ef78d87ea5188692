"""MCP servers and Python functions as tools of `%%fuxi` cells, kept per kernel.

`--mcp-config` (on a cell or as a `%fuxi config` default) names servers: inline JSON, a
JSON file (relative to `--cwd`), or a kernel variable holding `{name: config}` (which is
how an in-process `create_sdk_mcp_server` server gets in). Functions decorated with
`@fuxi_tool`, and `@tool` objects in the kernel's namespace, are served by one more
in-process server, `notebook` (tools `mcp__notebook__<name>`).

A server starts when a cell first needs it and is kept for the cells after it, so a
process is not started per cell; a server whose config changed is restarted, one no
longer named is stopped. `%fuxi reset` stops them all, and so does the kernel's exit
(their process groups are killed, so no server outlives the kernel).
"""

from __future__ import annotations

import asyncio
import atexit
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["NOTEBOOK_SERVER", "KernelServers", "ServerSet", "kernel_functions"]

#: the in-process server of the kernel's `@fuxi_tool` functions
NOTEBOOK_SERVER = "notebook"


class ServerSet:
    """Several started `McpServers` seen as one by a session: their tools (deferred
    behind one ToolSearch together when they are many) and their status."""

    def __init__(self, groups: list[Any]) -> None:
        self.groups = groups

    def tools(self) -> list[Any]:
        from ...mcp_servers.tool_search import with_tool_search

        return with_tool_search([t for group in self.groups for t in group.mcp_tools()])

    def status(self) -> list[Any]:
        return [s for group in self.groups for s in group.status()]


def kernel_functions(namespace: Mapping[str, Any]) -> list[Any]:
    """The `@fuxi_tool` functions, and `@tool` objects the namespace holds, by name."""
    from ...mcp_servers.functions import registered
    from ...mcp_servers.sdk import SdkMcpTool

    found = {spec.name: spec for spec in registered()}
    for value in list(namespace.values()):
        if isinstance(value, SdkMcpTool):
            found.setdefault(value.name, value)
    return [found[name] for name in sorted(found)]


class KernelServers:
    """The MCP servers of one kernel (see the module docstring)."""

    def __init__(self) -> None:
        #: server name -> (what it was started from, its `McpServers`)
        self._running: dict[str, tuple[str, Any]] = {}
        self._closing: set[asyncio.Task[None]] = set()  # closes `stop()` started
        atexit.register(self.close_now)

    def names(self) -> list[str]:
        return sorted(self._running)

    async def for_cell(self, configs: Mapping[str, Any], functions: list[Any], cwd: Path,
                       log: Callable[[str], None] | None = None) -> ServerSet | None:
        """The servers a cell uses, started if they are not yet (None: no servers).

        Raises ConfigurationError for an unusable config (nothing is started then).
        """
        from ....errors import ConfigurationError
        from ...mcp_servers import McpServers
        from ...mcp_servers.sdk import create_sdk_mcp_server

        wanted: dict[str, tuple[str, Any]] = {
            name: (_fingerprint(config), config) for name, config in configs.items()}
        if functions:
            if NOTEBOOK_SERVER in wanted:
                raise ConfigurationError(
                    f"the MCP server name {NOTEBOOK_SERVER!r} is taken by the kernel's "
                    "@fuxi_tool functions; name the server differently")
            print_ = "fn:" + ",".join(f"{t.name}@{id(t)}" for t in functions)
            current = self._running.get(NOTEBOOK_SERVER)
            config = None if current and current[0] == print_ else create_sdk_mcp_server(
                NOTEBOOK_SERVER, tools=functions)
            wanted[NOTEBOOK_SERVER] = (print_, config)
        stale = [name for name, (seen, servers) in self._running.items()
                 if name not in wanted or wanted[name][0] != seen or _failed(servers)]
        await asyncio.gather(*(self._running.pop(name)[1].close() for name in stale))
        fresh = {name: McpServers({name: config}, cwd=cwd, log=log)
                 for name, (seen, config) in wanted.items() if name not in self._running}
        await asyncio.gather(*(servers.start() for servers in fresh.values()))
        for name, servers in fresh.items():
            self._running[name] = (wanted[name][0], servers)
        if not wanted:
            return None
        return ServerSet([self._running[name][1] for name in sorted(wanted)])

    def current(self) -> ServerSet | None:
        """Every running server as one set (None: none runs)."""
        if not self._running:
            return None
        return ServerSet([self._running[name][1] for name in self.names()])

    def status(self) -> list[Any]:
        """Every running server's status, by name."""
        return [s for name in self.names() for s in self._running[name][1].status()]

    async def close(self) -> None:
        """Stop every server (each stdio server with its process group)."""
        running, self._running = self._running, {}
        await asyncio.gather(*(servers.close() for _, servers in running.values()))

    def stop(self) -> None:
        """Stop every server from synchronous code (`%fuxi reset`): processes are killed at
        once, and the connections close on the kernel's loop when it runs."""
        running, self._running = self._running, {}
        for _, servers in running.values():
            servers.close_now()
            try:
                task = asyncio.get_running_loop().create_task(servers.close())
            except RuntimeError:  # no loop running: the kill above is all there is
                continue
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def close_now(self) -> None:
        """Kill every stdio server's process group (at kernel exit; no waiting)."""
        for _, servers in self._running.values():
            servers.close_now()


def _fingerprint(config: Mapping[str, Any]) -> str:
    """What a server was started from: a changed config restarts it. An in-process server
    is the same server while it is the same object."""
    if config.get("type") == "sdk":
        return f"sdk:{id(config.get('instance'))}"
    return json.dumps(config, sort_keys=True, default=str)


def _failed(servers: Any) -> bool:
    """A server that failed is started again by the next cell that names it."""
    return any(status.get("status") == "failed" for status in servers.status())
