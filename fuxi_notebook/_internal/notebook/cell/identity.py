"""Which notebook this kernel runs and which of its cells a running `%%fuxi` cell is.

The notebook: `FUXI_NOTEBOOK`, then what the frontend tells the kernel (`JPY_SESSION_NAME`
and `__session__` from Jupyter Server, `__vsc_ipynb_file__` from VS Code), else none. Its
cells: the live document when the frontend extension answers (live_notebook.py: order,
unsaved sources, the records mirrored into metadata), else the saved file.

A cell: `--id`, then the frontend's cell id when it is an nbformat cell id (JupyterLab and
Notebook 7 send it; it survives save, reload and reordering, and copy/paste gives a new
one), then the cell with the same text (`sessions.notebook_file` explains the rule), else
an id derived from the cell's text and how many identical cells ran before it, so two
runs of the same notebook give the same ids. VS Code sends the cell document's URI
(`vscode-notebook-cell:…#W3s…`, which changes when the notebook is reopened), nbclient and
nbval send nothing: their cells are matched by text. A saved cell whose record names
another id that no cell of the notebook has (nbstripout renumbers ids 0, 1, 2…) is that
record's cell; if another cell has that id, it is a copy.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....errors import ConfigurationError
from ...sessions.notebook_file import FuxiCell, SavedNotebook, live_notebook, read_notebook
from ..kernel.notebook import notebook_path
from .live_notebook import LiveDocument

__all__ = ["CellIdentity", "NotebookIdentity", "is_nbformat_id"]

#: at most this many notebooks of the working folder are looked at for `_guess`
_MAX_GUESSED = 50
#: what nbformat 4.5 allows as a cell id
_NBFORMAT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def is_nbformat_id(value: str) -> bool:
    """Whether a frontend's cell id is an nbformat cell id (VS Code sends a URI)."""
    return _NBFORMAT_ID.fullmatch(value) is not None


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
    #: the live document of the running cell (the frontend extension's), if any
    live: LiveDocument | None = None
    _merged: tuple[int, SavedNotebook] | None = None
    #: the one notebook of the working folder holding the running cell, for a kernel
    #: that was not told its notebook (`jupyter execute`, papermill)
    _guessed: Path | None = None

    def raw_path(self) -> str | None:
        """The notebook path as the frontend or the user gave it (not resolved)."""
        return notebook_path(self.shell)

    def path(self) -> Path | None:
        raw = notebook_path(self.shell)
        if raw is None:
            return self._guessed
        path = Path(raw).expanduser()
        return path if path.is_absolute() else Path.cwd() / path

    def use_live(self, document: LiveDocument | None) -> None:
        """The live document for the cell now starting (None: the saved file)."""
        self.live, self._merged = document, None

    def saved(self, *, needed_for: str | None = None) -> SavedNotebook | None:
        """The notebook's `%%fuxi` cells: the live document's (with the saved file's
        outputs), else the saved file's, else None (saying why once, if a feature needed
        it)."""
        if self.live is not None:
            return self._live_notebook()
        return self._file(needed_for)

    def _live_notebook(self) -> SavedNotebook:
        assert self.live is not None
        if self._merged is None or self._merged[0] != id(self.live):
            path = self.path() or Path(self.live.path or "notebook.ipynb")
            self._merged = (id(self.live), live_notebook(path, self.live.cells, self._file(None)))
        return self._merged[1]

    def _file(self, needed_for: str | None) -> SavedNotebook | None:
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
        if self.live is None and self.path() is None:
            self._guess(line, body)
        notebook = self.saved()
        sent = _frontend_cell_id(self.shell)
        frontend = explicit or (sent if sent and is_nbformat_id(sent) else None)
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
        if frontend and not explicit and saved is not None and _renumbered(notebook, saved):
            frontend = None  # its record's id is the cell's (nbstripout renumbered it)
        cell_id = frontend or matched or self._derived(line, body)
        return CellIdentity(cell_id, saved, saved.index if saved is not None else None)

    def _guess(self, line: str, body: str) -> None:
        """nbclient (`jupyter execute`, papermill) runs a kernel in the notebook's folder
        without telling it the notebook: the notebook there that has this cell is the
        one. Several that agree on its record (papermill's output notebook starts as a
        copy of its input) count as one: the oldest file. Said once; FUXI_NOTEBOOK
        chooses another."""
        if getattr(self.shell, "kernel", None) is None:
            return  # terminal IPython has no notebook
        found: list[tuple[int, Path, str | None]] = []
        for candidate in sorted(Path.cwd().glob("*.ipynb"))[:_MAX_GUESSED]:
            try:
                notebook = read_notebook(candidate)
                stamp = candidate.stat().st_mtime_ns
            except (ConfigurationError, OSError):
                continue
            cell = notebook.match(line, body)
            if cell is not None:
                record = cell.record.model_dump_json() if cell.record is not None else None
                found.append((stamp, candidate, record))
        if not found or len({record for _, _, record in found}) > 1:
            return
        chosen = min(found)[1]
        self._guessed = chosen
        self._say("guessed", f"fuxi: this kernel was not told its notebook; it uses "
                  f"{chosen.name}, the notebook in {chosen.parent} with this cell "
                  "(FUXI_NOTEBOOK=path chooses another)")

    def _derived(self, line: str, body: str) -> str:
        text = f"{' '.join(line.split())}\n{body.strip()}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        count = self._runs[digest] = self._runs.get(digest, 0) + 1
        return f"fx-{digest}" + (f"-{count}" if count > 1 else "")


def _renumbered(notebook: SavedNotebook | None, cell: FuxiCell) -> bool:
    """`cell`'s record names another cell id, and no cell of the notebook has that id:
    the cell's id was rewritten (nbstripout numbers them), it is not a copy."""
    record = cell.record
    if notebook is None or record is None or record.cell_id == cell.cell_id:
        return False
    return notebook.by_nbformat_id(record.cell_id) is None


def _frontend_cell_id(shell: Any) -> str | None:
    kernel = getattr(shell, "kernel", None)
    parent = kernel.get_parent() if kernel is not None else None
    cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return str(cell_id) if cell_id else None
