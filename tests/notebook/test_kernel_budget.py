"""One budget for a whole kernel (`FUXI_MAX_BUDGET_USD`, issue 37), in a real ipykernel
against the fake Messages API, whose turns carry usage so that every cell's cost is known:
a cell runs with what is left of it at most, the cell that would pass it is cut, a cell
with nothing left never calls the model, a bad value is one line, and without the
variable nothing changes."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.notebook.cell.controller import KERNEL_BUDGET, KernelBudget
from fuxi_notebook.testing import Turn, text, tool_use

from .kernel_harness import loaded_kernel, record_of

#: a response costing about $1.80 on claude-sonnet-5-5 ($2 a million input tokens)
NEARLY_ALL = {"input_tokens": 900_000}
#: one costing about $0.30: more than what is left after NEARLY_ALL under $2
A_LITTLE_MORE = {"input_tokens": 150_000}
SPENT_LINE = "this kernel's budget is spent (FUXI_MAX_BUDGET_USD=2;"


def _subtype(kernel) -> str:
    return kernel.run("print(_fuxi.result.subtype)").stdout.strip()


def _config(kernel) -> str:
    shown = kernel.run("%fuxi config")
    assert shown.status == "ok", shown.messages
    return shown.displays[-1]["data"]["text/plain"]


@pytest.fixture
def budgeted(api, tmp_path):
    api.reset()
    kernel = loaded_kernel(api, tmp_path, **{KERNEL_BUDGET: "2"})
    yield kernel
    kernel.close()


def test_the_cell_that_would_pass_the_kernel_budget_is_cut_and_later_cells_call_nothing(
        budgeted, api):
    api.add(Turn([text("one")], usage=NEARLY_ALL))
    first = budgeted.run("%%fuxi\nfirst")
    assert first.status == "ok", first.messages
    assert record_of(first)["result"]["subtype"] == "success"
    assert SPENT_LINE not in first.stderr
    spent = float(budgeted.run("print(_fuxi.result.total_cost_usd)").stdout)
    assert 1.8 <= spent < 2  # nearly all of it: some is left for the next cell
    assert "left" in _config(budgeted)

    # what is left lets the next cell make one request; past it, the run is cut before
    # the next request, as a run over its own --max-budget-usd is
    api.add(Turn([tool_use("Glob", {"pattern": "*.txt"})], usage=A_LITTLE_MORE),
            Turn([text("never sent")]))
    second = budgeted.run("%%fuxi\nsecond")
    assert second.status == "ok", second.messages
    assert record_of(second)["result"]["subtype"] == "error_max_budget_usd"
    assert len(api.requests) == 2
    assert second.stderr.count("fuxi: " + SPENT_LINE) == 1, second.stderr
    assert "$0.0000 left" in _config(budgeted)

    # nothing left: the cell ends at once, without a request, and says why in one line
    third = budgeted.run("%%fuxi\nthird")
    assert third.status == "ok", third.messages
    assert record_of(third)["result"]["subtype"] == "error_max_budget_usd"
    assert _subtype(budgeted) == "error_max_budget_usd"
    assert len(api.requests) == 2
    assert [line for line in third.stderr.splitlines() if SPENT_LINE in line] == [
        line for line in third.stderr.splitlines() if line.strip()]

    # a new conversation has spent nothing, the kernel has: still no request
    fresh = budgeted.run("%%fuxi --new --max-budget-usd 5\nfourth")
    assert record_of(fresh)["result"]["subtype"] == "error_max_budget_usd"
    assert len(api.requests) == 2 and SPENT_LINE in fresh.stderr

    # %reload_ext keeps what the kernel spent
    assert budgeted.run("%reload_ext fuxi_notebook").status == "ok"
    again = budgeted.run("%%fuxi\nfifth")
    assert record_of(again)["result"]["subtype"] == "error_max_budget_usd"
    assert len(api.requests) == 2


def test_code_in_the_kernel_cannot_lift_the_kernel_budget(budgeted, api):
    api.add(Turn([text("one")], usage={"input_tokens": 1_100_000}))  # $2.20: all of it
    assert budgeted.run("%%fuxi\nfirst").status == "ok"
    lifted = budgeted.run(
        "from fuxi_notebook._internal.notebook.cell.controller import KernelBudget\n"
        "agent = get_ipython().magics_manager.registry['FuxiMagics'].agent\n"
        "agent.budget = KernelBudget(limit=1000.0)")
    assert lifted.status == "ok"
    refused = budgeted.run("%%fuxi\nsecond")
    assert refused.reply["content"]["ename"] == "UsageError"
    assert "the kernel's budget" in refused.reply["content"]["evalue"]
    assert "reverted" in refused.reply["content"]["evalue"]
    api.add(Turn([text("never sent")]))
    cut = budgeted.run("%%fuxi\nthird")
    assert record_of(cut)["result"]["subtype"] == "error_max_budget_usd"
    assert len(api.requests) == 1


_FIND = ("import gc\n"
         "def find(name):\n"
         "    return [o for o in gc.get_objects() if type(o).__name__ == name]\n")

LIFTING = {
    "the kernel's budget": _FIND + (
        "from fuxi_notebook._internal.notebook.cell.controller import KernelBudget\n"
        "find('NotebookAgent')[0].budget = KernelBudget(limit=1000.0)"),
    "the cell's budget": _FIND + (
        "for options in find('FuxiAgentOptions'):\n"
        "    options.max_budget_usd = 1000.0"),
}


@pytest.mark.parametrize("attack", sorted(LIFTING))
def test_the_model_cannot_lift_a_budget_from_its_code(budgeted, api, attack):
    api.add(Turn([tool_use("Python", {"code": LIFTING[attack]})]), Turn([text("done")]))
    result = budgeted.run("%%fuxi --allowed-tools Python\nlook around")
    assert result.status == "ok", result.messages
    record = record_of(result)
    assert record["result"]["subtype"] == "error_during_execution"
    assert "Security" in record["result"]["errors"][0]
    assert attack in record["result"]["errors"][0]
    assert len(api.requests) == 1  # the run stopped at once
    assert "$2 for all" in _config(budgeted)


def test_a_model_without_a_known_price_is_refused_under_a_kernel_budget(budgeted, api):
    refused = budgeted.run("%%fuxi --model gpt-4o\nhello")
    assert refused.reply["content"]["ename"] == "UsageError"
    assert "FUXI_MAX_BUDGET_USD=2 sets a budget for every cell" in (
        refused.reply["content"]["evalue"])
    assert api.requests == []


@pytest.mark.parametrize("value", ["lots", "0", "-1", "nan", "inf"])
def test_a_bad_value_is_one_line_and_nothing_runs(value):
    budget = KernelBudget.read(value)
    assert budget.limit is None and budget.problem is not None
    assert "\n" not in budget.problem and repr(value) in budget.problem


@pytest.mark.parametrize(("value", "limit"), [("2", 2.0), (" 0.25 ", 0.25), ("", None),
                                              (None, None)])
def test_a_usable_value(value, limit):
    budget = KernelBudget.read(value)
    assert budget.limit == limit and budget.problem is None


def test_a_bad_value_in_a_kernel_is_one_usage_line(api, tmp_path):
    api.reset()
    kernel = loaded_kernel(api, tmp_path, **{KERNEL_BUDGET: "lots"})
    try:
        api.add(Turn([text("never sent")]))
        result = kernel.run("%%fuxi\nhello")
        assert result.status == "error"
        assert result.reply["content"]["ename"] == "UsageError"
        evalue = result.reply["content"]["evalue"]
        assert evalue.startswith("%%fuxi: FUXI_MAX_BUDGET_USD must be a positive number")
        assert "'lots'" in evalue and "\n" not in evalue
        assert "Traceback" not in result.stderr + result.stdout
        assert api.requests == []
        assert "FUXI_MAX_BUDGET_USD must be a positive number" in _config(kernel)
    finally:
        kernel.close()


def test_without_the_variable_nothing_changes(fresh, api):
    """The shared kernel has no FUXI_MAX_BUDGET_USD: cells spend past $2 and go on."""
    api.add(Turn([text("one")], usage={"input_tokens": 1_100_000}),
            Turn([text("two")], usage={"input_tokens": 1_100_000}),
            Turn([text("three")]))
    for prompt in ("first", "second", "third"):
        result = fresh.run(f"%%fuxi\n{prompt}")
        assert record_of(result)["result"]["subtype"] == "success"
        assert "budget" not in result.stderr
    assert len(api.requests) == 3
    assert "FUXI_MAX_BUDGET_USD" not in _config(fresh)
    assert fresh.run("print(_fuxi.result.total_cost_usd > 4)").stdout.strip() == "True"


def test_always_allow_under_a_kernel_budget_is_no_security_error(budgeted, api):
    """A rule granted by a click joins the conversation the next cell continues: counting
    the cell's spend must not take that for a change outside the approval path."""
    api.add(Turn([text("hello")]))
    assert budgeted.run("%%fuxi\nfirst", cell_id="cell-one").status == "ok"
    api.add(Turn([tool_use("Bash", {"command": "touch marker.txt"})]), Turn([text("done")]))
    mark = budgeted.iopub_count()
    msg_id = budgeted.send("%%fuxi\nmake a marker", cell_id="cell-two")
    budgeted.click(budgeted.button("Always allow", after=mark))
    granted = budgeted.wait(msg_id, timeout=30)
    assert granted.status == "ok", granted.reply["content"].get("evalue")
    assert record_of(granted)["result"]["subtype"] == "success"
    assert (budgeted.work / "marker.txt").exists()
    api.add(Turn([text("again")]))
    later = budgeted.run("%%fuxi\nand then", cell_id="cell-three")
    assert later.status == "ok", later.reply["content"].get("evalue")
    assert len(api.requests) == 4
