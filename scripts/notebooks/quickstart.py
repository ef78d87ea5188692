"""Quickstart: a CSV in pandas, an agent that looks at it, runs Python (with an approval),
draws a plot it sees, and leaves a variable behind."""

from spec import code, fuxi, md, text, tool_use

TITLE = "Quickstart"

PLOT = """\
monthly = sales.groupby("month")["revenue"].sum()
ax = monthly.plot(marker="o", title="Revenue per month, 2025", figsize=(7, 3.5))
ax.set_ylabel("revenue")
print("lowest month:", monthly.idxmin(), round(monthly.min()))
print("median month:", round(monthly.median()))"""

JULY = """\
july = sales[sales.month == "2025-07"].assign(per_unit=lambda d: d.revenue / d.units)
july.round(1)"""

CELLS = [
    md("""
# fuxi-notebook quickstart

`%%fuxi` cells run an agent **inside this kernel**: it can see your variables, run Python
here (after you approve it), read and edit files, and search. Every run is stored in the
notebook, so the notebook can be run again later without an API key: the model's turns
come from the record, the tools run again for real.

**Run All** works without an API key: you are asked once whether to replay the recorded
runs (and shown what they will execute). With `ANTHROPIC_API_KEY` set, `%%fuxi` cells call
the model instead (add `--replay` to a cell to replay it anyway).
"""),
    code("%load_ext fuxi_notebook"),
    md("A small data set that ships with the repository: monthly sales per region."),
    code("""
import pandas as pd

sales = pd.read_csv("data/sales.csv")
sales.head()
"""),
    md("""
Ask about it in plain words. Looking at variables (`Variables`, `Inspect`) needs no
approval; running code does.
"""),
    fuxi(
        "%%fuxi --max-turns 6\nWhat is in `sales`? A short overview, please.",
        [text("Let me see what the notebook holds."), tool_use("Variables", {})],
        [tool_use("Inspect", {"name": "sales"})],
        [text("`sales` is a DataFrame of **48 rows**: one row per month of 2025 (12) and "
              "region (North, South, East, West), with `units` sold and `revenue`. There "
              "are no missing values; `month` is text like `2025-01`, so sort or convert it "
              "before plotting. North sells the most, East the least.")],
    ),
    md("""
Now a question that needs code. The agent asks before it runs Python in your kernel; the
card shows the full code. **Always allow** lets it run Python for the rest of this
conversation. The plot appears below the cell, and the agent sees it too.
"""),
    fuxi(
        "%%fuxi\nPlot the monthly revenue and tell me which month looks odd, and why.",
        [text("I'll sum the revenue per month and plot it."),
         tool_use("Python", {"code": PLOT})],
        [text("July stands out: about 268k against a median of about 312k. Let me look at "
              "the July rows per region."),
         tool_use("Python", {"code": JULY})],
        [text("**July 2025 is odd because of one row: East.** East sold 634 units in July, "
              "as usual, but booked only 6,661 in revenue: about 10.5 per unit, where every "
              "other row is near 100. That is a factor of ten, which looks like a unit or "
              "decimal error in the source system rather than a real drop. Without it July "
              "would be in line with June and August.\n\nThe monthly totals are in "
              "`monthly` and the July rows in `july`.")],
        clicks=["Always allow"],
    ),
    md("The variables the agent created are ordinary variables of this kernel:"),
    code("monthly.idxmin(), july.loc[july.region == 'East', 'per_unit'].round(1).item()"),
    md("""
The result of the last run is also in `_fuxi` (`_fuxi.result`, `_fuxi.record`), and
`%fuxi sessions` lists the conversations stored in this notebook.

To check this notebook in CI without a key or network: `pytest --nbval notebooks/` (the
plugin that ships with fuxi-notebook replays every recorded cell strictly).
"""),
    code("%fuxi sessions"),
]
