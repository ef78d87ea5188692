"""A model without a known price and `%fuxi models`, in a real ipykernel against the fake
Messages API (issue 9, item 6)."""

from __future__ import annotations

import re

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import Turn, text

from .kernel_harness import record_of

DOLLAR_FIGURE = re.compile(r"\$\s*\d")


def _run_on_gpt_4o(kernel, api):
    """A cell with `--model gpt-4o`. The cost follows the model the response names; the
    fake server names the model it is told to, as a gateway behind ANTHROPIC_BASE_URL
    serving gpt-4o would."""
    api.model = "gpt-4o"
    try:
        api.add(Turn([text("hi")]))
        result = kernel.run("%%fuxi --model gpt-4o\nhello")
    finally:
        api.model = "claude-sonnet-5-5"
    assert result.status == "ok", result.messages
    assert api.requests[0]["model"] == "gpt-4o"
    return result


def _summary(kernel) -> str:
    """`%fuxi`'s line (the magic returns it: the plain text is its repr, in quotes)."""
    # the totals line (a table of the cells follows it)
    return kernel.run("%fuxi").displays[0]["data"]["text/plain"].splitlines()[0]


def test_unknown_model_cell_says_price_unknown_and_shows_tokens(fresh, api):
    result = _run_on_gpt_4o(fresh, api)
    assert record_of(result)["result"]["subtype"] == "success"
    final = result.final(RECORD_MIME)["data"]
    assert "hi" in final["text/plain"]
    assert not DOLLAR_FIGURE.search(final["text/plain"] + final["text/markdown"])
    usage = fresh.run("print(_fuxi.result.model_usage)").stdout
    assert "'gpt-4o'" in usage and "'costUSD': None" in usage
    summary = _summary(fresh)
    assert "model gpt-4o" in summary and summary.endswith("· price unknown")
    assert re.search(r"[1-9]\d* input / [1-9]\d* output tokens", summary)
    assert not DOLLAR_FIGURE.search(summary)


def test_unknown_model_cell_keeps_no_cost_in_its_metadata(fresh, api):
    result = _run_on_gpt_4o(fresh, api)
    assert result.final(RECORD_MIME)["metadata"]["fuxi"]["cost_usd"] is None


def test_known_model_session_still_shows_its_cost(fresh, api):
    api.add(Turn([text("hi")]))
    assert fresh.run("%%fuxi\nhello").status == "ok"
    summary = _summary(fresh)
    assert "model claude-sonnet-5-5" in summary
    assert re.search(r"· \$\d+\.\d{4} \(estimate\)$", summary) and "unknown" not in summary


def test_fuxi_models_lists_the_known_models_and_the_default(fresh):
    shown = fresh.run("%fuxi models").displays[0]["data"]
    plain, markdown = shown["text/plain"], shown["text/markdown"]
    rows = [line for line in plain.splitlines() if line.startswith("| claude-")]
    assert "claude-opus-5" in plain and "claude-haiku-4-5" in plain
    # the kernel runs with FUXI_MODEL=claude-sonnet-5-5
    assert [row.split("|")[1].strip() for row in rows if "| yes" in row] == ["claude-sonnet-5-5"]
    assert "| $2.00 | $10.00 |" in plain
    assert "$" in markdown and not re.search(r"(?<!\\)\$", markdown)  # no math in JupyterLab


def test_fuxi_models_follows_the_configured_default(fresh):
    fresh.run("%fuxi config --model claude-opus-5")
    try:
        plain = fresh.run("%fuxi models").displays[0]["data"]["text/plain"]
    finally:
        fresh.run("%fuxi config --model claude-sonnet-5-5")
    marked = [line.split("|")[1].strip() for line in plain.splitlines() if "| yes" in line]
    assert marked == ["claude-opus-5"]


def test_unknown_command_names_models(fresh):
    reply = fresh.run("%fuxi nope").reply["content"]
    assert reply["ename"] == "UsageError" and "%fuxi models" in reply["evalue"]
