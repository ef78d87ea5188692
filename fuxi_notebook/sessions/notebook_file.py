"""The `%%fuxi` cells of a saved notebook (.ipynb) and the session records in their outputs.

Core: plain JSON, no IPython. A kernel reads the file to continue a conversation after a
restart, to find the record a cell replays and to learn a cell's identity when the frontend
sends none; `python -m fuxi_notebook sessions` reads it from a shell.

Cell identity without a frontend cell id (nbclient, nbval, papermill send none): a running
cell is matched to the saved cell with the same `%%fuxi` line and prompt (whitespace at
the ends ignored). Several identical cells are told apart by order: the first one after
the cell matched last, else the first one not matched yet. Limits: a cell edited since
the last save has no match (it gets an id derived from its text and position in the run);
records are read from the file as last saved, so unsaved runs are not seen after a restart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .record import MAX_RECORD_BYTES, RECORD_MIME, SessionRecord, load_record

__all__ = ["MAX_NOTEBOOK_BYTES", "FuxiCell", "SavedNotebook", "read_notebook",
           "split_fuxi_source"]

#: A notebook file bigger than this is not read for sessions.
MAX_NOTEBOOK_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class FuxiCell:
    """One saved `%%fuxi` cell.

    Attributes:
        index: its position among all the notebook's cells (from 0).
        cell_id: the nbformat cell id (None in notebooks older than nbformat 4.5).
        line: the options after `%%fuxi`; body: the prompt.
        record: the session record in its outputs, if one could be read.
        problem: why a record output could not be read (malformed, oversized, version).
        outputs: the saved outputs (figures a record refers to live here).
        volatile: the record output's metadata (cost, usage, timings).
    """

    index: int
    cell_id: str | None
    line: str
    body: str
    record: SessionRecord | None = None
    problem: str | None = None
    outputs: tuple[Mapping[str, Any], ...] = ()
    volatile: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str | None:
        """The id the cell's record uses (the record's own cell id wins)."""
        return self.record.cell_id if self.record is not None else self.cell_id


def split_fuxi_source(source: str) -> tuple[str, str] | None:
    """`(line, body)` of a `%%fuxi` cell's source, or None for any other cell."""
    lines = source.splitlines()
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines):
        return None
    head = lines[first].rstrip()
    if not (head == "%%fuxi" or head.startswith(("%%fuxi ", "%%fuxi\t"))):
        return None
    return head[len("%%fuxi"):].strip(), "\n".join(lines[first + 1:]).strip("\n")


def same_source(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Two `(line, body)` pairs are the same cell text (ends' whitespace ignored)."""
    return a[0].split() == b[0].split() and a[1].strip() == b[1].strip()


class SavedNotebook:
    """The `%%fuxi` cells of one notebook file, in order."""

    def __init__(self, path: Path, cells: list[FuxiCell]) -> None:
        self.path = path
        self.cells = cells

    def cell(self, key: str) -> FuxiCell | None:
        """The cell whose record id is `key`, else the cell whose nbformat id is."""
        for cell in self.cells:
            if cell.record is not None and cell.record.cell_id == key:
                return cell
        for cell in self.cells:
            if cell.cell_id == key:
                return cell
        return None

    def match(self, line: str, body: str, *, after: int | None = None,
              used: frozenset[int] = frozenset()) -> FuxiCell | None:
        """The saved cell a running cell is, by its text (see the module docstring)."""
        candidates = [c for c in self.cells if same_source((c.line, c.body), (line, body))]
        if after is not None:
            for cell in candidates:
                if cell.index > after:
                    return cell
        for cell in candidates:
            if cell.index not in used:
                return cell
        return candidates[0] if candidates else None

    def recorded_above(self, index: int) -> FuxiCell | None:
        """The nearest cell above position `index` that has a record."""
        for cell in reversed(self.cells):
            if cell.index < index and cell.record is not None:
                return cell
        return None

    def chain(self, key: str) -> list[FuxiCell]:
        """The cells of the conversation that ends with cell `key`, oldest first.

        Raises ConfigurationError when a link leads nowhere or round in a circle.
        """
        from .history import follow_parents

        records = follow_parents(key, self.record_or_why)
        return [cell for record in records if (cell := self.cell(record.cell_id))]

    def record_or_why(self, key: str) -> SessionRecord | str:
        """The record of cell `key`, or why it has none (for `follow_parents`)."""
        cell = self.cell(key)
        if cell is None:
            return "is not in the saved notebook"
        if cell.record is None:
            why = f" ({cell.problem})" if cell.problem else ""
            return f"has no readable session record{why}"
        return cell.record


def read_notebook(path: str | Path) -> SavedNotebook:
    """The saved notebook at `path`. Raises ConfigurationError with one readable line."""
    path = Path(path).expanduser()
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise ConfigurationError(f"{path} is too large to read sessions from "
                                     f"({size} bytes)")
        document = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigurationError(f"cannot read the notebook {path}: {exc.strerror or exc}"
                                 ) from None
    except ValueError as exc:
        raise ConfigurationError(f"{path} is not valid notebook JSON: {exc}") from None
    raw_cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(raw_cells, list):
        raise ConfigurationError(f"{path} is not a Jupyter notebook (no 'cells' list)")
    cells = []
    for index, raw in enumerate(raw_cells):
        cell = _fuxi_cell(index, raw)
        if cell is not None:
            cells.append(cell)
    return SavedNotebook(path, cells)


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _fuxi_cell(index: int, raw: Any) -> FuxiCell | None:
    if not isinstance(raw, dict) or raw.get("cell_type") != "code":
        return None
    split = split_fuxi_source(_text(raw.get("source")))
    if split is None:
        return None
    outputs = tuple(o for o in raw.get("outputs") or [] if isinstance(o, dict))
    record, problem, volatile = None, None, {}
    for output in outputs:
        data = output.get("data")
        if isinstance(data, dict) and RECORD_MIME in data:
            record, problem = _load(data[RECORD_MIME])
            metadata = output.get("metadata")
            fuxi = metadata.get("fuxi") if isinstance(metadata, dict) else None
            volatile = fuxi if isinstance(fuxi, dict) else {}
    cell_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    return FuxiCell(index, cell_id, split[0], split[1], record, problem, outputs, volatile)


def _load(data: Any) -> tuple[SessionRecord | None, str | None]:
    try:
        size = len(data) if isinstance(data, str) else len(json.dumps(data))
    except (TypeError, ValueError):
        return None, "the record is not JSON"
    if size > MAX_RECORD_BYTES:
        return None, f"the record is too large ({size} bytes; the limit is {MAX_RECORD_BYTES})"
    try:
        return load_record(data), None
    except ConfigurationError as error:
        return None, str(error)
