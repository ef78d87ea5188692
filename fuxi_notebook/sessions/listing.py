"""The sessions recorded in a notebook, summarised: for `%fuxi sessions` and the CLI.

A session is every record sharing a session id (a fork starts a new one); its cells are
listed in notebook order, its turns summed, its cost read from the records' output
metadata (the record itself holds no cost: costs are volatile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .record import SessionRecord

__all__ = ["SessionSummary", "cell_cost", "format_sessions", "summarize"]


def cell_cost(volatile: Mapping[str, Any]) -> float | None:
    """A cell's own cost from its output metadata; None if unknown (a model without a
    known price). `cost_usd` is the session's total so far: records from before
    `cell_cost_usd` existed have only that."""
    cost = volatile.get("cell_cost_usd", volatile.get("cost_usd"))
    return float(cost) if isinstance(cost, int | float) else None


@dataclass(frozen=True)
class SessionSummary:
    """One session of a notebook."""

    session_id: str
    cells: tuple[str, ...]
    turns: int
    cost_usd: float | None  # None when no record's metadata says
    models: tuple[str, ...]
    first_prompt: str
    last_result: str
    forked_from: str | None  # the cell another session's branch continues, for forks


def summarize(sessions: Sequence[tuple[str, Sequence[SessionRecord]]],
              volatile: Mapping[str, Mapping[str, Any]]) -> list[SessionSummary]:
    """Summaries in the order the sessions were given; `volatile`: cell id -> metadata."""
    owner = {r.cell_id: sid for sid, records in sessions for r in records}
    summaries = []
    for session_id, records in sessions:
        if not records:
            continue
        costs = [cell_cost(volatile.get(r.cell_id, {})) for r in records]
        known = [c for c in costs if c is not None]
        models = tuple(dict.fromkeys(r.model for r in records))
        parent = records[0].parent
        summaries.append(SessionSummary(
            session_id=session_id,
            cells=tuple(r.cell_id for r in records),
            turns=sum(r.result.num_turns for r in records),
            # a sum missing a cell's part is not the session's cost
            cost_usd=sum(known) if known and len(known) == len(costs) else None,
            models=models,
            first_prompt=records[0].prompt,
            last_result=records[-1].result.subtype,
            forked_from=parent if parent and owner.get(parent) != session_id else None,
        ))
    return summaries


def _short(text: str, width: int = 48) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def format_sessions(summaries: Sequence[SessionSummary]) -> str:
    """A markdown table (also readable as plain text)."""
    if not summaries:
        return "No fuxi sessions are recorded in this notebook yet."
    rows = ["| session | cells | turns | cost | model | first prompt | last result |",
            "|---|---|---|---|---|---|---|"]
    for s in summaries:
        cost = f"${s.cost_usd:.4f}" if s.cost_usd is not None else "?"
        cells = ", ".join(s.cells)
        if s.forked_from:
            cells += f" (fork of {s.forked_from})"
        prompt = _short(s.first_prompt).replace("|", "\\|")
        rows.append(f"| {s.session_id[:8]} | {cells} | {s.turns} | {cost} | "
                    f"{', '.join(s.models)} | {prompt} | {s.last_result} |")
    return "\n".join(rows)
