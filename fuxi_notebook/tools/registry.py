"""The set of tools offered to the model: lookup, wire definitions, input validation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import Tool

__all__ = ["ToolRegistry"]


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

    def definitions(self) -> list[dict[str, Any]]:
        """The `tools` parameter of a Messages API request."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in self._tools.values()
        ]

    def validate(self, name: str, tool_input: dict[str, Any]) -> str | None:
        """A readable message if `tool_input` does not match the tool's schema, else None."""
        validator = self._validators.get(name)
        if validator is None:
            import jsonschema  # lazy: costs ~0.1 s to import

            tool = self._tools[name]
            validator = jsonschema.Draft202012Validator(tool.input_schema)
            self._validators[name] = validator
        errors = sorted(validator.iter_errors(tool_input), key=lambda e: list(e.path))
        if not errors:
            return None
        lines = []
        for error in errors[:5]:
            where = ".".join(str(p) for p in error.absolute_path) or "input"
            lines.append(f"- {where}: {error.message}")
        return f"Invalid input for tool {name!r}:\n" + "\n".join(lines)
