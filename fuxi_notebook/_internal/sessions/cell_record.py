"""Where a `%%fuxi` cell keeps its session record, and which copy is read.

A record lives in two places of the .ipynb: in the cell's metadata (`metadata.fuxi`:
`{"record": ..., "volatile": ...}`), where Clear Outputs and nbstripout leave it, and in the
record output the kernel displays (the only place a kernel can write). The JupyterLab /
Notebook 7 extension, the testing frontend and `python -m fuxi_notebook sessions keep` copy
the output into the metadata. Reading takes the metadata first and the outputs second:

- one of them: that one;
- both, equal: the record (the output's volatile values, the newer);
- both, different: the output wins only if it says it replaces exactly that metadata record
  (`volatile.replaces` is the digest of the record the cell had when it ran again: a run
  in a frontend that cannot write metadata, VS Code or `jupyter execute`); otherwise it is
  a conflict, one line, and nothing of the cell runs.

Besides a record, `metadata.fuxi` may hold what the frontend extension keeps of a cell
(`CELL_MARKS`: `provenance`, where a cell the agent inserted or edited came from; `about`,
the cells an agent cell was inserted to work on); they are not a record, and copying a
record into the metadata keeps them.

Core: plain JSON, no IPython.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .record import RECORD_MIME

__all__ = ["CELL_MARKS", "METADATA_KEY", "CellRecord", "cell_record", "keep_in_metadata",
           "metadata_entry", "record_digest"]

#: The cell metadata key that holds a copy of the cell's record.
METADATA_KEY = "fuxi"
#: The other keys `metadata.fuxi` may hold (see the module docstring).
CELL_MARKS = ("provenance", "about")


@dataclass(frozen=True)
class CellRecord:
    """The record data a cell holds (not validated yet) and where it was read from.

    `where` is "metadata", "outputs" or "" (none); `problem` says why nothing can be read
    (a conflict between the two copies, a malformed metadata entry).
    """

    data: Any = None
    volatile: Mapping[str, Any] = field(default_factory=dict)
    where: str = ""
    problem: str | None = None
    #: the record output is missing (cleared), so figures it referred to may be gone
    outputs_cleared: bool = False
    #: `record_digest` of the metadata's record (what a new run of the cell replaces)
    metadata_digest: str | None = None


def record_digest(data: Any) -> str:
    """A short digest of a record's JSON, the same whatever the key order."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def metadata_entry(data: Any, volatile: Mapping[str, Any] | None) -> dict[str, Any]:
    """What `metadata.fuxi` holds for a record output."""
    return {"record": data, "volatile": dict(volatile or {})}


def _output_record(outputs: Any) -> tuple[Any, dict[str, Any]] | None:
    """(record data, volatile) of the last record output among `outputs`."""
    found = None
    for output in outputs if isinstance(outputs, list) else ():
        data = output.get("data") if isinstance(output, Mapping) else None
        if isinstance(data, Mapping) and RECORD_MIME in data:
            metadata = output.get("metadata")
            volatile = metadata.get("fuxi") if isinstance(metadata, Mapping) else None
            found = (data[RECORD_MIME], dict(volatile) if isinstance(volatile, Mapping)
                     else {})
    return found


def _metadata_record(metadata: Any) -> tuple[Any, dict[str, Any]] | str | None:
    """(record data, volatile) of `metadata.fuxi`, None if absent, or what is wrong."""
    entry = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if entry is None:
        return None
    if isinstance(entry, Mapping) and "record" not in entry and set(entry) <= set(CELL_MARKS):
        return None  # the extension's marks of a cell, no record
    if not isinstance(entry, Mapping) or "record" not in entry:
        return "its metadata.fuxi is not a session record ({\"record\": ..., \"volatile\": ...})"
    volatile = entry.get("volatile")
    return entry["record"], dict(volatile) if isinstance(volatile, Mapping) else {}


def _differ(in_metadata: Any, in_outputs: Any) -> str:
    """What differs between two records, in a few words (cell, turns), for the message."""
    def words(data: Any) -> str:
        if not isinstance(data, Mapping):
            return "unreadable"
        turns = data.get("result", {}).get("num_turns") if isinstance(
            data.get("result"), Mapping) else None
        prompt = str(data.get("prompt"))[:40]
        return f"cell {data.get('cell_id')}, {turns} turn(s), prompt {prompt!r}"
    return f"metadata: {words(in_metadata)}; outputs: {words(in_outputs)}"


def cell_record(cell: Mapping[str, Any]) -> CellRecord:
    """The record a saved cell holds (see the module docstring for which copy wins)."""
    in_outputs = _output_record(cell.get("outputs"))
    in_metadata = _metadata_record(cell.get("metadata"))
    if isinstance(in_metadata, str):
        return CellRecord(problem=in_metadata)
    if in_metadata is None:
        if in_outputs is None:
            return CellRecord()
        return CellRecord(in_outputs[0], in_outputs[1], "outputs")
    digest = record_digest(in_metadata[0])
    if in_outputs is None:
        return CellRecord(in_metadata[0], in_metadata[1], "metadata", outputs_cleared=True,
                          metadata_digest=digest)
    if digest == record_digest(in_outputs[0]):
        return CellRecord(in_outputs[0], in_outputs[1] or in_metadata[1], "metadata",
                          metadata_digest=digest)
    if in_outputs[1].get("replaces") == digest:
        return CellRecord(in_outputs[0], in_outputs[1], "outputs", metadata_digest=digest)
    return CellRecord(metadata_digest=digest, problem=(
        "its record in metadata.fuxi and the record in its outputs differ "
        f"({_differ(in_metadata[0], in_outputs[0])}): keep the right one (Clear Outputs "
        "keeps the metadata's; `python -m fuxi_notebook sessions keep NOTEBOOK.ipynb "
        "--from-outputs` takes the outputs')"))


def keep_in_metadata(cell: dict[str, Any], *, from_outputs: bool = False) -> str:
    """Copy the cell's record output into its metadata; what happened, in one word:
    "kept" (copied), "same" (already there), "none" (no record output) or "conflict"
    (the copies differ and `from_outputs` was not given; nothing changed)."""
    in_outputs = _output_record(cell.get("outputs"))
    if in_outputs is None:
        return "none"
    metadata = cell.setdefault("metadata", {})
    wanted = metadata_entry(*in_outputs)
    current = metadata.get(METADATA_KEY)
    marks = {key: current[key] for key in CELL_MARKS
             if isinstance(current, Mapping) and key in current}
    if isinstance(current, Mapping) and record_digest(
            {k: v for k, v in current.items() if k not in marks}) == record_digest(wanted):
        return "same"
    if not from_outputs and cell_record(cell).problem is not None:
        return "conflict"
    metadata[METADATA_KEY] = {**wanted, **marks}
    return "kept"
