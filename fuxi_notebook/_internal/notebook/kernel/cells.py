"""The cell tools: the agent edits, inserts, deletes, moves and runs the live notebook's
cells, named by their ids, through the frontend extension's `fuxi.notebook` comm.

They are offered only where the extension says it changes cells (JupyterLab, Notebook 7):
VS Code, nbclient and terminal IPython cannot change the notebook from the kernel. Edits
are kind `edit` (a card with the change; acceptEdits applies them), running is `execute`.
The cell running the agent is never changed or run by them. Each change is noted in the
cell's journal (`CellOp`), so that `%fuxi undo` can take it back. A replay does not make
a recorded edit again (it is in the saved notebook already); a recorded RunCell runs again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput
from ..cell.live_notebook import LiveDocument, LiveNotebook

__all__ = ["CELL_TOOL_NAMES", "CellOp", "LiveCells", "cell_tools", "recorded_cell_tools"]

#: the tools that change or run the notebook's cells (InsertCell has a form without them)
CELL_TOOL_NAMES = ("EditCell", "DeleteCell", "MoveCell", "RunCell")

_CELL_ID = {"type": "string", "description": "The cell's id (NotebookRead shows them)."}


@dataclass
class CellOp:
    """One change a cell tool made, as `%fuxi undo` takes it back: `kind` is edit, insert,
    delete or move; `cell` the cell's id; `before` what it was (the source, the cell and
    its index, or its index)."""

    kind: str
    cell: str
    before: Any = None
    after: Any = None


@dataclass
class LiveCells:
    """What the cell tools share in one agent cell: the comm, the running cell, the
    journal of their changes."""

    live: LiveNotebook
    path: str | None
    running_cell: str | None
    journal: list[CellOp] = field(default_factory=list)

    async def document(self) -> LiveDocument:
        found = await self.live.document(self.path)
        if found is None:
            raise ToolError("The notebook's frontend did not describe the notebook; the cell "
                            "tools need JupyterLab or Notebook 7 with the fuxi extension.")
        return found

    async def cell(self, cell_id: Any, *, changing: bool = True) -> tuple[dict[str, Any], int]:
        document = await self.document()
        index = document.index_of(str(cell_id))
        if index is None:
            known = ", ".join(c["id"] for c in document.cells[:30])
            raise ToolError(f"No cell with id {cell_id!r}; the cells are: {known}.")
        if changing and cell_id == self.running_cell:
            raise ToolError("That is the cell running this agent: it cannot be changed or "
                            "run from inside itself.")
        return document.cells[index], index

    async def change(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = await self.live.change(request)
        if "error" in answer or not answer.get("ok"):
            raise ToolError(f"The notebook did not make the change: "
                            f"{answer.get('error') or 'no reason given'}.")
        return answer


class _CellTool(DeclaredTool):
    kind = "edit"
    #: the change is in the saved notebook already: a replay does not make it again
    on_replay = "recorded"

    #: the tool's input schema (each instance gets its own copy)
    schema: ClassVar[dict[str, Any]] = {}

    def __init__(self, cells: LiveCells) -> None:
        self.cells = cells
        self.input_schema = copy.deepcopy(self.schema)


class EditCellTool(_CellTool):
    name = "EditCell"
    description = (
        "Edits the source of a cell of the user's notebook, named by its id: `old_string` "
        "(exactly as in the cell, once) is replaced by `new_string`; an empty `old_string` "
        "replaces the whole source. The cell is not run (RunCell runs it).")
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"cell_id": _CELL_ID,
                       "old_string": {"type": "string"}, "new_string": {"type": "string"}},
        "required": ["cell_id", "old_string", "new_string"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell, _ = await self.cells.cell(input["cell_id"])
        source, old = cell["source"], input["old_string"]
        if old and source.count(old) != 1:
            raise ToolError(f"old_string occurs {source.count(old)} times in the cell; give "
                            "text that occurs exactly once.")
        new = source.replace(old, input["new_string"], 1) if old else input["new_string"]
        await self.cells.change({"request": "edit_cell", "cell": cell["id"], "source": new,
                                 "expect": source})
        self.cells.journal.append(CellOp("edit", cell["id"], source, new))
        return ToolOutput(f"Edited cell {cell['id']} ({len(new.splitlines())} lines). It was "
                          "not run.")


class InsertLiveCellTool(_CellTool):
    name = "InsertCell"
    description = (
        "Inserts a new cell into the user's notebook, below the current cell or below the "
        "cell `after_cell_id`, without running it; returns the new cell's id. "
        "`cell_type` is code (default) or markdown.")
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Source of the new cell."},
                       "cell_type": {"type": "string", "enum": ["code", "markdown"]},
                       "after_cell_id": _CELL_ID},
        "required": ["code"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        after = input.get("after_cell_id") or self.cells.running_cell
        if after is not None:
            await self.cells.cell(after, changing=False)
        answer = await self.cells.change({
            "request": "insert_cell", "after": after, "source": input["code"],
            "cell_type": input.get("cell_type") or "code"})
        new_id = str(answer.get("cell") or "")
        self.cells.journal.append(CellOp("insert", new_id, after=input["code"]))
        return ToolOutput(f"Inserted cell {new_id} below cell {after}. It was not run.")


class DeleteCellTool(_CellTool):
    name = "DeleteCell"
    description = "Deletes a cell of the user's notebook, named by its id."
    schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"cell_id": _CELL_ID},
                    "required": ["cell_id"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell, index = await self.cells.cell(input["cell_id"])
        answer = await self.cells.change({"request": "delete_cell", "cell": cell["id"]})
        kept = answer.get("deleted") if isinstance(answer.get("deleted"), dict) else {
            "id": cell["id"], "cell_type": cell["cell_type"], "source": cell["source"]}
        self.cells.journal.append(CellOp("delete", cell["id"], (index, kept)))
        return ToolOutput(f"Deleted cell {cell['id']} (it was cell {index}).")


class MoveCellTool(_CellTool):
    name = "MoveCell"
    description = "Moves a cell of the user's notebook to another position (from 0)."
    schema: ClassVar[dict[str, Any]] = {"type": "object",
                    "properties": {"cell_id": _CELL_ID,
                                   "to_index": {"type": "integer", "minimum": 0}},
                    "required": ["cell_id", "to_index"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell, index = await self.cells.cell(input["cell_id"])
        await self.cells.change({"request": "move_cell", "cell": cell["id"],
                                 "to": input["to_index"]})
        self.cells.journal.append(CellOp("move", cell["id"], index, input["to_index"]))
        return ToolOutput(f"Moved cell {cell['id']} from position {index} to "
                          f"{input['to_index']}.")


class RunCellTool(DeclaredTool):
    """Runs a code cell as the Python tool runs code; its outputs go to that cell too."""

    name = "RunCell"
    description = (
        "Runs a code cell of the user's notebook, named by its id, in the live kernel as "
        "the user would run it (its current source, IPython syntax included); returns its "
        "output (figures as images) and shows it in that cell.")
    schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"cell_id": _CELL_ID},
                    "required": ["cell_id"], "additionalProperties": False}
    kind = "execute"

    def __init__(self, cells: LiveCells, python: Any) -> None:
        self.cells = cells
        self.python = python
        self.input_schema = copy.deepcopy(self.schema)

    async def shown(self, input: dict[str, Any]) -> dict[str, str]:
        """The code the call runs: the cell's source now. The approval card and the
        replay's consent card show it, and `run` runs exactly it."""
        cell = await self._runnable(input["cell_id"])
        return {"source": cell["source"]}

    async def _runnable(self, cell_id: Any) -> dict[str, Any]:
        cell, _ = await self.cells.cell(cell_id)
        if cell["cell_type"] != "code":
            raise ToolError(f"Cell {cell['id']} is a {cell['cell_type']} cell: only code "
                            "cells run.")
        if cell["source"].lstrip().startswith("%%fuxi"):
            raise ToolError("That is an agent (%%fuxi) cell: an agent cannot run another.")
        return cell

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell = await self._runnable(input["cell_id"])
        approved = ctx.approved_shown.get("source")
        if approved is None:
            raise ToolError(f"The code of cell {cell['id']} was not shown when the call was "
                            "decided, so it was not run.")
        if cell["source"] != approved:
            raise ToolError(f"Cell {cell['id']} changed after its code was shown for "
                            "approval, so it was not run; read it again before running it.")
        ran: tuple[ToolOutput, list[dict[str, Any]]] = await self.python.run_as_cell(
            approved)
        output, outputs = ran
        with_outputs = {"request": "set_outputs", "cell": cell["id"], "outputs": outputs}
        answer = await self.cells.live.change(with_outputs)
        if "error" in answer:
            output.content = _appended(output.content, f"(The outputs could not be shown in "
                                                        f"the cell: {answer['error']}.)")
        return output


def _appended(content: Any, note: str) -> Any:
    if isinstance(content, list):
        return [*content, {"type": "text", "text": note}]
    return f"{content}\n{note}"


def recorded_cell_tools(names: set[str], live: LiveNotebook) -> list[Any]:
    """Stand-ins for the cell tools a record called, for a replay where the extension
    does not change cells (nbval, papermill, VS Code): they answer from the record (the
    cells they changed are in the saved notebook already; a RunCell is not run again)."""
    found = [tool for tool in cell_tools(LiveCells(live, None, None), None)
             if tool.name in names and tool.name != "InsertCell"]
    for tool in found:
        tool.on_replay = "recorded"
    return found


def cell_tools(cells: LiveCells, python: Any) -> list[Any]:
    """EditCell, InsertCell (its live form), DeleteCell, MoveCell and RunCell."""
    return [EditCellTool(cells), InsertLiveCellTool(cells), DeleteCellTool(cells),
            MoveCellTool(cells), RunCellTool(cells, python)]
