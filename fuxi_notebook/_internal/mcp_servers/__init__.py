"""MCP servers as tools: configs, in-process `@tool` servers, connections, tool search.

Named `mcp_servers`, not `mcp`, so it never shadows the `mcp` package. Importing this
package does not import `mcp` (which takes a while): only starting a server, building an
in-process server or asking for `ToolAnnotations` does.

Modules: config.py (config shapes, `parse_mcp_servers`), sdk.py + schema.py (`@tool`,
`create_sdk_mcp_server`), stdio.py (the child-process transport), connection.py (one
server owned by one task), manager.py (`McpServers`), adapter.py + convert.py (MCP tools
as the package's tools, results as wire content), names.py (API tool names),
tool_search.py (deferred tools and `ToolSearch`).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "McpHttpServerConfig",
    "McpSSEServerConfig",
    "McpSdkServerConfig",
    "McpServerConfig",
    "McpServerStatus",
    "McpServers",
    "McpStdioServerConfig",
    "McpTool",
    "SdkMcpTool",
    "ToolAnnotations",
    "ToolSearchTool",
    "create_sdk_mcp_server",
    "parse_mcp_servers",
    "tool",
    "with_tool_search",
]

_WHERE = {
    "McpHttpServerConfig": "config", "McpSSEServerConfig": "config",
    "McpSdkServerConfig": "config", "McpServerConfig": "config",
    "McpServerStatus": "config", "McpStdioServerConfig": "config",
    "parse_mcp_servers": "config", "McpServers": "manager", "McpTool": "adapter",
    "SdkMcpTool": "sdk", "ToolAnnotations": "sdk", "create_sdk_mcp_server": "sdk",
    "tool": "sdk", "ToolSearchTool": "tool_search", "with_tool_search": "tool_search",
}


def __getattr__(name: str) -> Any:
    """Names load on first use (PEP 562), so `import fuxi_notebook` stays light."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
