"""The kernel tools: the agent's hands inside the user's live Jupyter kernel.

`kernel_tools(shell)` builds them for a session; the implementations live in sibling
modules (`kernel_python`, `kernel_variables`, `kernel_inspect`, `kernel_notebook`) and
`KernelContext` (in `kernel_context`) tells the agent what the user did between turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...tools.base import Tool
from .context import KernelContext
from .inspect import InspectTool
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


def kernel_tools(shell: InteractiveShell) -> list[Tool]:
    """Python, Variables, Inspect, NotebookRead and InsertCell, all bound to `shell`."""
    return [
        PythonTool(shell),
        VariablesTool(shell),
        InspectTool(shell),
        NotebookReadTool(shell),
        InsertCellTool(shell),
    ]
