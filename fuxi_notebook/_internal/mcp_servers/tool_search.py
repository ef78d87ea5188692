"""Tool search: a large MCP tool set is sent deferred, and loaded on demand.

Past `DEFER_MIN_TOOLS` MCP tools, or `DEFER_MIN_CHARS` characters of their JSON
definitions, every MCP tool is sent with `"defer_loading": true` and one more tool,
`ToolSearch`, is offered. This is the Messages API's own mechanism: a deferred tool's
definition stays out of the prompt until a tool result names it with a `tool_reference`
block (`{"type": "tool_reference", "tool_name": ...}`), which the API expands into the
definition. The prompt stays small, and since the tool list never changes, the prompt
cache prefix stays warm. ToolSearch matches names and descriptions by keywords (case
insensitive) or loads exact names with `select:name1,name2`; it searches only local
definitions, so it is a `read` tool that needs no approval.

`FUXI_TOOL_SEARCH` overrides the threshold: `always`, `never`, or a number N (defer when
there are more than N MCP tools).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ..tools.base import DeclaredTool, ToolContext, ToolKind, ToolOutput

__all__ = ["DEFER_MIN_CHARS", "DEFER_MIN_TOOLS", "SETTING", "TOOL_SEARCH", "ToolSearchTool",
           "should_defer", "with_tool_search"]

#: more MCP tools than this are deferred
DEFER_MIN_TOOLS = 20
#: more characters of MCP tool definitions (JSON) than this are deferred
DEFER_MIN_CHARS = 10_000
SETTING = "FUXI_TOOL_SEARCH"
TOOL_SEARCH = "ToolSearch"
DEFAULT_RESULTS = 5
MAX_RESULTS = 50
_LISTED_NAMES = 200  # deferred names the ToolSearch description lists


def definitions_size(tools: Sequence[Any]) -> int:
    """Characters of the tools' definitions as JSON (what they would add to a request)."""
    return sum(len(json.dumps({"name": t.name, "description": t.description,
                               "input_schema": t.input_schema})) for t in tools)


def should_defer(tools: Sequence[Any], setting: str | None = None) -> bool:
    """Whether `tools` (the MCP tools) go behind ToolSearch (`setting`: FUXI_TOOL_SEARCH)."""
    if not tools:
        return False
    value = (os.environ.get(SETTING, "") if setting is None else setting).strip().lower()
    if value == "always":
        return True
    if value == "never":
        return False
    if value.isdigit():
        return len(tools) > int(value)
    return len(tools) > DEFER_MIN_TOOLS or definitions_size(tools) > DEFER_MIN_CHARS


def with_tool_search(tools: Sequence[Any], setting: str | None = None) -> list[Any]:
    """`tools`, deferred with ToolSearch after them when they are too many (else as is)."""
    defer = should_defer(tools, setting)
    for tool in tools:
        tool.defer_loading = defer
    return [*tools, ToolSearchTool(tools)] if defer else list(tools)


class ToolSearchTool(DeclaredTool):
    """Finds deferred tools and answers with `tool_reference` blocks that load them."""

    name = TOOL_SEARCH
    kind: ToolKind = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": (
                "Keywords matched against tool names and descriptions, or "
                "'select:name1,name2' to load those exact tools.")},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                            "description": f"At most this many tools (default "
                                           f"{DEFAULT_RESULTS})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, tools: Sequence[Any]) -> None:
        self.tools = list(tools)
        names = [t.name for t in self.tools]
        listed = "\n".join(names[:_LISTED_NAMES])
        more = f"\n... and {len(names) - _LISTED_NAMES} more" if len(
            names) > _LISTED_NAMES else ""
        self.description = (
            "Loads deferred tools so they can be called. The tools below are available, "
            "but their parameters are not known until this tool returns them: search "
            "with keywords, or load exact names with 'select:name1,name2'; each match is "
            "loaded and can be called from then on.\n\nDeferred tools:\n" + listed + more)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        query = str(input.get("query", "")).strip()
        limit = input.get("max_results") or DEFAULT_RESULTS
        limit = max(1, min(int(limit), MAX_RESULTS))
        if query.lower().startswith("select:"):
            found = self._select(query[len("select:"):])
        else:
            found = self._search(query)[:limit]
        if not found:
            return ToolOutput(f"No deferred tool matches {query!r}. Try other keywords, or "
                              "'select:' with names from this tool's description.")
        return ToolOutput([{"type": "tool_reference", "tool_name": t.name} for t in found])

    def _select(self, names: str) -> list[Any]:
        wanted = [n.strip().lower() for n in names.split(",") if n.strip()]
        found: list[Any] = []
        for name in wanted:
            match = next((t for t in self.tools if t.name.lower() == name), None) or next(
                (t for t in self.tools if getattr(t, "mcp_name", "").lower() == name), None)
            if match is not None and match not in found:
                found.append(match)
        return found

    def _search(self, query: str) -> list[Any]:
        terms = re.findall(r"[a-z0-9]+", query.lower())
        scored = []
        for tool in self.tools:
            score = _score(terms, tool)
            if score:
                scored.append((-score, tool.name, tool))
        return [tool for *_, tool in sorted(scored, key=lambda s: s[:2])]


def _score(terms: list[str], tool: Any) -> int:
    """Name words count most, then parts of the name, then the description."""
    name = tool.name.lower()
    words = set(re.findall(r"[a-z0-9]+", name))
    description = (tool.description or "").lower()
    score = 0
    for term in terms:
        if term in words:
            score += 4
        elif term in name:
            score += 2
        if term in description:
            score += 1
    return score
