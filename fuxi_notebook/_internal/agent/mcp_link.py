"""The MCP servers of a `query()` or a `FuxiSDKClient`: started before its session,
stopped when it ends.

A server lives as long as its owner: one `query()` call, or a client from `connect()` to
`disconnect()` (the notebook keeps its own per kernel, see notebook/kernel_mcp.py), or,
for a server an `AgentDefinition` defines inline (`mcpServers=[{name: config}]`), one
call of that agent. A
server that fails to start does not stop the run: the init message reports it as failed,
with why, and its tools are simply not offered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...options import FuxiAgentOptions

__all__ = ["start_agent_servers", "start_servers"]


async def start_servers(options: FuxiAgentOptions, cwd: str | Path | None,
                        project: Any = None) -> Any:
    """The started `McpServers` of `options.mcp_servers` and of the project's trusted
    `.mcp.json` (`project`: see project_link.py); None when there are none.

    Raises ConfigurationError for a config that cannot be used (nothing is started).
    """
    from .project_link import project_servers

    configs = project_servers(options, project)
    if not configs:
        return None
    from ..mcp_servers import McpServers, parse_mcp_servers

    where = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    servers = McpServers(parse_mcp_servers(configs, base=where), cwd=where,
                         log=_logger(options))
    await servers.start()
    return servers


async def start_agent_servers(configs: dict[str, Any], options: FuxiAgentOptions,
                              cwd: Path) -> Any:
    """The started servers an agent's definition defines inline, for one of its calls
    (the caller closes them when the call ends). Raises ConfigurationError for a config
    that cannot be used."""
    from ..mcp_servers import McpServers, parse_mcp_servers

    servers = McpServers(parse_mcp_servers(configs, base=cwd), cwd=cwd, log=_logger(options))
    await servers.start()
    return servers


def _logger(options: FuxiAgentOptions) -> Any:
    """The servers' log lines go where the loop's do (`options.stderr`); a callback that
    raises loses its line, never the run."""
    callback = options.stderr
    if callback is None:
        return None

    def log(line: str) -> None:
        try:
            callback(line)
        except Exception:  # the comparable SDK swallows stderr-callback errors too
            return

    return log
