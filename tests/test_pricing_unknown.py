"""A model without a known price: no cost instead of a guess, tokens still counted, and
"price unknown" wherever a cost is shown (issue 9, item 6)."""

from __future__ import annotations

import pytest

from fuxi_notebook import FuxiAgentOptions, ResultMessage, ScriptedModel
from fuxi_notebook._internal.models.pricing import (
    PRICES,
    cost_usd,
    format_cost,
    is_known_model,
    models_table,
    price_for,
)
from fuxi_notebook._internal.models.script import Turn, text
from fuxi_notebook._internal.models.usage import UsageTotals
from fuxi_notebook._internal.notebook.display.view import LiveView

from .agent.helpers import collect

USAGE = {"input_tokens": 1000, "cache_read_input_tokens": 10_000,
         "cache_creation_input_tokens": 2000, "output_tokens": 500}
#: claude-opus-5: input 5, 5-minute write 6.25, read 0.50, output 25 per million
OPUS_5_COST = (1000 * 5 + 2000 * 6.25 + 10_000 * 0.50 + 500 * 25) / 1e6

UNKNOWN = ["gpt-4o", "claude-foo", "claude-opus-45", "claude-mythos-preview", "scripted-model",
           ""]


@pytest.mark.parametrize("model", UNKNOWN)
def test_an_unknown_model_has_no_price_and_no_cost(model):
    assert not is_known_model(model)
    assert price_for(model) is None
    assert cost_usd(model, USAGE) is None


@pytest.mark.parametrize(("model", "expected"), [
    ("claude-opus-5", OPUS_5_COST),
    ("claude-haiku-4-5-20251001", (1000 * 1 + 2000 * 1.25 + 10_000 * 0.10 + 500 * 5) / 1e6),
    ("claude-opus-4-1@20250805", (1000 * 15 + 2000 * 18.75 + 10_000 * 1.50 + 500 * 75) / 1e6),
    ("claude-sonnet-4-20250514", (1000 * 3 + 2000 * 3.75 + 10_000 * 0.30 + 500 * 15) / 1e6),
])
def test_known_models_keep_their_price(model, expected):
    assert is_known_model(model)
    assert cost_usd(model, USAGE) == pytest.approx(expected)


def test_haiku_5_5_keeps_its_upper_band():
    large = {"input_tokens": 100_001, "output_tokens": 1000}
    assert cost_usd("claude-haiku-5-5", large) == pytest.approx(
        (100_001 * 0.50 + 1000 * 2.50) / 1e6)


def test_format_cost_never_shows_a_dollar_figure_for_an_unknown_cost():
    assert format_cost(None) == "price unknown"
    assert format_cost(0.0123) == "$0.0123"
    assert format_cost(0.0) == "$0.0000"


def test_unknown_model_counts_tokens_but_leaves_the_total_unknown():
    totals = UsageTotals()
    assert totals.add("gpt-4o", USAGE) is None
    assert totals.tokens["output_tokens"] == 500 and totals.tokens["input_tokens"] == 1000
    assert totals.total_cost_usd is None
    assert totals.model_usage()["gpt-4o"]["costUSD"] is None
    assert totals.model_usage()["gpt-4o"]["outputTokens"] == 500
    assert totals.unpriced_models == ["gpt-4o"]


def test_mixed_models_in_one_session_make_the_total_unknown():
    totals = UsageTotals()
    totals.add("claude-opus-5", USAGE)
    assert totals.total_cost_usd == pytest.approx(OPUS_5_COST)
    before = totals.snapshot()
    totals.add("gpt-4o", USAGE)
    totals.add("claude-opus-5", USAGE)
    assert totals.total_cost_usd is None
    assert totals.cost_usd == pytest.approx(2 * OPUS_5_COST)  # the priced part, for budgets
    usage = totals.model_usage()
    assert usage["claude-opus-5"]["costUSD"] == pytest.approx(2 * OPUS_5_COST)
    assert usage["gpt-4o"]["costUSD"] is None
    assert totals.cost_since(before) is None
    assert before.total_cost_usd == pytest.approx(OPUS_5_COST)  # the snapshot is a copy


def test_cost_since_a_snapshot_taken_after_the_unknown_response_is_known():
    totals = UsageTotals()
    totals.add("gpt-4o", USAGE)
    later = totals.snapshot()
    totals.add("claude-opus-5", USAGE)
    assert totals.cost_since(later) == pytest.approx(OPUS_5_COST)
    assert totals.total_cost_usd is None  # the session as a whole still is not


def _result(total: float | None, model_usage: dict[str, dict]) -> ResultMessage:
    return ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=False,
                         num_turns=2, session_id="s", total_cost_usd=total,
                         usage={"input_tokens": 30, "output_tokens": 7},
                         model_usage=model_usage)


def _status(result: ResultMessage) -> str:
    view = LiveView()
    view.apply(result)
    return view.status


def test_the_cell_status_shows_price_unknown_and_the_tokens():
    status = _status(_result(None, {"gpt-4o": {"costUSD": None}}))
    assert "price unknown" in status and "$" not in status
    assert "30 in / 7 out tokens" in status


def test_the_cell_status_of_a_mixed_session_shows_no_partial_sum():
    status = _status(_result(0.5, {"claude-opus-5": {"costUSD": 0.5},
                                   "gpt-4o": {"costUSD": None}}))
    assert "price unknown" in status and "$" not in status


def test_the_cell_status_of_a_known_model_shows_the_cost():
    status = _status(_result(0.0123, {"claude-opus-5": {"costUSD": 0.0123}}))
    assert status.endswith("· $0.0123 (estimate) · 0.0 s")  # then the time
    assert "unknown" not in status


async def test_a_run_on_an_unknown_model_shows_tokens_and_price_unknown(tmp_path):
    model = ScriptedModel([Turn([text("hi")], usage={"input_tokens": 40})], name="gpt-4o")
    messages, error = await collect("hello", FuxiAgentOptions(model=model, cwd=tmp_path))
    result = messages[-1]
    assert error is None and isinstance(result, ResultMessage)
    assert result.model_usage["gpt-4o"]["costUSD"] is None
    assert result.usage["input_tokens"] == 40
    status = _status(result)
    assert "price unknown" in status and "$" not in status


async def test_a_run_on_an_unknown_model_has_no_total_cost(tmp_path):
    model = ScriptedModel([Turn([text("hi")])], name="gpt-4o")
    messages, _ = await collect("hello", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert messages[-1].total_cost_usd is None


def test_models_table_lists_every_known_model_and_marks_the_default():
    table = models_table("claude-sonnet-5-5")
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()
            if line.startswith("| claude-")}
    assert set(rows) == set(PRICES)
    assert rows["claude-sonnet-5-5"].rstrip().endswith("| yes |")
    assert "| $2.00 | $10.00 | $0.20 | $2.50 | $4.00 |" in rows["claude-sonnet-5-5"]
    assert [model for model, row in rows.items() if "yes" in row] == ["claude-sonnet-5-5"]
    assert "price unknown" in table


def test_models_table_marks_a_dated_default_on_its_family():
    table = models_table("claude-haiku-4-5-20251001")
    row = next(line for line in table.splitlines() if line.startswith("| claude-haiku-4-5 "))
    assert "yes (as `claude-haiku-4-5-20251001`)" in row


def test_models_table_says_when_the_default_has_no_price():
    table = models_table("gpt-4o")
    assert "`gpt-4o` is not in this table" in table
    assert "| yes" not in table
