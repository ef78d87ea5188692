"""The set of tools offered to the model: lookup, wire definitions, input validation."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from . import schema_check
from .base import Tool

__all__ = ["ToolRegistry"]

#: (class, name, description, deferred) -> definition: a built-in's definition is the same
#: dict in every session (each session makes its own tool objects, with equal schemas), so
#: the request body encodes it once (models/wire_body.py keys its encodings by identity).
#: The definition holds its own copy of the schema, which nothing else can change.
_DEFINITIONS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _definition(tool: Tool) -> dict[str, Any]:
    deferred = getattr(tool, "defer_loading", False) is True
    key = (type(tool), tool.name, tool.description, deferred)
    schema = tool.input_schema
    cached = _DEFINITIONS.get(key)
    if cached is not None and cached["input_schema"] == schema:  # a C-level comparison
        return cached
    definition = {"name": tool.name, "description": tool.description,
                  "input_schema": copy.deepcopy(schema),
                  **({"defer_loading": True} if deferred else {})}
    if len(_DEFINITIONS) > 1_024:
        _DEFINITIONS.clear()
    _DEFINITIONS[key] = definition
    return definition


class ToolRegistry:
    """Tools by name, in a stable order (a stable tool list keeps the prompt cache warm)."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._validators: dict[str, Any] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def replace(self, name: str, tool: Tool) -> None:
        """Put `tool` in the place of the tool `name` (same name, same schema: a replay's
        stand-in answering from the record)."""
        if name not in self._tools or tool.name != name:
            raise ValueError(f"no tool {name!r} to replace with {tool.name!r}")
        self._tools[name] = tool

    def definitions(self) -> list[dict[str, Any]]:
        """The `tools` parameter of a Messages API request. A tool whose `defer_loading`
        is true is sent deferred: the API leaves its definition out of the prompt until a
        `tool_reference` loads it (MCP tool search, see mcp_servers/tool_search.py)."""
        return [_definition(t) for t in self._tools.values()]

    def validate(self, name: str, tool_input: dict[str, Any]) -> str | None:
        """A readable message if `tool_input` does not match the tool's schema, else None."""
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = _validator(self._tools[name].input_schema)
        found = validator(tool_input)
        if not found:
            return None
        lines = [f"- {where or 'input'}: {message}" for where, message in found[:5]]
        return f"Invalid input for tool {name!r}:\n" + "\n".join(lines)


def _validator(schema: dict[str, Any]) -> Any:
    """`input -> [(where, message)]`: our fast checker for the subset every built-in tool
    uses, `jsonschema` (slow to import) for anything else."""
    if schema_check.supported(schema):
        return lambda tool_input: schema_check.problems(schema, tool_input)
    import jsonschema

    checker = jsonschema.Draft202012Validator(schema)

    def check(tool_input: dict[str, Any]) -> list[tuple[str, str]]:
        errors = sorted(checker.iter_errors(tool_input), key=lambda e: list(e.path))
        return [(".".join(str(p) for p in error.absolute_path), error.message)
                for error in errors]

    return check
