"""Where each cell of a saved notebook came from, for review: `python -m fuxi_notebook
sessions provenance NB.ipynb` lists the cells an agent inserted or edited, which agent
cell and session did it, with which tool and when (the frontend extension keeps that in
the cell's `metadata.fuxi.provenance`), and the cell's source as it is now.

The notebook is a file we did not write: it is read by the bounded reader
(`notebook_file.read_document`), each entry is checked field by field (a malformed one is
named, never trusted), and what is shown is redacted and cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .redact import redact_text, redacted_head

__all__ = ["cell_provenance", "provenance_json", "provenance_text"]

_FIELDS = ("agent_cell", "session", "tool", "at")
_SOURCE_LINES = 20
_LINE_CHARS = 60


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines()
                 if part.strip() and not part.lstrip().startswith("%%fuxi")), "")
    head, left = redacted_head(line, _LINE_CHARS)
    return head + ("…" if left else "")


def _agent_cells(cells: list[Any]) -> dict[str, tuple[int, str]]:
    """Each cell id -> (its place from 1, the first words of its prompt or source); an
    agent cell also by its record's cell id (nbstripout without --keep-id renumbers the
    cells' ids, and the record keeps the one the provenance names)."""
    found: dict[str, tuple[int, str]] = {}
    for index, cell in enumerate(cells):
        if not isinstance(cell, Mapping) or not isinstance(cell.get("id"), str):
            continue
        fuxi = (cell.get("metadata") or {}).get("fuxi") if isinstance(
            cell.get("metadata"), Mapping) else None
        record = fuxi.get("record") if isinstance(fuxi, Mapping) else None
        prompt = record.get("prompt") if isinstance(record, Mapping) else None
        found[cell["id"]] = (index + 1, _first_line(prompt if isinstance(prompt, str)
                                                    else _source(cell)))
        if isinstance(record, Mapping) and isinstance(record.get("cell_id"), str):
            found.setdefault(record["cell_id"], found[cell["id"]])
    return found


def cell_provenance(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per cell with provenance: `cell` (its place from 1), `id`, `cell_type`,
    `source` (redacted), `changes` (each: the agent cell's id and place, its prompt's
    first words, session, tool, at) and `problems` (entries that are not understood)."""
    raw = document.get("cells")
    cells: list[Any] = raw if isinstance(raw, list) else []
    agents = _agent_cells(cells)
    found = []
    for index, cell in enumerate(cells):
        metadata = cell.get("metadata") if isinstance(cell, Mapping) else None
        fuxi = metadata.get("fuxi") if isinstance(metadata, Mapping) else None
        entries = fuxi.get("provenance") if isinstance(fuxi, Mapping) else None
        if not isinstance(entries, list) or not entries:
            continue
        changes, problems = [], []
        for entry in entries:
            if not isinstance(entry, Mapping) or not all(
                    isinstance(entry.get(key), str) for key in _FIELDS):
                problems.append("an entry that is not {agent_cell, session, tool, at}")
                continue
            place, words = agents.get(entry["agent_cell"], (None, ""))
            changes.append({"agent_cell": entry["agent_cell"], "agent_cell_at": place,
                            "prompt": words, "session": entry["session"],
                            "tool": entry["tool"], "at": entry["at"]})
        found.append({"cell": index + 1, "id": str(cell.get("id", "")),
                      "cell_type": str(cell.get("cell_type", "")),
                      "source": redact_text(_source(cell)), "changes": changes,
                      "problems": problems})
    return found


_VERBS = {"InsertCell": "inserted", "EditCell": "edited"}


def provenance_text(document: Mapping[str, Any], name: str) -> str:
    """The report as text: per cell, who wrote what, then its source (cut)."""
    cells = cell_provenance(document)
    if not cells:
        return f"{name}: no cell carries an agent's provenance (metadata.fuxi.provenance)"
    parts = [f"{name}: {len(cells)} cell(s) an agent inserted or edited"]
    for cell in cells:
        lines = [f"cell {cell['cell']} ({cell['cell_type']}, id {cell['id']})"]
        for change in cell["changes"]:
            by = (f"agent cell {change['agent_cell_at']}" if change["agent_cell_at"]
                  else f"agent cell {change['agent_cell']} (no longer in the notebook)")
            words = f" “{change['prompt']}”" if change["prompt"] else ""
            lines.append(f"  {_VERBS.get(change['tool'], 'changed')} by {by}{words} · "
                         f"{change['tool']} · session {change['session'][:8]} · "
                         f"{change['at']}")
        lines += [f"  ! {problem}" for problem in cell["problems"]]
        source = cell["source"].splitlines() or [""]
        lines += [f"    | {line}" for line in source[:_SOURCE_LINES]]
        if len(source) > _SOURCE_LINES:
            lines.append(f"    | … ({len(source) - _SOURCE_LINES} more lines)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def provenance_json(document: Mapping[str, Any]) -> str:
    """The report as JSON (one object per cell; see `cell_provenance`)."""
    return json.dumps(cell_provenance(document), indent=1, ensure_ascii=False)
