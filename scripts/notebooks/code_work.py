"""Code work: an agent in a small project folder finds a bug with Read/Grep, runs the checks
(approved), fixes the function with Edit (approved, shown as a diff), is denied a change to
the checks (with a reason) and adapts."""

from spec import code, fuxi, md, text, tool_use

TITLE = "Fixing code with an agent"

COPY = """\
import shutil
from pathlib import Path

project = Path("work/code_work")
shutil.rmtree(project, ignore_errors=True)
shutil.copytree("code_work_template", project, ignore=shutil.ignore_patterns("__pycache__"))
sorted(str(path.relative_to(project)) for path in project.rglob("*") if path.is_file())"""

OLD_LOOP = "    for end in range(window, len(values)):"
NEW_LOOP = "    for end in range(window, len(values) + 1):"

EDGE_CHECK_OLD = """\
    got = rolling_mean([5, 5, 5], 3)
    assert got == [5.0], f"rolling_mean([5, 5, 5], 3) gave {got}"
"""
EDGE_CHECK_NEW = EDGE_CHECK_OLD + """\
    got = rolling_mean([1, 2], 3)
    assert got == [], f"rolling_mean([1, 2], 3) gave {got}"
"""

ONE_OFF = ('python3 -c "from salestools import rolling_mean; '
           'print(rolling_mean([5, 5, 5], 3), rolling_mean([1, 2], 3))"')

# The checks run by hand with subprocess, not with `!`: IPython runs a `!` command on a
# terminal (pexpect) and polls it every 0.05 s, and when the kernel's thread is not
# scheduled while the command writes its output and exits (a busy machine, the extension's
# background imports), pexpect reports the end of the command without reading what it
# wrote, and the cell shows nothing. subprocess reads the pipes to their end, then waits.
CHECK = """\
import subprocess

checks = subprocess.run(["python3", "check_summary.py"], cwd=project,
                        capture_output=True, text=True)
print(checks.stdout + checks.stderr + f"exit code {checks.returncode}")"""

CELLS = [
    md("""
# Fixing code with an agent

`%%fuxi` is not only for DataFrames: with `--cwd` the agent works in a project folder, with
the same tools a coding agent has. It searches (`Grep`, `Glob`) and reads files (`Read`)
without asking; it asks before it runs a shell command that could change something
(`Bash`) and before it edits a file (`Edit`, `Write`), and shows you the exact command or
the diff on the approval card.

The project is `salestools`, a tiny package of helpers for a sales report, with a check
script that currently fails. The first cell copies it from `code_work_template/` to
`work/code_work/`, removing any earlier copy, so every run of this notebook (and every
replay of it) starts from the same files. `work/` is ignored by git.
"""),
    code(COPY),
    code("%load_ext fuxi_notebook"),
    md("""
Point the agent at the folder with `--cwd` (relative paths resolve against the notebook's
folder). Tool paths are then relative to the project, and the agent may not touch files
outside it without asking. Keep the same `--cwd` on the following cells: a cell with
another working folder starts a new conversation.

We ask for a diagnosis first. Reading and searching need no approval; running the check
script does (a Python script can do anything), so its card is answered with **Allow**:
just this once.
"""),
    fuxi(
        "%%fuxi --cwd work/code_work --max-turns 10\n"
        "`python3 check_summary.py` fails. Find out why, but don't change any files yet.",
        [text("I'll read the README and the check script first."),
         tool_use("Read", {"file_path": "README.md"}),
         tool_use("Read", {"file_path": "check_summary.py"})],
        [text("The checks are a plain script. Let me run it to see which one fails."),
         tool_use("Bash", {"command": "python3 check_summary.py"})],
        [text("`check_rolling_mean` fails: the last window is missing. Let me find the "
              "function."),
         tool_use("Grep", {"pattern": "def rolling_mean", "output_mode": "content",
                           "-n": True})],
        [tool_use("Read", {"file_path": "salestools/summary.py"})],
        [text("Found it. **`rolling_mean` stops one window early.**\n\n"
              "The loop is `for end in range(window, len(values))`, and each mean covers "
              "`values[end - window:end]`. `range` excludes its end, so `end` never reaches "
              "`len(values)` and the window that ends at the last value is never computed:\n\n"
              "- `rolling_mean([1, 2, 3, 4], 2)` gives `[1.5, 2.5]` and drops `3.5` (the "
              "failing check);\n"
              "- `rolling_mean([5, 5, 5], 3)` would give `[]`: when the window is as long as "
              "the list, the loop does not run at all.\n\n"
              "The fix is one line in `salestools/summary.py` (line 14): "
              "`range(window, len(values) + 1)`. `growth` is fine. I haven't changed "
              "anything.")],
        clicks=["Allow"],
    ),
    md("""
Now let it fix the bug. An `Edit` card shows the diff before anything is written; after
**Allow** the diff stays in the transcript. When the agent then tries to add a check of its
own, we **Deny** it and type a reason: the agent gets the reason as the tool's result and
changes course instead of retrying.
"""),
    fuxi(
        "%%fuxi --cwd work/code_work --max-turns 10\nFix it, then run the checks again.",
        [text("I'll make the loop include the last window."),
         tool_use("Edit", {"file_path": "salestools/summary.py", "old_string": OLD_LOOP,
                           "new_string": NEW_LOOP})],
        [tool_use("Bash", {"command": "python3 check_summary.py"})],
        [text("Both checks pass. One edge case has no check yet: a window longer than "
              "the list should give no means at all. I'll add that to the checks."),
         tool_use("Edit", {"file_path": "check_summary.py", "old_string": EDGE_CHECK_OLD,
                           "new_string": EDGE_CHECK_NEW})],
        [text("Understood, I'll leave `check_summary.py` as it is and check the edge cases "
              "with a one-off command instead."),
         tool_use("Bash", {"command": ONE_OFF})],
        [text("Fixed. **`salestools/summary.py`**, line 14: the loop now runs to "
              "`range(window, len(values) + 1)`, so the window ending at the last value is "
              "included.\n\n"
              "- `python3 check_summary.py`: both checks pass (`check_growth`, "
              "`check_rolling_mean`).\n"
              "- Edge cases, checked without touching the checks: a window as long as the "
              "list gives one mean (`[5.0]`), a longer window gives `[]`.\n\n"
              "If you want the longer-window case covered by the checks, it is two lines "
              "in `check_rolling_mean`; I left that file alone as you asked.")],
        clicks=["Allow", "Allow",
                ("Deny", "Leave the checks as they are: changes to them are reviewed "
                         "separately."),
                "Allow"],
    ),
    md("The fixed file, read back in a plain cell:"),
    code('print(Path("work/code_work/salestools/summary.py").read_text())'),
    md("And the checks, run by hand:"),
    code(CHECK),
    md("""
Everything the agent did is in the transcript above, including the denied edit and your
reason. Replaying this notebook (`pytest --nbval`, or **Run All** without an API key)
copies the template again and re-runs the same reads, edits and commands for real; the
recorded approvals and the denial are applied again without asking, and a strict replay
fails if any tool result differs from the record.
"""),
]
