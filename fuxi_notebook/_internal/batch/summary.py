"""What a batch did: each run's `%%fuxi` cells read from its output notebook, and the
batch's `summary.json` (one entry per run) and `summary.md` (a table a person reads)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .runs import RunState

__all__ = ["read_cells", "spent", "write_summary"]


def read_cells(notebook: Path) -> list[dict[str, Any]]:
    """Each `%%fuxi` cell of the notebook with a record: its id, how it ended, its turns
    and what it cost (None: a price unknown)."""
    from ..sessions.cell_record import cell_record
    from ..sessions.notebook_file import read_document

    cells = []
    for cell in read_document(notebook).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        found = cell_record(cell)
        record = found.data if isinstance(found.data, dict) else None
        if record is None:
            continue
        result = record.get("result") or {}
        cost = found.volatile.get("cell_cost_usd") if found.volatile else None
        cells.append({"cell": record.get("cell_id"), "subtype": result.get("subtype"),
                      "turns": int(result.get("num_turns") or 0),
                      "cost_usd": cost if isinstance(cost, int | float) else None})
    return cells


def spent(cells: list[dict[str, Any]]) -> float | None:
    """What the cells cost together (None if any cell's price is unknown)."""
    costs = [cell["cost_usd"] for cell in cells]
    return None if any(c is None for c in costs) else round(sum(costs), 6)


def write_summary(folder: Path, states: list[RunState], *, budget: float | None,
                  name: str = "summary") -> dict[str, Any]:
    """`summary.json` and `summary.md` in `folder`; returns the summary."""
    from ..common.atomic_file import write_atomically

    known = [s.cost_usd for s in states if s.cost_usd is not None]
    total = round(sum(known), 6)
    runs = [asdict(state) for state in states]
    for entry in runs:
        entry.pop("cells", None)
    summary: dict[str, Any] = {
        "runs": runs,
        "succeeded": sum(s.status == "succeeded" for s in states),
        "failed": sum(s.status == "failed" for s in states),
        "skipped": sum(s.status == "skipped" for s in states),
        "total_cost_usd": total,
        "cost_unknown": sum(s.cost_usd is None for s in states),
        "budget_usd": budget,
    }
    write_atomically(folder / f"{name}.json",
                     (json.dumps(summary, indent=1, default=str) + "\n").encode())
    write_atomically(folder / f"{name}.md", _markdown(states, summary).encode())
    return summary


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown(states: list[RunState], summary: dict[str, Any]) -> str:
    lines = ["| run | parameters | status | turns | cost (USD) | time (s) | notebook | error |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for state in states:
        params = ", ".join(f"{k}={v!r}" for k, v in state.params.items())
        cost = "?" if state.cost_usd is None else f"{state.cost_usd:.4f}"
        status = state.status + (" (cut: budget)" if state.cut else "")
        said = "; ".join([*([state.error] if state.error else []),
                          *(f"note: {note}" for note in state.notes)])
        lines.append("| " + " | ".join(_cell(x) for x in (
            state.run_id, params, status, state.turns, cost, f"{state.duration_s:.1f}",
            state.notebook or "", said)) + " |")
    unknown = f" ({summary['cost_unknown']} runs of unknown price)" if summary[
        "cost_unknown"] else ""
    budget = (f" of a budget of ${summary['budget_usd']:.2f}"
              if summary["budget_usd"] is not None else "")
    lines += ["", f"{summary['succeeded']} succeeded, {summary['failed']} failed, "
                  f"{summary['skipped']} not started; spent ${summary['total_cost_usd']:.4f}"
                  f"{budget}{unknown}.", ""]
    return "\n".join(lines)
