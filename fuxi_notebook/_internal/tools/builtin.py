"""The default tool set, in the order the model sees it."""

from __future__ import annotations

from .ask import AskUserQuestionTool
from .base import Tool
from .files.file_tools import EditTool, ReadTool, WriteTool
from .files.search import GlobTool, GrepTool
from .shell import BashTool

__all__ = ["builtin_tools"]


def builtin_tools() -> list[Tool]:
    """Fresh instances of the built-in tools (tools hold no state)."""
    return [ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool(), BashTool(),
            AskUserQuestionTool()]
