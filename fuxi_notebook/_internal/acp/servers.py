"""The MCP servers a client names in `session/new` and `session/load`, as the loop's
server configurations: they join the session's own (the command line's options; the
project's `.mcp.json` once trusted), the client's winning a name both use. They are the
user's own editor configuration, not a repository's, so they need no project trust."""

from __future__ import annotations

from typing import Any

from ...errors import ConfigurationError
from ...options import FuxiAgentOptions

__all__ = ["session_servers"]


def session_servers(options: FuxiAgentOptions, given: list[Any] | None) -> Any:
    """`options.mcp_servers` with the client's servers added (checked: a bad one is a
    ConfigurationError naming it, a JSON-RPC invalid-params error through guard.py)."""
    from ..mcp_servers.config import parse_mcp_servers

    if not given:
        return options.mcp_servers
    servers = {server.name: _config(server) for server in given}
    try:
        checked = parse_mcp_servers(servers)
        own = parse_mcp_servers(options.mcp_servers, base=_base(options)) if (
            options.mcp_servers) else {}
    except ConfigurationError as error:
        raise ConfigurationError(f"mcpServers: {error}") from None
    return {**own, **checked}


def _config(server: Any) -> dict[str, Any]:
    kind = getattr(server, "type", None)
    if kind in ("http", "sse"):
        return {"type": kind, "url": server.url,
                "headers": {header.name: header.value for header in server.headers}}
    if kind is None and hasattr(server, "command"):
        return {"type": "stdio", "command": server.command, "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env}}
    raise ConfigurationError(f"mcpServers: server {getattr(server, 'name', '?')!r}: type "
                             f"{kind!r} is not supported (stdio, http and sse are)")


def _base(options: FuxiAgentOptions) -> Any:
    from pathlib import Path

    return Path(options.cwd) if options.cwd is not None else None
