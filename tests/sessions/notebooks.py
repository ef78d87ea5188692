"""A saved notebook with recorded sessions, for the tests that read a notebook as a store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from fuxi_notebook._internal.sessions.record import RECORD_MIME, SessionRecord, build_record

from .helpers import build_kwargs, result_message, run_messages

SID = "aaaa1111-0000-4000-8000-000000000001"
FORK = "bbbb2222-0000-4000-8000-000000000002"


def exchange(prompt: str, answer: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": prompt}]},
            {"role": "assistant", "content": [{"type": "text", "text": answer}]}]


def owing(prompt: str) -> list[dict[str, Any]]:
    """A run that ended owing the result of its call (stored as its last message)."""
    return [{"role": "user", "content": [{"type": "text", "text": prompt}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t9", "name": "Bash",
                                               "input": {"command": "make"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9",
                                          "content": "Not executed: maximum number of turns "
                                                     "reached.", "is_error": True}]}]


def _record(cell_id: str, session_id: str, parent: str | None, prompt: str,
            messages: list[dict[str, Any]]) -> SessionRecord:
    return build_record(**build_kwargs(cell_id=cell_id, session_id=session_id, parent=parent,
                                       prompt=prompt, messages=messages, cwd="/work/nb",
                                       result=result_message(session_id=session_id)))


def write_notebook(folder: Path, *, owed: bool = False) -> Path:
    """Cell a starts session SID, b continues it, c forks it (session FORK) from a; with
    `owed`, cell d continues SID and ends owing a tool result."""
    cells = [("a", _record("a", SID, None, "Fix the failing test", run_messages()), "10:00"),
             ("b", _record("b", SID, "a", "Now add a test",
                           exchange("Now add a test", "Added.")), "10:05"),
             ("c", _record("c", FORK, "a", "Try another way",
                           exchange("Try another way", "Other.")), "10:10")]
    if owed:
        cells.append(("d", _record("d", SID, "b", "Build it", owing("Build it")), "10:15"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# analysis", id="md")]
    for cell_id, record, time in cells:
        cell = nbformat.v4.new_code_cell(f"%%fuxi\n{record.prompt}", id=cell_id)
        cell.outputs = [nbformat.v4.new_output(
            "display_data", data={RECORD_MIME: record.model_dump(mode="json")},
            metadata={"fuxi": {"finished_at": f"2026-01-05T{time}:00+0000"}})]
        nb.cells.append(cell)
    path = folder / "analysis.ipynb"
    nbformat.write(nb, path)
    return path
