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

A kernel nobody told its notebook (`jupyter execute`, papermill: nbclient starts it in
the notebook's folder) guesses it again for every `%%fuxi` cell, from the notebooks of
that folder: those holding this cell (its whole text, and its id when one is known) and
every `%%fuxi` cell run before it. They must agree on what this cell is (its ids, its
record and the records it continues); papermill's output notebook, a copy of its input,
agrees. Notebooks that disagree are a refusal naming them: a notebook planted beside the
one that runs, holding the same cells with other records, is never replayed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ....errors import ConfigurationError
from ...sessions.notebook_file import (
    FuxiCell,
    SavedNotebook,
    live_notebook,
    read_notebook,
    source_key,
)
from ..extension.live_notebook import LiveDocument
from ..kernel.notebook import notebook_path

__all__ = ["CellIdentity", "NotebookIdentity", "is_nbformat_id"]

#: a kernel not told its notebook guesses it only among this many notebooks or fewer
_MAX_GUESSED = 50
#: a refusal names this many of the notebooks that disagree
_NAMED_AT_MOST = 4
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
    #: the notebook of the working folder holding the running cell, for a kernel that
    #: was not told its notebook (`jupyter execute`, papermill), and the folder looked in
    _guessed: Path | None = None
    _folder: Path | None = None
    #: the texts of the `%%fuxi` cells run so far while guessing: a candidate holds each
    _ran: set[tuple[str, str]] = field(default_factory=set)
    #: each candidate read, by path: its stat signature, the notebook, its cells' texts
    _candidates: dict[Path, tuple[tuple[int, ...], SavedNotebook, frozenset[tuple[str, str]]]
                      ] = field(default_factory=dict)

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
        sent = _frontend_cell_id(self.shell)
        frontend = explicit or (sent if sent and is_nbformat_id(sent) else None)
        if self.live is None and notebook_path(self.shell) is None:
            self._guess(line, body, frontend)
        notebook = self.saved()
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

    def _guess(self, line: str, body: str, cell_id: str | None) -> None:
        """The notebook of a kernel nobody told it (see the module docstring): said once
        per notebook chosen; UsageError when the notebooks holding this cell disagree."""
        if getattr(self.shell, "kernel", None) is None:
            return  # terminal IPython has no notebook
        self._folder = folder = self._folder or Path.cwd()
        self._ran.add(source_key(line, body))
        names = sorted(folder.glob("*.ipynb"))
        if len(names) > _MAX_GUESSED:
            self._guessed = None
            self._say("too many", f"fuxi: this kernel was not told its notebook, and {folder} "
                      f"holds more than {_MAX_GUESSED} notebooks to guess it from; set "
                      "FUXI_NOTEBOOK=path/to/it.ipynb (os.environ in a cell works)")
            return
        found: dict[Path, Any] = {}
        for candidate in names:
            read = self._candidate(candidate, folder)
            held = _what_it_holds(read[0], line, body, cell_id) if read is not None and (
                self._ran <= read[1]) else None
            if held:
                found[candidate] = held
        if not found:  # the notebook that runs is not here: cells get ids of their own
            self._guessed = None
            return
        if len({json.dumps(held, sort_keys=True) for held in found.values()}) > 1:
            self._guessed = None
            raise UsageError(_disagreement(folder, sorted(found)))
        chosen = self._guessed if self._guessed in found else min(
            found, key=lambda path: (self._candidates[path][0][2], path))  # the oldest
        if chosen != self._guessed:
            self._used, self._last = set(), None  # positions are per notebook
        self._guessed = chosen
        self._say(f"guessed:{chosen}", f"fuxi: this kernel was not told its notebook; it "
                  f"uses {chosen.name}, the notebook in {chosen.parent} with this cell "
                  "(FUXI_NOTEBOOK=path chooses another)")

    def _candidate(self, path: Path, folder: Path
                   ) -> tuple[SavedNotebook, frozenset[tuple[str, str]]] | None:
        """The notebook at `path` (read by the bounded reader, never through a link out
        of `folder`) and its cells' texts, or None when it cannot be read; kept while its
        file is unchanged."""
        try:
            found = path.stat()
        except OSError:
            return None
        signature = (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
        kept = self._candidates.get(path)
        if kept is not None and kept[0] == signature:
            return kept[1], kept[2]
        try:
            notebook = read_notebook(path, zone=folder)
        except ConfigurationError:
            return None
        texts = frozenset(source_key(cell.line, cell.body) for cell in notebook.cells)
        self._candidates[path] = (signature, notebook, texts)
        return notebook, texts

    def _derived(self, line: str, body: str) -> str:
        text = f"{' '.join(line.split())}\n{body.strip()}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        count = self._runs[digest] = self._runs.get(digest, 0) + 1
        return f"fx-{digest}" + (f"-{count}" if count > 1 else "")


def _what_it_holds(notebook: SavedNotebook, line: str, body: str, cell_id: str | None
                   ) -> list[Any]:
    """What `notebook` says the running cell is: each cell with its text (and `cell_id`,
    if known), with its ids, its record and the records that record continues."""
    held: list[Any] = []
    for cell in notebook.holding(line, body):
        if cell_id is not None and cell_id not in (cell.cell_id, cell.key):
            continue
        record = cell.record.model_dump(mode="json") if cell.record is not None else None
        chain: list[Any] = []
        try:
            if cell.key and cell.record:
                chain = [c.record.model_dump(mode="json") for c in notebook.chain(cell.key)
                         if c.record is not None]
        except ConfigurationError as error:
            chain = [str(error)]
        held.append([cell.cell_id, cell.key, record, cell.problem, chain])
    return held


def _disagreement(folder: Path, paths: list[Path]) -> str:
    """The refusal: which notebooks hold the running cell differently."""
    named = ", ".join(path.name for path in paths[:_NAMED_AT_MOST])
    more = f" and {len(paths) - _NAMED_AT_MOST} more" if len(paths) > _NAMED_AT_MOST else ""
    return (f"%%fuxi: this kernel was not told its notebook, and the notebooks in {folder} "
            f"that hold this cell disagree on it ({named}{more}), so none of their records "
            "is used and nothing ran: set FUXI_NOTEBOOK=path/to/it.ipynb (os.environ in a "
            "cell works) to say which one this is")


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
