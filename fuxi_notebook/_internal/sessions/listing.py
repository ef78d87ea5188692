"""The sessions recorded in a notebook, summarised: for `%fuxi sessions` and the CLI.

A session is every record sharing a session id (a fork starts a new one); its cells are
listed in notebook order, its turns summed, its cost read from the records' output
metadata (the record itself holds no cost: costs are volatile). Ids are shown as short
prefixes (8 characters, more where two would look alike), which `--resume` takes. A
session whose first cell continues a cell of another session is a fork of it; one whose
first cell continues a cell the notebook no longer has says so (it is not a fork).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .record import SessionRecord

__all__ = ["SessionSummary", "cell_cost", "format_sessions", "short_ids", "summarize"]

#: The shortest id prefix shown (a longer id is cut to the shortest unique prefix this long)
SHORT_ID = 8
_KEPT_WHOLE = 5  # an id at most this much longer than its prefix is shown whole


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
    forked_from: str | None  # the cell of another session this one branched off from
    #: the cell its first cell continues, when the notebook no longer has that cell
    continues_missing: str | None = None


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
        parent_session = owner.get(parent) if parent else None
        summaries.append(SessionSummary(
            session_id=session_id,
            cells=tuple(r.cell_id for r in records),
            turns=sum(r.result.num_turns for r in records),
            # a sum missing a cell's part is not the session's cost
            cost_usd=sum(known) if known and len(known) == len(costs) else None,
            models=models,
            first_prompt=records[0].prompt,
            last_result=records[-1].result.subtype,
            # a fork: the parent is a cell of another session (a session id differs)
            forked_from=parent if parent_session not in (None, session_id) else None,
            continues_missing=parent if parent and parent_session is None else None,
        ))
    return summaries


def short_ids(ids: Sequence[str], width: int = SHORT_ID) -> dict[str, str]:
    """id -> its shortest prefix of at least `width` characters that no other id starts
    with; an id hardly longer than that is kept whole (an exact id always names its cell,
    and `cell-fork` reads better than `cell-for`)."""
    unique = list(dict.fromkeys(ids))
    shown = {}
    for wanted in unique:
        length = min(width, len(wanted))
        while length < len(wanted) and any(other != wanted and other.startswith(
                wanted[:length]) for other in unique):
            length += 1
        shown[wanted] = wanted if len(wanted) - length < _KEPT_WHOLE else wanted[:length]
    return shown


def _short(text: str, width: int = 48) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def format_sessions(summaries: Sequence[SessionSummary]) -> str:
    """A markdown table (also readable as plain text)."""
    if not summaries:
        return "No fuxi sessions are recorded in this notebook yet."
    rows = ["| session | cells | turns | cost | model | first prompt | last result |",
            "|---|---|---|---|---|---|---|"]
    cell = short_ids([c for s in summaries for c in (*s.cells, s.forked_from,
                                                    s.continues_missing) if c])
    session = short_ids([s.session_id for s in summaries])
    for s in summaries:
        cost = f"${s.cost_usd:.4f}" if s.cost_usd is not None else "?"
        cells = ", ".join(cell[c] for c in s.cells)
        if s.forked_from:
            cells += f" (fork of {cell[s.forked_from]})"
        elif s.continues_missing:
            cells += (f" (continues cell {cell[s.continues_missing]}, no longer in the "
                      "notebook)")
        prompt = _short(s.first_prompt).replace("|", "\\|")
        rows.append(f"| {session[s.session_id]} | {cells} | {s.turns} | {cost} | "
                    f"{', '.join(s.models)} | {prompt} | {s.last_result} |")
    return "\n".join(rows)
