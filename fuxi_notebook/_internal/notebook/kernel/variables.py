"""The Variables tool: a compact table of what the user's namespace holds."""

from __future__ import annotations

import re
from typing import Any

from ...common.secret_names import is_secret_variable_name
from ...tools.base import DeclaredTool, ToolContext, ToolOutput
from .values import (
    format_size,
    masked,
    shape_of,
    short_repr,
    size_of,
    type_name,
    user_variables,
)

__all__ = ["VariablesTool", "variable_rows"]

MAX_VARIABLES = 200
PREVIEW_CHARS = 80
TYPE_COLUMN_CHARS = 40
_HEADER = ("name", "type", "shape/len", "size", "preview")


class VariablesTool(DeclaredTool):
    """List the user's variables with type, shape, memory and a one-line preview."""

    name = "Variables"
    description = (
        "Lists the variables in the user's live Jupyter kernel (the notebook's namespace): "
        "name, type, shape or length, approximate memory size and a one-line preview, "
        "sorted by name. Modules, IPython internals and names starting with `_` are left "
        "out. `filter` (optional) keeps names matching a regular expression (or containing "
        "the text). Cheap and side-effect free: use it before Inspect or Python to see what "
        "data the user has."
    )

    kind = "read"

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "filter": {
                    "type": "string",
                    "description": "Regular expression or substring matched against names.",
                },
            },
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """The table, capped at `MAX_VARIABLES` rows."""
        matches = _matcher(input.get("filter") or "")
        names = [(n, v) for n, v in user_variables(self.shell) if matches(n)]
        if not names:
            if input.get("filter"):
                return ToolOutput(content=f"No user variables match {input['filter']!r}.")
            return ToolOutput(content="No user variables are defined in the kernel yet.")
        rows = variable_rows(names[:MAX_VARIABLES])
        text = _table([_HEADER, *rows])
        if len(names) > MAX_VARIABLES:
            text += f"\n... and {len(names) - MAX_VARIABLES} more (use `filter` to narrow)"
        return ToolOutput(content=text)


def _matcher(pattern: str) -> Any:
    """A name predicate: regex search, or plain substring when the regex is invalid."""
    if not pattern:
        return lambda name: True
    try:
        compiled = re.compile(pattern)
    except re.error:
        return lambda name: pattern in name
    return lambda name: compiled.search(name) is not None


def variable_rows(variables: list[tuple[str, Any]]) -> list[tuple[str, ...]]:
    """One row of cells per variable: name, type, shape, size, preview."""
    rows: list[tuple[str, ...]] = []
    for name, value in variables:
        kind = type_name(value)
        if len(kind) > TYPE_COLUMN_CHARS:
            kind = "..." + kind[-(TYPE_COLUMN_CHARS - 3):]
        preview = (masked(value) if is_secret_variable_name(name)
                   else short_repr(value, PREVIEW_CHARS))
        rows.append((name, kind, shape_of(value), format_size(size_of(value)), preview))
    return rows


def _table(rows: list[tuple[str, ...]]) -> str:
    """Left-aligned columns; the last column is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)
