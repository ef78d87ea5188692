"""A cell tool's call as a person reads it: the cell by its place in the notebook and its
first line (`cell 4: df = load()`), the diff of an edit, the code of a run, the source a
deletion took away, instead of the call's input with the cell's id.

What the call found is in the record (`SessionRecord.cells`, noted as the call ran); a
record without it (older, or a call that named no cell there is) still reads the cell's id
and the edit's diff from the input. Texts come back whole: the transcript redacts and cuts
them as it does every text it shows.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..record import CellCall

__all__ = ["CELL_TOOLS", "cell_call", "line_diff"]

#: the notebook's cell tools (notebook/kernel/cells.py), by name: what `cell_call` reads
CELL_TOOLS = frozenset({"EditCell", "InsertCell", "DeleteCell", "MoveCell", "RunCell"})

#: (summary, detail or None, the detail's language; the summary `more` than one line)
Described = tuple[str, str | None, str, bool]


def cell_call(name: str, tool_input: dict[str, Any], cell: CellCall | None) -> Described | None:
    """How the call reads (None: not a cell tool's call, or one naming no cell)."""
    if name not in CELL_TOOLS:
        return None
    if name == "InsertCell":
        return _insert(tool_input, cell)
    cell_id = tool_input.get("cell_id")
    if not isinstance(cell_id, str):
        return None
    place, line = _place(cell, cell_id), f": {cell.line}" if cell and cell.line else ""
    if name == "MoveCell":
        to = cell.to if cell is not None and cell.to is not None else tool_input.get("to_index")
        moved = f" → {to + 1}" if isinstance(to, int) and not isinstance(to, bool) else ""
        return f"{place}{moved}{line}", None, "", False
    if name == "EditCell":
        old, new = str(tool_input.get("old_string", "")), str(tool_input.get("new_string", ""))
        if cell is not None and cell.before is not None:  # the whole lines it changed
            old, new = cell.before, cell.before.replace(old, new, 1) if old else new
        return place + line, line_diff(old, new) or "(no change)", "diff", False
    code = (cell.ran if name == "RunCell" else cell.before) if cell is not None else None
    return place + line, code, "python", False


def _place(cell: CellCall | None, cell_id: str) -> str:
    """`cell 4` (the 4th cell from the top when the call ran), else `cell <its id>`."""
    return f"cell {cell.at + 1}" if cell is not None and cell.at is not None else f"cell {cell_id}"


def _insert(tool_input: dict[str, Any], cell: CellCall | None) -> Described | None:
    code = tool_input.get("code")
    if not isinstance(code, str) or cell is None or cell.at is None:
        return None  # read by its code, as any call
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    summary = f"new cell {cell.at + 1}" + (f": {lines[0]}" if lines else "")
    return summary, code if len(lines) > 1 else None, "python", len(lines) > 1


def line_diff(old: str, new: str) -> str:
    """The change as a unified diff on `\n` only, without the ---/+++ header (it says
    nothing of one text shown in place); the approval card's diffs are made here too."""
    lines = difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=3)
    return "\n".join(list(lines)[2:])
