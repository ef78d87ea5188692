"""Each MCP tool as one of the package's tools (see `tools/base.py`).

Name: `mcp__<server key>__<tool name>` (sanitized, see names.py). Kind: `read` when the
server marks the tool `readOnlyHint`, so such calls run concurrently with other reads;
otherwise `execute`.

Security: annotations are hints the server chose, and a server may be wrong or hostile.
Concurrency may trust them, approval must not: in the default mode a read-only built-in
inside the working directories runs without asking, but an MCP tool must still be allowed
by a rule (`mcp__server`, `mcp__server__*`, `mcp__server__tool`) or by the user, as in
the comparable product. So a read-hinted tool declares its reach as the server it
contacts (`Reach(url="mcp://<server>")`): the permission engine then judges it as it
judges any call that leaves the process: never "safe", allowed only by a rule naming the
tool, the user, or `bypassPermissions`. An `execute` tool declares nothing (`Reach()`),
which the engine already treats that way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..tools.base import DeclaredTool, Reach, ToolContext, ToolKind, ToolOutput

__all__ = ["MAX_DESCRIPTION_CHARS", "McpTool"]

#: longer descriptions are cut (they are in every request)
MAX_DESCRIPTION_CHARS = 2048

Caller = Callable[[str, str, dict[str, Any]], Awaitable[ToolOutput]]


class McpTool(DeclaredTool):
    """One tool of one MCP server; `run` goes through `call(server, tool, input)`.

    Attributes:
        server: the server's key in `mcp_servers`.
        mcp_name: the tool's name on the server (the API name may be sanitized).
        annotations: the server's `ToolAnnotations` (hints), or None.
        defer_loading: sent as `"defer_loading": true` (tool search, see tool_search.py).
        runs_in_process: the server runs in this process (`create_sdk_mcp_server`).
    """

    def __init__(self, name: str, server: str, tool: Any, call: Caller, *,
                 in_process: bool = False) -> None:
        self.name = name
        self.server = server
        self.mcp_name: str = tool.name
        self.annotations = tool.annotations
        self.description = _description(tool, server)
        self.input_schema = _input_schema(tool.input_schema)
        self.kind: ToolKind = "read" if _read_only(tool.annotations) else "execute"
        self.defer_loading = False
        #: a replay starts no server (CI has neither the servers nor their network)
        self.on_replay = "recorded"
        #: its handler runs in this process, on input the model chose: its calls are
        #: checked for tampering as code's are, whatever its hints say (integrity.py)
        self.runs_in_process = in_process
        self._call = call

    def reach(self, input: dict[str, Any]) -> Reach:
        """A read-hinted call touches the server (never auto-approved as a local read)."""
        return Reach(url=f"mcp://{self.server}") if self.kind == "read" else Reach()

    def always_allow(self, input: dict[str, Any]) -> str:
        return self.name

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self._call(self.server, self.mcp_name, input)


def _read_only(annotations: Any) -> bool:
    return bool(getattr(annotations, "read_only_hint", False))


def _description(tool: Any, server: str) -> str:
    title = tool.title or getattr(tool.annotations, "title", None)
    text = (tool.description or title or f"The {tool.name} tool of MCP server {server}.")
    text = text.strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 15].rstrip() + "... [truncated]"
    return text


def _input_schema(schema: Any) -> dict[str, Any]:
    """The server's input schema as the API takes it (always an object schema)."""
    found = dict(schema) if isinstance(schema, dict) else {}
    if found.get("type") != "object":
        found = {"type": "object", "properties": {}} if not found.get("properties") else {
            **found, "type": "object"}
    return found
