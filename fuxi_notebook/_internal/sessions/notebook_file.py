"""The `%%fuxi` cells of a saved notebook (.ipynb) and their session records.

A cell's record is read from its metadata first, its record output second
(`cell_record.py` says which copy wins when both exist).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..common.reading import Unreadable, load_json, read_bounded
from .cell_record import METADATA_KEY, cell_record
from .record import MAX_RECORD_BYTES, SessionRecord, load_record

__all__ = ["MAX_NOTEBOOK_BYTES", "MAX_NOTEBOOK_DEPTH", "FuxiCell", "SavedNotebook",
           "live_notebook", "read_document", "read_notebook", "same_source", "source_key",
           "split_fuxi_source"]

#: A notebook file bigger than this is not read for sessions (GitHub refuses files over
#: 100 MB; parsed, such a notebook takes several times its size in memory).
MAX_NOTEBOOK_BYTES = 128 * 1024 * 1024
#: A notebook nested deeper than this is not read: a notebook is about 8 levels, a record
#: in it about 15 more, a tool's input or a display's JSON some more.
MAX_NOTEBOOK_DEPTH = 128


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
        where: where the record was read ("metadata", "outputs"; see cell_record.py).
        outputs_cleared: the record is in the metadata only (figures it refers to are
            gone with the outputs).
        metadata_digest: the digest of the record in its metadata (a new run of the cell
            says it replaces it, for frontends that cannot write metadata).
    """

    index: int
    cell_id: str | None
    line: str
    body: str
    record: SessionRecord | None = None
    problem: str | None = None
    outputs: tuple[Mapping[str, Any], ...] = ()
    volatile: Mapping[str, Any] = field(default_factory=dict)
    where: str = ""
    outputs_cleared: bool = False
    metadata_digest: str | None = None

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


def source_key(line: str, body: str) -> tuple[str, str]:
    """A `%%fuxi` cell's text as compared: its options' words, its prompt without the
    whitespace at its ends."""
    return " ".join(line.split()), body.strip()


def same_source(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Two `(line, body)` pairs are the same cell text (ends' whitespace ignored)."""
    return source_key(*a) == source_key(*b)


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

    def by_nbformat_id(self, cell_id: str) -> FuxiCell | None:
        """The cell whose nbformat id is `cell_id` (not a record's id)."""
        for cell in self.cells:
            if cell.cell_id == cell_id:
                return cell
        return None

    def holding(self, line: str, body: str) -> list[FuxiCell]:
        """Every cell with this text, in order."""
        key = source_key(line, body)
        return [cell for cell in self.cells if source_key(cell.line, cell.body) == key]

    def match(self, line: str, body: str, *, after: int | None = None,
              used: frozenset[int] = frozenset()) -> FuxiCell | None:
        """The saved cell a running cell is, by its text (see the module docstring)."""
        candidates = self.holding(line, body)
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


def read_notebook(path: str | Path, *, zone: Path | None = None) -> SavedNotebook:
    """The saved notebook at `path` (when `zone` is given, not through a link out of it).
    Raises ConfigurationError with one readable line."""
    path = Path(path).expanduser()
    raw_cells = read_document(path, zone=zone)["cells"]
    cells = []
    for index, raw in enumerate(raw_cells):
        cell = _fuxi_cell(index, raw)
        if cell is not None:
            cells.append(cell)
    return SavedNotebook(path, cells)


def read_document(path: Path, *, zone: Path | None = None) -> dict[str, Any]:
    """A notebook file's JSON (it has a `cells` list), read by the bounded reader (a
    regular file of at most MAX_NOTEBOOK_BYTES, UTF-8, at most MAX_NOTEBOOK_DEPTH deep).
    Raises ConfigurationError with one readable line."""
    data = read_bounded(path, limit=MAX_NOTEBOOK_BYTES, zone=zone,
                        where=f"cannot read the notebook {path}")
    if data is None:
        raise Unreadable(f"cannot read the notebook {path}: No such file or directory")
    document = load_json(data, f"{path} is not valid notebook JSON", depth=MAX_NOTEBOOK_DEPTH)
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise Unreadable(f"{path} is not a Jupyter notebook (no 'cells' list)")
    return document


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
    held = cell_record(raw)
    record, problem = (None, held.problem) if held.data is None else _load(held.data)
    cell_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    return FuxiCell(index, cell_id, split[0], split[1], record, problem, outputs,
                    dict(held.volatile), held.where, held.outputs_cleared,
                    held.metadata_digest)


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


def live_notebook(path: Path, cells: Sequence[Mapping[str, Any]],
                  saved: SavedNotebook | None) -> SavedNotebook:
    """The `%%fuxi` cells of the notebook as the browser has it (the frontend extension's
    `cells`: id, cell_type, source, `fuxi` (the metadata record) and `has_record_output`):
    order, sources and metadata records are the live ones; a record that is only in a
    saved cell's outputs (a notebook from before the extension: the running cell's own
    outputs are cleared in the browser already) and the figures records refer to come
    from the saved file's cell with the same id."""
    found: list[FuxiCell] = []
    for index, live in enumerate(cells):
        on_disk = saved.by_nbformat_id(str(live.get("id"))) if saved is not None else None
        raw: dict[str, Any] = {"cell_type": live.get("cell_type"), "id": live.get("id"),
                               "source": live.get("source"),
                               "metadata": {METADATA_KEY: live["fuxi"]} if live.get("fuxi")
                               is not None else {}}
        if live.get("fuxi") is None and on_disk is not None:
            # not mirrored (a record from before the extension): the saved output's, also
            # for the running cell, whose outputs the browser has cleared already
            raw["outputs"] = list(on_disk.outputs)
        cell = _fuxi_cell(index, raw)
        if cell is None:
            continue
        if on_disk is not None:  # figures the record refers to are in the saved outputs
            cell = replace(cell, outputs=on_disk.outputs,
                           outputs_cleared=cell.outputs_cleared and not on_disk.outputs)
        found.append(cell)
    return SavedNotebook(path, found)
