"""The cell changes fuxi's frontend extension makes when the kernel asks, emulated.

The testing frontend (`frontend.py`) answers the kernel's cell-change requests with
`apply_change`, as the extension does in JupyterLab (labextension/src/change_rules.ts
decides, changes.ts makes the change). Both follow one table of cases,
`change_cases.json` next to this module: node runs it against the extension's rules,
tests/notebook/test_change_cases.py against this module, so the emulation cannot drift
from what the extension does. The rules are the table's; in short: a malformed request
changes nothing and says why, `expect` and `expect_index` guard a cell the user changed or
moved meanwhile, and a deleted cell is put back whole (`restore_cell`), never twice; a
cell the agent inserts or edits carries where it came from (`provenance`) in
`metadata.fuxi.provenance` (the newest `MAX_PROVENANCE`), and an undo (`undo_of`) takes
that agent cell's entries off again.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

__all__ = ["CASES", "MAX_PROVENANCE", "OUTPUT_CASES", "Change", "apply_change", "change_cases",
           "decide", "summarize_outputs"]

#: the table of request -> answer cases both implementations are checked against
CASES = Path(__file__).with_name("change_cases.json")
#: the table of outputs -> summary cases (the `outputs` request) both are checked against
OUTPUT_CASES = Path(__file__).with_name("output_cases.json")
_MAX_OUTPUTS = 10
_MAX_TEXT = 2000

_CELL_TYPES = ("code", "markdown", "raw")
_WHOLE = "must be a whole number, 0 or more"
_NEEDS_OUTPUTS = "set_outputs needs a list of outputs (objects with an output_type)"
_NEEDS_CELL = "restore_cell needs the cell as it was (an nbformat cell with its id)"
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ON_CELL = frozenset({"edit_cell", "delete_cell", "move_cell", "set_outputs"})
_NEEDS_PROVENANCE = ("provenance must be an object of agent_cell, session, tool and at "
                     "(short strings)")
_PROVENANCE_FIELDS = ("agent_cell", "session", "tool", "at")
_PROVENANCE_CHARS = 200
#: how many provenance entries a cell keeps (the newest)
MAX_PROVENANCE = 20
#: an edit's `fuxi` when the request leaves the cell's metadata as it is
_LEAVE = "leave"


def change_cases() -> dict[str, Any]:
    """The table (`notebook`, `cases`, `new_id`; its `about` says how to read it)."""
    table: dict[str, Any] = json.loads(CASES.read_text(encoding="utf-8"))
    return table


@dataclass(frozen=True)
class Change:
    """The one change a request makes: `kind` is insert (`cell` at `at`; a cell without an
    id gets a new one), edit (`source`), delete, move (`index` to `to`) or outputs."""

    kind: str
    #: an edit's new `metadata.fuxi` (None: remove it; `_LEAVE`: leave it as it is)
    fuxi: Any = _LEAVE
    index: int = 0
    at: int = 0
    to: int = 0
    source: str = ""
    cell: dict[str, Any] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)


#: what a request decides: an error, or the change and the answer (before the inserted
#: cell's id joins it)
Decision = tuple[str, None, dict[str, Any]] | tuple[None, Change, dict[str, Any]]


def _whole(value: Any) -> bool:
    """A whole number >= 0 as JSON has it (1.0 is 1 in JavaScript; true is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and value >= 0


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # as JSON.stringify writes it


def _new_cell(cell_type: str, source: str, metadata: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    if cell_type == "code":
        return {"cell_type": "code", "source": source, "metadata": metadata or {},
                "outputs": [], "execution_count": None}
    return {"cell_type": cell_type, "source": source, "metadata": metadata or {}}


def _provenance_entry(value: Any) -> dict[str, str] | None:
    """A request's provenance entry, cleaned to its fields; None if it is not one."""
    if not isinstance(value, Mapping):
        return None
    entry = {key: value.get(key) for key in _PROVENANCE_FIELDS}
    if not all(isinstance(v, str) and len(v) <= _PROVENANCE_CHARS for v in entry.values()):
        return None
    return cast("dict[str, str]", entry)


def _provenance_of(cell: Mapping[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """A cell's `metadata.fuxi` (a dict, or {}) and its provenance entries."""
    metadata = cell.get("metadata")
    fuxi = metadata.get("fuxi") if isinstance(metadata, Mapping) else None
    fuxi = dict(fuxi) if isinstance(fuxi, Mapping) else {}
    entries = fuxi.get("provenance")
    return fuxi, [e for e in entries if isinstance(e, Mapping)] if isinstance(
        entries, list) else []


def _edited_fuxi(cell: Mapping[str, Any], data: Mapping[str, Any]) -> Any:
    """The cell's new `metadata.fuxi` after an edit (see `Change.fuxi`)."""
    if "provenance" in data:
        fuxi, entries = _provenance_of(cell)
        entry = _provenance_entry(data["provenance"])
        return {**fuxi, "provenance": [*entries, entry][-MAX_PROVENANCE:]}
    if not isinstance(data.get("undo_of"), str):
        return _LEAVE
    fuxi, entries = _provenance_of(cell)
    kept = [e for e in entries if e.get("agent_cell") != data["undo_of"]]
    if len(kept) == len(entries):
        return _LEAVE
    rest = {k: v for k, v in fuxi.items() if k != "provenance"}
    after = {**rest, "provenance": kept} if kept else rest
    return json.loads(json.dumps(after)) if after else None


def _error(text: str) -> Decision:
    return text, None, {}


def _changed(change: Change, answer: dict[str, Any] | None = None) -> Decision:
    return None, change, answer or {"ok": True}


def _insert(cells: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> Decision:
    if "cell_id" in data:
        return _error("insert_cell makes a new cell (restore_cell puts a deleted one back)")
    source, cell_type = data.get("source"), data.get("cell_type")
    if not isinstance(source, str):
        return _error("insert_cell needs the new cell's source (a string)")
    cell_type = "code" if cell_type is None else cell_type
    if cell_type not in _CELL_TYPES:
        return _error("cell_type must be code, markdown or raw")
    index, after = data.get("index"), data.get("after")
    if index is not None and after is not None:
        return _error("insert_cell takes index or after, not both")
    at = len(cells)
    if index is not None:
        if not _whole(index):
            return _error(f"index {_WHOLE}")
        at = min(int(index), len(cells))
    elif after is not None:
        if not isinstance(after, str):
            return _error("after must be a cell id")
        ids = [cell.get("id") for cell in cells]
        if after not in ids:
            return _error(f"no cell {_quoted(after)}")
        at = ids.index(after) + 1
    metadata: dict[str, Any] = {}
    if "provenance" in data:
        entry = _provenance_entry(data["provenance"])
        if entry is None:
            return _error(_NEEDS_PROVENANCE)
        metadata = {"fuxi": {"provenance": [entry]}}
    return _changed(Change("insert", at=at, cell=_new_cell(cell_type, source, metadata)))


def _outputs(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(o, Mapping) and isinstance(o.get("output_type"), str) for o in value)


def _restorable(value: Any) -> dict[str, Any] | None:
    """The deleted cell as it was, cleaned to nbformat's fields; None if it is not one."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str) or not (
            _CELL_ID.fullmatch(value["id"])):
        return None
    cell_type, source = value.get("cell_type"), value.get("source")
    metadata = {} if value.get("metadata") is None else value["metadata"]
    if cell_type not in _CELL_TYPES or not isinstance(source, str) or not isinstance(
            metadata, Mapping):
        return None
    cell = {**_new_cell(cell_type, source), "id": value["id"], "metadata": dict(metadata)}
    if cell_type == "code":
        outputs = [] if value.get("outputs") is None else value["outputs"]
        count = value.get("execution_count")
        if not _outputs(outputs) or not (count is None or _whole(count)):
            return None
        cell.update(outputs=list(outputs), execution_count=count)
    elif value.get("attachments") is not None:
        if not isinstance(value["attachments"], Mapping):
            return None
        cell["attachments"] = dict(value["attachments"])
    return cell


def _restore(cells: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> Decision:
    cell = _restorable(data.get("cell"))
    if cell is None:
        return _error(_NEEDS_CELL)
    if not _whole(data.get("index")):
        return _error(f"index {_WHOLE}")
    if any(known.get("id") == cell["id"] for known in cells):
        return _error(f"cell {_quoted(cell['id'])} is in the notebook already")
    return _changed(Change("insert", at=min(int(data["index"]), len(cells)), cell=cell))


def _malformed(data: Mapping[str, Any]) -> str | None:
    """The fields of a request that names a cell, checked before the cell is looked at."""
    request = data["request"]
    if "expect" in data and not isinstance(data["expect"], str):
        return "expect must be a string"
    if "expect_index" in data and not _whole(data["expect_index"]):
        return f"expect_index {_WHOLE}"
    if request == "edit_cell" and not isinstance(data.get("source"), str):
        return "edit_cell needs the new source (a string)"
    if request == "edit_cell" and "provenance" in data:
        if _provenance_entry(data["provenance"]) is None:
            return _NEEDS_PROVENANCE
        if "undo_of" in data:
            return "edit_cell takes provenance or undo_of, not both"
    if request == "edit_cell" and "undo_of" in data and not isinstance(data["undo_of"], str):
        return "undo_of must be the id of the agent cell undone"
    if request == "move_cell" and not _whole(data.get("to")):
        return f"to {_WHOLE}"
    if request == "set_outputs" and not _outputs(data.get("outputs")):
        return _NEEDS_OUTPUTS
    return None


def _on_cell(cells: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> Decision:
    name = data.get("cell")
    if not isinstance(name, str):
        return _error("the request names no cell")
    problem = _malformed(data)
    if problem is not None:
        return _error(problem)
    ids = [cell.get("id") for cell in cells]
    if name not in ids:
        return _error(f"no cell {_quoted(name)}")
    index = ids.index(name)
    cell, request = cells[index], data["request"]
    if request == "set_outputs" and cell.get("cell_type") != "code":
        return _error("only a code cell has outputs")
    if "expect" in data and data["expect"] != cell.get("source"):
        return _error("the cell was changed meanwhile")
    if "expect_index" in data and data["expect_index"] != index:
        return _error("the cell was moved meanwhile")
    if request == "edit_cell":
        return _changed(Change("edit", index=index, source=data["source"],
                               fuxi=_edited_fuxi(cell, data)))
    if request == "delete_cell":
        return _changed(Change("delete", index=index),
                        {"ok": True, "deleted": json.loads(json.dumps(cell))})
    if request == "move_cell":
        to = min(int(data["to"]), len(cells) - 1)
        return _changed(Change("move", index=index, to=to), {"ok": True, "index": to})
    return _changed(Change("outputs", index=index, outputs=list(data["outputs"])))


def decide(cells: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> Decision:
    """What `data` (a request of the kernel's) does to `cells` (nbformat cells): an error,
    or the change to make and the answer."""
    request = data.get("request")
    if not isinstance(request, str):
        return _error("the message names no request")
    if request == "insert_cell":
        return _insert(cells, data)
    if request == "restore_cell":
        return _restore(cells, data)
    if request in _ON_CELL:
        return _on_cell(cells, data)
    return _error(f"unknown request {_quoted(request)}")


def _make(cells: MutableSequence[Any], change: Change, new_id: Callable[[], str]
          ) -> str | None:
    """Make `change` on nbformat cells, as changes.ts makes it on JupyterLab's model; the
    inserted cell's id."""
    import nbformat

    # nbformat's functions carry no annotations: a typed view of this one
    from_dict = cast("Callable[[dict[str, Any]], Any]", nbformat.from_dict)
    if change.kind == "insert":
        cell = from_dict({**change.cell, "id": change.cell.get("id") or new_id()})
        cells.insert(change.at, cell)
        return str(cell["id"])
    if change.kind == "edit":
        cells[change.index]["source"] = change.source
        metadata = cells[change.index].setdefault("metadata", {})
        if change.fuxi is None:
            metadata.pop("fuxi", None)
        elif change.fuxi != _LEAVE:
            metadata["fuxi"] = from_dict(change.fuxi)
    elif change.kind == "delete":
        del cells[change.index]
    elif change.kind == "move":
        cells.insert(change.to, cells.pop(change.index))
    else:
        cells[change.index]["outputs"] = [from_dict(o) for o in change.outputs]
    return None


def apply_change(cells: MutableSequence[Any], data: Mapping[str, Any],
                 new_id: Callable[[], str] | None = None) -> dict[str, Any]:
    """Apply one request to `cells` (a notebook's cells, changed in place); the answer the
    kernel reads (`ok`, or `error` saying why). `new_id` makes a new cell's id."""
    error, change, answer = decide(cells, data)
    if change is None:
        return {"error": error}
    inserted = _make(cells, change, new_id or (lambda: str(uuid.uuid4())))
    return answer if inserted is None else {**answer, "cell": inserted}


def _summary_text(value: Any) -> str:
    joined = "".join(p for p in value if isinstance(p, str)) if isinstance(value, list) else (
        value if isinstance(value, str) else "")
    return joined[:_MAX_TEXT] + "…" if len(joined) > _MAX_TEXT else joined


def summarize_outputs(outputs: Sequence[Any]) -> dict[str, Any]:
    """A cell's outputs as the extension tells the kernel them (the `outputs` request;
    labextension/src/outputs.ts `summarize`, by the table `OUTPUT_CASES`)."""
    summaries = []
    for output in list(outputs)[:_MAX_OUTPUTS]:
        if not isinstance(output, Mapping):
            continue
        raw = output.get("data")
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        text = output.get("text")
        summary = {"output_type": str(output.get("output_type")), "mimes": list(data),
                   "text": _summary_text(text if text is not None
                                         else data.get("text/plain", ""))}
        if output.get("output_type") == "error":
            summary.update(ename=str(output.get("ename", "")),
                           evalue=_summary_text(output.get("evalue")))
        summaries.append(summary)
    return {"outputs": summaries, "more": max(0, len(outputs) - _MAX_OUTPUTS)}
