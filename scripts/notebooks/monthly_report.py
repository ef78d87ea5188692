"""Monthly report: an agent notebook meant to run unattended (nbclient, papermill, CI).

Recorded HEADLESS (with nbclient: no cell ids, nobody to click), so the permission policy
decides every call: `--allowed-tools` rules allow, everything else is denied with a message
the model sees. Lives in `notebooks/batch/`; `ci_and_batch` runs it.
"""

from spec import code, fuxi, md, text, tool_use

TITLE = "Monthly revenue report (batch)"
HEADLESS = True  # recorded with nbclient: approvals cannot be clicked
FOLDER = "batch"  # notebooks/batch/monthly_report.ipynb

SETUP = """\
import shutil
from pathlib import Path

import pandas as pd

month = "2025-07"  # the month to report on

sales = pd.read_csv("../data/sales.csv")
shutil.rmtree("out", ignore_errors=True)  # reports of earlier runs"""

NUMBERS = """\
totals = sales.groupby("month")["revenue"].sum()
previous = totals.index[totals.index.get_loc(month) - 1]
by_region = sales.pivot_table(index="region", columns="month", values="revenue",
                              aggfunc="sum")
change = by_region[month] - by_region[previous]
mover = change.abs().idxmax()
rows = sales[(sales.region == mover) & sales.month.isin([previous, month])]
report = {
    "month": month,
    "revenue": round(totals[month]),
    "previous_month": previous,
    "previous_revenue": round(totals[previous]),
    "change_pct": float(round((totals[month] / totals[previous] - 1) * 100, 1)),
    "biggest_mover": mover,
    "mover_change": round(change[mover]),
    "mover_per_unit": dict(zip(rows.month, (rows.revenue / rows.units).round(1))),
}
report"""

REPORT_MD = """\
# Revenue report 2025-07

- Revenue: 267,789 (June: 327,364), **-18.2 %**
- Biggest mover: **East**, -58,011 against June

East's revenue per unit fell from 104.3 in June to 10.5 in July, a factor of ten: most
likely a unit or decimal error in the source data. Check it before publishing.
"""

CELLS = [
    md("""
# Monthly revenue report (batch)

This notebook is written to run **unattended**: from a scheduler, papermill, nbclient or CI.
Nobody can click an approval button there, so the `%%fuxi` cells say up front what the agent
may do, and the permission policy decides everything else:

- `--allowed-tools` rules say what runs without asking: `Python` (code in this kernel),
  `Edit(out/**)` (writing files inside `out/`), ...;
- `--permission-mode dontAsk` denies whatever the rules do not allow, instead of asking.
  Such a cell behaves the same in JupyterLab and in a batch run: never a card;
- a denied call is not an error: the model is told why and how the call could be allowed,
  and adapts. The cell's record lists the denial (`denied by policy`).

(Without `dontAsk`, a headless run denies the same calls, since nobody could click.)
"""),
    code("%load_ext fuxi_notebook"),
    md("The parameters and the data (papermill would inject `month` here):"),
    code(SETUP),
    md("""
The agent may run Python, nothing else that needs approval. Saving a file is an edit, and
edits are not allowed in this cell: watch what the model gets back when it tries.
"""),
    fuxi(
        "%%fuxi --permission-mode dontAsk --allowed-tools Python --max-turns 6\n"
        "Summarise the revenue of `month`: the total, the change against the previous "
        "month, and the region that moved most. Keep the numbers in a dict `report` and "
        "save a short markdown report in `out/`.",
        [text("I'll compute the numbers in the kernel."),
         tool_use("Python", {"code": NUMBERS})],
        [text("Now the markdown report."),
         tool_use("Write", {"file_path": "out/report-2025-07.md", "content": REPORT_MD})],
        [text("I couldn't save the report: this cell allows only Python, and in a headless "
              "run nobody could approve the `Write`. The numbers are in `report`:"
              "\n\n"
              "- **2025-07 revenue: 267,789**, against 327,364 in June (**-18.2 %**);\n"
              "- biggest mover: **East**, -58,011. Its revenue per unit fell from 104.3 to "
              "10.5, a factor of ten: most likely a unit or decimal error in the source "
              "data, not a real drop.\n\n"
              "To let an unattended run save the file, allow writing there, e.g. "
              "`--allowed-tools \"Python,Edit(out/**)\"`.")],
    ),
    md("""
The second cell grants what the first one lacked: writing inside `out/` (`Edit(out/**)`
covers every writer, `Write` included). Python is not in this cell's rules, so a Python
call is denied now; the read-only kernel tools (`Variables`, `Inspect`) never need
approval. Rules are per cell; the conversation goes on.
"""),
    fuxi(
        "%%fuxi --permission-mode dontAsk --allowed-tools \"Edit(out/**)\" --max-turns 6\n"
        "Save the report in `out/` now.",
        [text("I'll take the numbers from `report`, so the file matches the kernel."),
         tool_use("Python", {"code": "print(report)"})],
        [text("Python is not allowed in this cell (in `dontAsk` mode whatever the rules "
              "don't allow is denied). `Inspect` only reads, so I'll use that."),
         tool_use("Inspect", {"name": "report"})],
        [tool_use("Write", {"file_path": "out/report-2025-07.md", "content": REPORT_MD})],
        [text("Saved `out/report-2025-07.md`: revenue 267,789 for 2025-07 (-18.2 % "
              "against June), with East as the biggest mover (-58,011) and a note that its "
              "revenue per unit fell from 104.3 to 10.5, which looks like a data error.")],
    ),
    md("What the run left behind: the report file and the `report` dict."),
    code('print(Path("out/report-2025-07.md").read_text())'),
    code("report"),
]
