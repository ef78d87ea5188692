"""Sessions: one conversation across cells, a fresh one with --new, going back with
--resume, branching with --fork, and continuing after a kernel restart from the records
saved in the notebook."""

from spec import code, fuxi, md, restart, text, tool_use

TITLE = "Conversations across cells"

ORDERS = """\
import pandas as pd

orders = pd.DataFrame({
    "date": pd.to_datetime(["2025-02-14", "2025-04-03", "2025-08-21", "2025-11-30"]),
    "amount": [120.0, 80.0, 200.0, 150.0],
})
orders"""

QUARTERS = """\
# fiscal year from 1 April: April-June is Q1
orders["fiscal_quarter"] = "Q" + ((orders["date"].dt.month - 4) % 12 // 3 + 1).astype(str)
orders"""

CELLS = [
    md("""
# Conversations across cells

A `%%fuxi` cell is one prompt in a conversation. This notebook shows how cells pick the
conversation they continue:

| the cell | continues |
|---|---|
| `%%fuxi` | the conversation of the `%%fuxi` cell that ran last in this kernel |
| `%%fuxi --new` | nothing: a new conversation |
| `%%fuxi --resume CELL_ID` | the conversation that ends with that cell (a session id works too) |
| `%%fuxi --fork` | like the above, but as a new session: the original branch stays as it was |
| `%%fuxi` after a restart | the one saved in the notebook: of the nearest `%%fuxi` cell above |
"""),
    code("%load_ext fuxi_notebook"),
    md("A few orders to talk about:"),
    code(ORDERS),
    md("""
First we tell the agent something it cannot know: our fiscal year does not start in
January.
"""),
    fuxi(
        "%%fuxi\nOur fiscal year starts on 1 April, so Q1 is April to June. Keep that in mind "
        "for the rest of this notebook.",
        [text("Noted: your fiscal year starts on 1 April, so\n\n"
              "- **Q1** is April to June,\n- **Q2** July to September,\n"
              "- **Q3** October to December,\n- **Q4** January to March.\n\n"
              "I'll use these quarters from now on.")],
    ),
    md("""
The next cell simply continues: the agent remembers the fiscal year. It needs to run
Python to add the column, so it asks first (we click **Allow**).
"""),
    fuxi(
        "%%fuxi\nAdd a `fiscal_quarter` column to `orders`.",
        [text("I'll count months from April: shifting the month by 4 (mod 12) makes April "
              "0, and every 3 months is one quarter."),
         tool_use("Python", {"code": QUARTERS})],
        [text("Done: `orders` now has a `fiscal_quarter` column. February falls in **Q4**, "
              "April in **Q1**, August in **Q2** and November in **Q3** of the fiscal "
              "year.")],
        clicks=["Allow"],
    ),
    md("""
`--new` starts a conversation from scratch. The agent still sees the kernel (its
variables), but nothing that was said in the other conversation, so it does not know about
our fiscal year:
"""),
    fuxi(
        "%%fuxi --new\nWhich fiscal quarter is November in?",
        [text("This conversation has just started, so I don't know your fiscal calendar. "
              "In calendar quarters, November is in **Q4** (October to December). If your "
              "fiscal year starts in another month, tell me which and I'll work it out.")],
    ),
    md("""
`--resume` goes back to a conversation: give it the id of a recorded cell (here `s-07`,
the cell that added the column; cell ids are shown by `%fuxi sessions` and stored in the
notebook) or a session id. The same question now gets the answer we expect. Later plain
`%%fuxi` cells continue from here.
"""),
    fuxi(
        "%%fuxi --resume s-07\nWhich fiscal quarter is November in?",
        [text("**Q3**: your fiscal year starts on 1 April, so Q3 runs from October to "
              "December. That matches the `fiscal_quarter` column in `orders`.")],
    ),
    md("""
`--fork` branches off: the cell continues the conversation (here the one we just resumed)
under a new session id, so a what-if does not become part of the original conversation.
A later `--resume s-11` would go on from the original branch, without the what-if.
"""),
    fuxi(
        "%%fuxi --fork\nWhat if our fiscal year started on 1 July instead? Which quarter "
        "would November be in? Don't change `orders`.",
        [text("With a 1 July start, Q1 would be July to September and Q2 October to "
              "December, so November would be in **Q2**. I haven't changed `orders`: its "
              "`fiscal_quarter` column still uses the 1 April start.")],
    ),
    md("""
## After a kernel restart

A restart empties the kernel: the variables and the conversation in memory are gone. But
every `%%fuxi` cell stored its turns in its outputs (the session record), and the saved
`.ipynb` keeps them. So after a restart (and after **Save**), the next `%%fuxi` cell
continues the conversation of the nearest recorded `%%fuxi` cell above it, rebuilt from
the notebook file. Here that is the fork. (The kernel finds its notebook through Jupyter;
set `FUXI_NOTEBOOK=path/to/notebook.ipynb` where it cannot.)

The kernel was restarted here, so the extension is loaded again. (`%reload_ext` rather
than `%load_ext`: when this notebook runs top to bottom without the restart, as
`pytest --nbval` runs it, reloading also drops the conversation held in memory, so the next
cell continues from the saved notebook there too.)
"""),
    restart(),
    code("%reload_ext fuxi_notebook"),
    fuxi(
        "%%fuxi\nBack to our real calendar: which fiscal quarter is 15 May in?",
        [text("**Q1**: your fiscal year starts on 1 April (the 1 July start was only a "
              "what-if), and Q1 runs from April to June.\n\n"
              "The kernel was restarted, so `orders` is gone; re-run the cells above to get "
              "it back.")],
    ),
    md("""
`%fuxi sessions` lists the conversations recorded in this notebook: the first one (with
the resumed cell), the `--new` one, and the fork, which the cell after the restart
continued.
"""),
    code("%fuxi sessions"),
]
