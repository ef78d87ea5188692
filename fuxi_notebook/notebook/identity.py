"""Which notebook this kernel runs and which saved cell a running `%%fuxi` cell is.

The notebook: `FUXI_NOTEBOOK`, then what the frontend tells the kernel (`JPY_SESSION_NAME`
and `__session__` from Jupyter Server, `__vsc_ipynb_file__` from VS Code), else none.
A cell: `--id`, then the frontend's cell id (JupyterLab, Notebook 7, VS Code send the
nbformat cell id, which survives save, reload, reordering and copy/paste as a new id),
then the saved cell with the same text (`sessions.notebook_file` explains the rule), else
an id derived from the cell's text and how many identical cells ran before it, so two
runs of the same notebook give the same ids.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..sessions.notebook_file import FuxiCell, SavedNotebook, read_notebook
from .kernel_notebook import notebook_path

__all__ = ["CellIdentity", "NotebookIdentity"]


@dataclass(frozen=True)
class CellIdentity:
    """A running cell: its id, and the saved cell it is (if the notebook is known)."""

    cell_id: str
    saved: FuxiCell | None
    position: int | None  # its index among the saved notebook's cells


@dataclass
class NotebookIdentity:
    """The notebook file (re-read when it changes on disk) and the cells matched so far."""

    shell: Any
    notes: list[str] = field(default_factory=list)  # said once, shown in the next cell
    _cache: tuple[Path, int, SavedNotebook] | None = None
    _said: set[str] = field(default_factory=set)
    _used: set[int] = field(default_factory=set)
    _last: int | None = None
    _runs: dict[str, int] = field(default_factory=dict)

    def path(self) -> Path | None:
        raw = notebook_path(self.shell)
        if raw is None:
            return None
        path = Path(raw).expanduser()
        return path if path.is_absolute() else Path.cwd() / path

    def saved(self, *, needed_for: str | None = None) -> SavedNotebook | None:
        """The saved notebook, or None (saying why once, if a feature needed it)."""
        path = self.path()
        if path is None:
            if needed_for:
                self._say("unknown", "fuxi: this kernel does not know its notebook file, so "
                          f"{needed_for} is not possible; set FUXI_NOTEBOOK=path/to/it.ipynb "
                          "(os.environ in a cell works) to enable it.")
            return None
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            if needed_for:
                self._say(f"missing:{path}", f"fuxi: the notebook {path} is not saved on disk "
                          f"(yet), so {needed_for} is not possible; save it first.")
            return None
        if self._cache is not None and self._cache[:2] == (path, stamp):
            return self._cache[2]
        try:
            notebook = read_notebook(path)
        except ConfigurationError as error:
            self._say(f"bad:{path}:{stamp}", f"fuxi: {error}")
            return None
        self._cache = (path, stamp, notebook)
        return notebook

    def _say(self, key: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.notes.append(text)

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def cell(self, line: str, body: str, *, explicit: str | None) -> CellIdentity:
        """The identity of the cell now running (see the module docstring)."""
        notebook = self.saved()
        frontend = explicit or _frontend_cell_id(self.shell)
        saved = None
        if notebook is not None:
            saved = notebook.cell(frontend) if frontend else notebook.match(
                line, body, after=self._last, used=frozenset(self._used))
        if saved is not None:
            self._used.add(saved.index)
            self._last = saved.index
        # matched by text: the cell is the one its saved record speaks of (a run without a
        # notebook file gave it a derived id, which the record keeps)
        matched = (saved.key or saved.cell_id) if saved is not None else None
        cell_id = frontend or matched or self._derived(line, body)
        return CellIdentity(cell_id, saved, saved.index if saved is not None else None)

    def _derived(self, line: str, body: str) -> str:
        text = f"{' '.join(line.split())}\n{body.strip()}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        count = self._runs[digest] = self._runs.get(digest, 0) + 1
        return f"fx-{digest}" + (f"-{count}" if count > 1 else "")


def _frontend_cell_id(shell: Any) -> str | None:
    kernel = getattr(shell, "kernel", None)
    parent = kernel.get_parent() if kernel is not None else None
    cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return str(cell_id) if cell_id else None
