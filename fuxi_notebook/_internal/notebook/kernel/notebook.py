"""Tools on the notebook document: read the saved notebook, insert a cell below."""

from __future__ import annotations

import os
from typing import Any

from ....errors import ConfigurationError
from ...sessions.notebook_file import read_document
from ...tools.base import DeclaredTool, ToolContext, ToolError, ToolOutput
from ...tools.files.ipynb import render_notebook
from ...tools.truncate import cap_head_tail
from .cells import note_seen

__all__ = ["InsertCellTool", "NotebookReadTool", "notebook_path"]

MAX_NOTEBOOK_CHARS = 100_000


def notebook_path(shell: Any) -> str | None:
    """The current notebook's path, from wherever the frontend left it.

    `FUXI_NOTEBOOK` (set by the user) wins; JupyterLab sets `JPY_SESSION_NAME` (copied by
    ipykernel into `__session__`); VS Code sets `__vsc_ipynb_file__`.
    """
    for name in ("FUXI_NOTEBOOK", "JPY_SESSION_NAME"):
        value = os.environ.get(name)
        if value:
            return value
    namespace = getattr(shell, "user_ns", None) or {}
    for name in ("__session__", "__vsc_ipynb_file__"):
        value = namespace.get(name)
        if isinstance(value, str) and value:
            return value
    return None


class NotebookReadTool(DeclaredTool):
    """Read the current notebook (as saved) cell by cell."""

    name = "NotebookRead"
    description = (
        "Reads the notebook this kernel belongs to, as last saved to disk (unsaved edits "
        "and outputs produced since the last save are not included), and shows it cell by "
        "cell: index (from 0), type, id, source and text outputs. `max_cells` (optional) "
        "limits how many cells, from the top, are shown. To see the values in the kernel, "
        "use Variables or Inspect instead."
    )

    kind = "read"

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "max_cells": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Show at most this many cells from the top (default all).",
                },
            },
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Locate, parse and render the notebook file."""
        raw = notebook_path(self.shell)
        if raw is None:
            raise ToolError(
                "The path of the current notebook is unknown (the frontend did not tell the "
                "kernel). Set it with `os.environ['FUXI_NOTEBOOK'] = 'path/to/notebook.ipynb'` "
                "or the FUXI_NOTEBOOK environment variable, or Read the .ipynb file by path."
            )
        path = ctx.resolve(raw)
        try:  # the one bounded reader: the file may be anything (a FIFO, /dev/zero)
            cells = read_document(path)["cells"]
        except ConfigurationError as exc:
            raise ToolError(str(exc)) from None
        limit = input.get("max_cells") or len(cells)
        note_seen(ctx.read_files, (c for c in cells[:limit] if isinstance(c, dict)))
        text = f"Notebook {path} as saved on disk, {len(cells)} cells:\n\n"
        text += render_notebook({"cells": cells[:limit]})
        if len(cells) > limit:
            text += f"\n\n({len(cells) - limit} more cells not shown; raise max_cells to see them)"
        return ToolOutput(content=cap_head_tail(text, MAX_NOTEBOOK_CHARS))


class InsertCellTool(DeclaredTool):
    """Propose code to the user as a new, unexecuted cell below the current one."""

    name = "InsertCell"
    description = (
        "Inserts a new code cell with the given code below the current cell in the user's "
        "notebook, without running it; the cell appears when the current cell finishes "
        "(not if it ends in an error or is interrupted). "
        "Use it for code the user should keep, review or run themselves. One cell can be "
        "inserted per run: further calls in the same run are appended to that cell."
    )

    kind = "edit"
    #: the cell a recorded call added is in the notebook already
    on_replay = "recorded"

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._pending: tuple[Any, str] | None = None
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "Source of the new code cell."},
            },
            "required": ["code"],
            "additionalProperties": False,
        }

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """`set_next_input`; within one run the frontend keeps only the last, so merge."""
        code = input["code"]
        if not code.strip():
            raise ToolError("The cell code is empty; give the code to insert.")
        key = _execution_key(self.shell)
        earlier = self._earlier_insertion(key)
        text = f"{earlier.rstrip()}\n\n{code}" if earlier is not None else code
        self.shell.set_next_input(text, replace=False)
        self._pending = (key, text)
        if earlier is not None:
            return ToolOutput(
                content="Appended this code to the cell already inserted in this run (only "
                "one cell can be inserted per run). It was not run; it appears below the "
                "current cell when it finishes."
            )
        return ToolOutput(
            content="Inserted a new code cell below the current cell. It was not run; it "
            "appears when the current cell finishes."
        )


    def _earlier_insertion(self, key: tuple[Any, Any]) -> str | None:
        """Code already inserted during this run, which the next insertion would replace.

        ipykernel keeps one `set_next_input` payload per execution (in the payload
        manager, cleared after each request) and JupyterLab honours only the first;
        plain IPython only remembers the last text, so this tool's own record of the run
        is the fallback. A `replace=True` payload rewrites the running cell itself (the
        `%%fuxi` id stamp) and is not code to merge with.
        """
        manager = getattr(self.shell, "payload_manager", None)
        try:
            payloads = list(manager.read_payload()) if manager is not None else []
        except Exception:
            payloads = []
        for payload in payloads:
            if (isinstance(payload, dict) and payload.get("source") == "set_next_input"
                    and not payload.get("replace")):
                return str(payload.get("text", ""))
        if self._pending is not None and self._pending[0] == key:
            return self._pending[1]
        return None


def _execution_key(shell: Any) -> tuple[Any, Any]:
    """Identifies the running cell: the execution count and, in a kernel, the request id."""
    parent = getattr(shell, "parent_header", None)
    msg_id = None
    if isinstance(parent, dict):
        header = parent.get("header", parent)
        msg_id = header.get("msg_id") if isinstance(header, dict) else None
    return getattr(shell, "execution_count", None), msg_id
