"""The `%fuxi undo [CELL] [--list] [--conversation]` line: what it accepts and shows.

`%fuxi undo` undoes the newest agent cell of this kernel that changed something;
`%fuxi undo CELL` that cell's newest run; `--list` shows what each cell changed (nothing
is undone); `--conversation` also makes the next `%%fuxi` cell go on from before that
cell, as `resume_session_at` does. The result is one folded line, its details below it.
The notebook answers for the cells the agent changed only after the line has ended (a
line magic cannot wait for a comm): the line shows them as waiting, and as each answer
comes, it and the agent cell's record say what the notebook did, in place.

After a kernel restart, the cells the earlier kernel ran come from the notebook's undo
journal (`UndoBook.recall`); an entry of it that cannot be used is one line above the
result. Their cell changes wait for the extension's hello (`reconnect.py`).
"""

from __future__ import annotations

import html
import time
import uuid
from typing import Any

from IPython.core.error import UsageError

from ...sessions.text.markdown import escape_math
from ..cell.undo import CellChanges, Undone
from .reconnect import ConnectingCells

__all__ = ["undo_command"]

_USAGE = "%fuxi undo [CELL] [--list] [--conversation]"


def undo_command(agent: Any, words: list[str]) -> None:
    """Run `%fuxi undo ...` (`words`: what follows `undo`)."""
    flags = {word for word in words if word.startswith("--")}
    unknown = flags - {"--list", "--conversation"}
    cells = [word for word in words if not word.startswith("--")]
    if unknown or len(cells) > 1:
        raise UsageError(f"%fuxi undo: {', '.join(sorted(unknown)) or 'one cell at most'}"
                         f" is not understood; use {_USAGE}")
    book = agent.undo
    for note in book.recall():
        _show(f"fuxi: {note}", "")
    if "--list" in flags:
        _show(*_listing(book.entries))
        return
    entry = book.find(cells[0] if cells else None)
    if entry is None:
        known = sorted({e.cell_id for e in book.entries if not e.undone})
        where = (f"cell {cells[0]} has nothing to undo" if cells
                 else "no agent cell of this kernel changed a file or a name")
        raise UsageError(f"%fuxi undo: {where}" + (
            f"; cells with changes: {', '.join(known)}" if known else "") + "; nothing changed")
    base, shown_id = entry.shown, f"fuxi-undo-{uuid.uuid4().hex}"
    notes: list[str] = []

    def answered(done: Undone) -> None:
        """The notebook answered for a cell (after this line ended): both outputs say
        what it did, in place."""
        _write_into_record(agent, entry, done, base)
        _show(*_result(entry, done, notes), display_id=shown_id, update=True)

    live = ConnectingCells(agent.live, agent.identity.raw_path())
    done = book.undo(entry, live, answered)
    if "--conversation" in flags:
        notes.append(agent.conversations.rewind_before(entry.cell_id))
    _write_into_record(agent, entry, done, base)
    _show(*_result(entry, done, notes), display_id=shown_id)


def _write_into_record(agent: Any, entry: CellChanges, done: Undone,
                       base: tuple[str, dict[str, Any], dict[str, Any]] | None) -> None:
    """The agent cell's record output says what was undone (its metadata `fuxi.undone`,
    which the frontend extension mirrors into the cell's metadata, and one folded line
    below its transcript): updated in place through its display id, as every Jupyter
    frontend does, so the saved notebook keeps it. `base`: the output as the cell left
    it (written again as each of the notebook's answers comes)."""
    from IPython.display import update_display

    from ..cell.outputs import with_undone

    undone = {"restored": list(done.restored), "kept": list(done.kept),
              "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    remembered = agent.conversations.records.get(entry.cell_id)
    if remembered is not None and remembered.record is entry.record:
        remembered.volatile["undone"] = undone
    if base is not None:
        display_id, data, metadata = base
        data, metadata = with_undone(data, metadata, undone)
        entry.shown = display_id, data, metadata
        update_display(data, raw=True, metadata=metadata, display_id=display_id)


def _result(entry: CellChanges, done: Undone, notes: list[str]) -> tuple[str, str]:
    head = f"fuxi: undid cell {entry.cell_id}" + (
        f" ({entry.label})" if entry.label else "") + f": {done.summary()}"
    lines = ([f"restored {item}" for item in done.restored]
             + [f"not undone: {item}" for item in done.kept]
             + [f"waiting: {item} (asked the notebook to take it back)"
                for item in done.waiting] + notes)
    return head, "\n".join(f"- {escape_math(line)}" for line in lines)


def _listing(entries: list[CellChanges]) -> tuple[str, str]:
    if not entries:
        return "fuxi: no agent cell of this kernel changed a file or a name", ""
    waiting = [e for e in entries if not e.undone]
    head = (f"fuxi: {len(waiting)} agent cell(s) with changes to undo" if waiting
            else "fuxi: every agent cell's changes are undone")
    blocks = []
    for entry in reversed(entries):  # newest first: what `%fuxi undo` takes next
        state = (" (undone)" if entry.undone else "") + (
            " (run before a kernel restart)" if entry.earlier_kernel else "")
        blocks.append(f"- cell {entry.cell_id}{state}: {escape_math(entry.label)}")
        blocks.extend(f"  - {escape_math(line)}" for line in entry.lines())
    return head, "\n".join(blocks)


def _show(head: str, details: str, display_id: str | None = None,
          update: bool = False) -> None:
    """One folded line (its details below it), as markdown, with a plain-text twin;
    `update`: in place of the display `display_id` shows."""
    from IPython.display import display, update_display

    markdown = (f"<details><summary>{html.escape(head)}</summary>\n\n{details}\n\n"
                "</details>" if details else escape_math(head))
    plain = f"{head}\n{details}" if details else head
    bundle = {"text/markdown": markdown, "text/plain": plain}
    if update:
        update_display(bundle, raw=True, display_id=display_id)
    else:
        display(bundle, raw=True, display_id=display_id)
