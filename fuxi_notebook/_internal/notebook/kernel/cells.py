"""The cell tools: the agent edits, inserts, deletes, moves and runs the live notebook's
cells, named by their ids, through the frontend extension's `fuxi.notebook` comm.

They are offered only where the extension says it changes cells (JupyterLab, Notebook 7):
VS Code, nbclient and terminal IPython cannot change the notebook from the kernel. Edits
are kind `edit` (a card with the change; acceptEdits applies them), running is `execute`.
The cell running the agent is never changed or run by them. Each change is noted in the
cell's journal (`CellOp`), so that `%fuxi undo` can take it back. A replay does not make
a recorded edit again (it is in the saved notebook already); a recorded RunCell runs again.

A cell the user changed is never overwritten, at one place, `LiveCells`: what the agent
last saw of each cell (NotebookRead, its own edits and insertions: `note_seen`) is kept
with the conversation's read files, as Edit keeps a file's; EditCell and DeleteCell of a
cell changed since fail, showing it as it is now; and every change to a cell carries what
the call was decided on (`expect`: its source; a move, `expect_index`: its place), which
the extension checks as it makes the change (labextension/src/change_rules.ts, by the
table fuxi_notebook/testing/change_cases.json), as it checks `%fuxi undo`'s.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput
from ...tools.progress import current_call
from ...tools.truncate import cap_head_tail
from ..extension.live_notebook import LiveDocument, LiveNotebook

__all__ = ["CELL_TOOL_NAMES", "CellOp", "LiveCells", "cell_tools", "note_seen",
           "recorded_cell_tools"]

#: the tools that change or run the notebook's cells (InsertCell has a form without them)
CELL_TOOL_NAMES = ("EditCell", "DeleteCell", "MoveCell", "RunCell")

_CELL_ID = {"type": "string", "description": "The cell's id (NotebookRead shows them)."}

#: the most of a changed cell's source a refused call shows
_SHOWN_CHARS = 20_000


def _seen_key(cell_id: str) -> str:
    """A cell's entry among the read files (never an absolute path, so never a file's)."""
    return f"notebook cell {cell_id}"


def _digest(source: str) -> int:
    return int.from_bytes(hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest()[:8],
                          "big")


def note_seen(read_files: dict[str, int], cells: Iterable[Mapping[str, Any]]) -> None:
    """The agent was shown these cells as they are (`id`, `source`: a str or nbformat's
    list of lines): a later change to one of them is the user's, and a cell tool refuses
    to change it until the agent has seen it again."""
    for cell in cells:
        source = cell.get("source")
        if isinstance(cell.get("id"), str) and isinstance(source, str | list):
            text = source if isinstance(source, str) else "".join(map(str, source))
            read_files[_seen_key(cell["id"])] = _digest(text)


@dataclass
class CellOp:
    """One change a cell tool made, as `%fuxi undo` takes it back: `kind` is edit, insert,
    delete or move; `cell` the cell's id; `before` what it was (the source; for a
    deletion its index and the whole cell as the notebook answered it; for a move its
    index) and `after` what the tool left (the source, or the index it moved to)."""

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
    #: tool_use id -> the cell that call named, as it was (the record's `cells`: the
    #: transcript names a cell by its position and first line, not by its id)
    named: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the session the agent cell runs (set once it is built): a cell the agent inserts
    #: or edits names it in its provenance
    session_id: str = ""

    def provenance(self, tool: str) -> dict[str, str]:
        """Where an inserted or edited cell came from (`metadata.fuxi.provenance`, which
        the extension keeps and marks): this agent cell, its session, the tool, when."""
        return {"agent_cell": self.running_cell or "", "session": self.session_id,
                "tool": tool, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

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

    def name(self, cell: Mapping[str, Any], at: int | None, **more: Any) -> None:
        """Note the cell the running call named: `at` its position (from 0), its first
        line with text, and `more` (`to`, `before`, `ran`; see `sessions.record.CellCall`)."""
        call = current_call()
        if call is None:
            return
        source = str(cell.get("source") or "")
        line = next((text.strip() for text in source.splitlines() if text.strip()), "")
        self.named[call] = {"at": at, "line": line,
                            **{key: value for key, value in more.items() if value is not None}}

    def as_seen(self, cell: dict[str, Any], ctx: ToolContext) -> None:
        """Refuse to change a cell the user changed since the agent last saw it (one it
        never saw is changed as it is now); the refusal shows the cell as it is, which
        the agent has then seen."""
        seen = ctx.read_files.get(_seen_key(cell["id"]))
        if seen is None or seen == _digest(cell["source"]):
            return
        note_seen(ctx.read_files, [cell])
        raise ToolError(
            f"Cell {cell['id']} changed since you last read it (the user edited it, or "
            "NotebookRead showed the saved file and the cell has unsaved changes), so "
            "nothing was changed. It is now:\n```\n"
            f"{cap_head_tail(cell['source'], _SHOWN_CHARS)}\n```\n"
            "Make the change again against this source, if it still applies.")

    async def change(self, request: dict[str, Any]) -> dict[str, Any]:
        """Ask the extension for a change (the one way the cell tools change cells)."""
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
        cell, index = await self.cells.cell(input["cell_id"])
        source, old = cell["source"], input["old_string"]
        self.cells.name(cell, index, before=source)
        self.cells.as_seen(cell, ctx)
        if old and source.count(old) != 1:
            raise ToolError(f"old_string occurs {source.count(old)} times in the cell; give "
                            "text that occurs exactly once.")
        new = source.replace(old, input["new_string"], 1) if old else input["new_string"]
        await self.cells.change({"request": "edit_cell", "cell": cell["id"], "source": new,
                                 "expect": source,
                                 "provenance": self.cells.provenance(self.name)})
        self.cells.journal.append(CellOp("edit", cell["id"], source, new))
        note_seen(ctx.read_files, [{"id": cell["id"], "source": new}])
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
        at = None
        if after is not None:
            at = (await self.cells.cell(after, changing=False))[1] + 1
        self.cells.name({"source": input["code"]}, at)
        answer = await self.cells.change({
            "request": "insert_cell", "after": after, "source": input["code"],
            "cell_type": input.get("cell_type") or "code",
            "provenance": self.cells.provenance(self.name)})
        new_id = str(answer.get("cell") or "")
        self.cells.journal.append(CellOp("insert", new_id, after=input["code"]))
        note_seen(ctx.read_files, [{"id": new_id, "source": input["code"]}])
        return ToolOutput(f"Inserted cell {new_id} below cell {after}. It was not run.")


class DeleteCellTool(_CellTool):
    name = "DeleteCell"
    description = "Deletes a cell of the user's notebook, named by its id."
    schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"cell_id": _CELL_ID},
                    "required": ["cell_id"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell, index = await self.cells.cell(input["cell_id"])
        self.cells.name(cell, index, before=cell["source"])
        self.cells.as_seen(cell, ctx)
        answer = await self.cells.change({"request": "delete_cell", "cell": cell["id"],
                                          "expect": cell["source"]})
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
        self.cells.name(cell, index, to=input["to_index"])
        answer = await self.cells.change({"request": "move_cell", "cell": cell["id"],
                                          "to": input["to_index"], "expect_index": index})
        to = answer.get("index")
        to = to if isinstance(to, int) and not isinstance(to, bool) else input["to_index"]
        self.cells.name(cell, index, to=to)
        self.cells.journal.append(CellOp("move", cell["id"], index, to))
        return ToolOutput(f"Moved cell {cell['id']} from position {index} to {to}.")


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
        cell, _ = await self._runnable(input["cell_id"])
        return {"source": cell["source"]}

    async def _runnable(self, cell_id: Any) -> tuple[dict[str, Any], int]:
        cell, index = await self.cells.cell(cell_id)
        self.cells.name(cell, index)
        if cell["cell_type"] != "code":
            raise ToolError(f"Cell {cell['id']} is a {cell['cell_type']} cell: only code "
                            "cells run.")
        if cell["source"].lstrip().startswith("%%fuxi"):
            raise ToolError("That is an agent (%%fuxi) cell: an agent cannot run another.")
        return cell, index

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        cell, index = await self._runnable(input["cell_id"])
        approved = ctx.approved_shown.get("source")
        if approved is None:
            raise ToolError(f"The code of cell {cell['id']} was not shown when the call was "
                            "decided, so it was not run.")
        if cell["source"] != approved:
            raise ToolError(f"Cell {cell['id']} changed after its code was shown for "
                            "approval, so it was not run; read it again before running it.")
        self.cells.name(cell, index, ran=approved)
        ran: tuple[ToolOutput, list[dict[str, Any]]] = await self.python.run_as_cell(
            approved)
        output, outputs = ran
        with_outputs = {"request": "set_outputs", "cell": cell["id"], "outputs": outputs,
                        "expect": approved}  # not onto code the user changed meanwhile
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
        tool.shown = None  # nothing runs, so nothing beyond the input is shown (RunCell)
    return found


def cell_tools(cells: LiveCells, python: Any) -> list[Any]:
    """EditCell, InsertCell (its live form), DeleteCell, MoveCell and RunCell."""
    return [EditCellTool(cells), InsertLiveCellTool(cells), DeleteCellTool(cells),
            MoveCellTool(cells), RunCellTool(cells, python)]
