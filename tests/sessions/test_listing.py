"""Session summaries: a session's cost is the sum of its cells' own costs."""

from __future__ import annotations

from fuxi_notebook._internal.sessions.listing import cell_cost, summarize
from fuxi_notebook._internal.sessions.record import build_record

from .helpers import build_kwargs


def _records(*cell_ids):
    return [build_record(**build_kwargs(cell_id=c, session_id="s1",
                                        parent=cell_ids[i - 1] if i else None))
            for i, c in enumerate(cell_ids)]


def test_a_session_costs_the_sum_of_its_cells_not_of_running_totals():
    records = _records("a", "b")
    # `cost_usd` is the session's running total; `cell_cost_usd` each cell's own
    volatile = {"a": {"cost_usd": 0.01, "cell_cost_usd": 0.01},
                "b": {"cost_usd": 0.03, "cell_cost_usd": 0.02}}
    (summary,) = summarize([("s1", records)], volatile)
    assert summary.cost_usd == 0.03


def test_a_cell_without_a_known_price_makes_the_session_cost_unknown():
    records = _records("a", "b")
    volatile = {"a": {"cost_usd": 0.01, "cell_cost_usd": 0.01},
                "b": {"cost_usd": None, "cell_cost_usd": None}}
    (summary,) = summarize([("s1", records)], volatile)
    assert summary.cost_usd is None  # not the partial 0.01


def test_older_metadata_falls_back_to_the_recorded_total():
    assert cell_cost({"cost_usd": 0.5}) == 0.5
    assert cell_cost({"cost_usd": 0.5, "cell_cost_usd": None}) is None
    assert cell_cost({}) is None
