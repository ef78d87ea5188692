"""The kernel tools: the agent's hands inside the user's live Jupyter kernel.

`kernel_tools(shell)` builds them for a session; the implementations live in sibling
modules (`python`, `variables`, `inspect`, `notebook`) and `KernelContext` (in
`context`) tells the agent what the user did between turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...tools.base import Tool
from .cells import LiveCells, cell_tools
from .context import KernelContext
from .inspect import InspectTool
from .names import NameWatch
from .notebook import InsertCellTool, NotebookReadTool, notebook_path
from .python import PythonTool
from .variables import VariablesTool

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "InsertCellTool",
    "InspectTool",
    "KernelContext",
    "NotebookReadTool",
    "PythonTool",
    "VariablesTool",
    "kernel_tools",
    "notebook_path",
]


def kernel_tools(shell: InteractiveShell, *, names: NameWatch | None = None,
                 cells: LiveCells | None = None) -> list[Tool]:
    """Python, Variables, Inspect, NotebookRead and InsertCell, all bound to `shell`;
    `names` watches what the Python calls do to the kernel's names (`%fuxi undo`); with
    `cells` (a frontend extension that changes cells) the cell tools join, InsertCell in
    its live form."""
    python = PythonTool(shell, names)
    tools: list[Tool] = [python, VariablesTool(shell), InspectTool(shell),
                         NotebookReadTool(shell)]
    if cells is None:
        return [*tools, InsertCellTool(shell)]
    return [*tools, *cell_tools(cells, python)]
