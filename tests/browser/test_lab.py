"""`%%fuxi` in a real JupyterLab in headless chromium: what a person sees and clicks.

The model is the fake Messages API (`api`); every assertion is about real behaviour: text
on the page, files on disk, what the model was sent, what the saved .ipynb holds.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Fault, Turn, text, tool_use

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

# The README's screenshots are rewritten only on request (FUXI_SCREENSHOTS=1); otherwise
# they go to a temporary folder, so test runs do not leave modified images behind.
SCREENSHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots"
               if os.environ.get("FUXI_SCREENSHOTS") == "1"
               else Path(tempfile.mkdtemp(prefix="fuxi-shots-")))
LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "  # the end line of the final transcript (not of the live view)
WIDGET_ERRORS = ("widget model not found", "Error displaying widget")
# Longer than the 120-character one-line summary: the card must show all of it.
ALLOW_COMMAND = ("touch allowed-file && echo 'the approval card shows every character of "
                 "this command, not just a one-line summary of it' && echo end-of-command")
STORY_START = "Once upon a time, in a notebook far away, " * 12
STORY_END = "and the first part of the story ends here."


def _tool_result(request: dict[str, Any]) -> dict[str, Any]:
    """The tool_result block the model was sent last."""
    block = request["messages"][-1]["content"][0]
    assert block["type"] == "tool_result", block
    return block


def _result_text(block: dict[str, Any]) -> str:
    """A tool_result's content as text (a string or a list of text blocks on the wire)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [])


class Gate:
    """A script step that holds the model's answer until the test opens the gate.

    It runs on the fake server's thread, so the run provably cannot end before `open()`:
    no timing assumption in the test. Bounded, so a failed test never hangs the server.
    """

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self._open = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Turn:
        self._open.wait(timeout=60)
        return self.turn

    def open(self) -> None:
        self._open.set()


def test_streamed_text_is_visible_before_the_run_ends(notebook, api: FakeMessagesServer):
    gate = Gate(Turn([text("The second part came after the tool.")]))
    api.add(Turn([text(STORY_START + STORY_END), tool_use("Bash", {"command": "sleep 0.1"})]),
            gate)
    nb = notebook([LOAD, '%%fuxi --allowed-tools "Bash(sleep *)"\nTell me a long story'])
    try:
        nb.run_and_wait(0)
        nb.run_cell(1)
        nb.wait_output(1, STORY_END)  # streamed into the live view...
        assert nb.is_running(1)  # ...while the run waits for the model's second answer
        assert "The second part" not in nb.output_text(1)
    finally:
        gate.open()
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    shown = nb.output_text(1)
    assert STORY_END in shown and "The second part came after the tool." in shown
    assert "Tell me a long story" in shown  # the final transcript quotes the prompt
    assert len(api.requests) == 2


def test_allow_runs_the_full_command(notebook, api: FakeMessagesServer):
    api.add(Turn([text("I will create the file."), tool_use("Bash", {"command": ALLOW_COMMAND})]),
            Turn([text("The file is there now.")]))
    nb = notebook([LOAD, "%%fuxi\nCreate allowed-file"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Allow", "Always allow", "Deny")
    assert nb.widget_text(1, "pre") == ALLOW_COMMAND
    nb.screenshot(SCREENSHOTS / "approval.png", index=1)
    assert not (nb.lab.root / "allowed-file").exists()  # nothing ran before the click
    nb.click(1, "Allow")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    assert "(allowed by you)" in nb.output_text(1)  # the decision, on the folded line
    assert "end-of-command" not in nb.output_text(1)  # the call is one folded line...
    nb.outputs(1).locator("summary", has_text="Bash").click()  # ...one click from the rest
    nb.wait_output(1, "end-of-command")
    shown = nb.output_text(1)
    assert ALLOW_COMMAND in shown  # the full command stays visible after approval
    assert "The file is there now." in shown
    assert nb.button(1, "Allow").count() == 0  # the card became plain text
    assert (nb.lab.root / "allowed-file").exists()
    assert "end-of-command" in _result_text(_tool_result(api.requests[-1]))
    nb.screenshot(SCREENSHOTS / "run.png", index=1)


def test_deny_with_a_reason_never_runs_the_command(notebook, api: FakeMessagesServer):
    api.add(Turn([tool_use("Bash", {"command": "touch denied-file"})]),
            Turn([text("Understood, I left it alone.")]))
    nb = notebook([LOAD, "%%fuxi\nCreate denied-file"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Deny")
    nb.outputs(1).get_by_placeholder("Reason for denying (optional)").fill("not in this folder")
    nb.click(1, "Deny")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    assert "(denied by you: not in this folder)" in nb.output_text(1)
    assert not (nb.lab.root / "denied-file").exists()
    answer = _tool_result(api.requests[-1])
    assert answer["is_error"] and "not in this folder" in _result_text(answer)


def test_ask_user_question_option_button(notebook, api: FakeMessagesServer):
    question = {"questions": [{"question": "Which format?", "header": "Format",
                               "multiSelect": False,
                               "options": [{"label": "CSV", "description": "plain text"},
                                           {"label": "Parquet", "description": "columnar"}]}]}
    api.add(Turn([tool_use("AskUserQuestion", question)]), Turn([text("Parquet it is.")]))
    nb = notebook([LOAD, "%%fuxi\nSave the data"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "CSV", "Parquet", "Skip")
    assert nb.widget_text(1, "b") == "Which format?"
    nb.click(1, "Parquet")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    assert "Parquet it is." in nb.output_text(1)
    answer = _tool_result(api.requests[-1])
    assert '"Which format?" = "Parquet"' in _result_text(answer)


def _wait_requests(api: FakeMessagesServer, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while len(api.requests) < count:
        assert time.monotonic() < deadline, f"the model got {len(api.requests)} requests"
        time.sleep(0.1)


def test_interrupt_a_stalled_run_then_run_the_next_cell(notebook, api: FakeMessagesServer):
    api.add(Fault(stall_seconds=60, cut_after_events=2))
    nb = notebook([LOAD, "%%fuxi\nThis answer never ends", 'print("alive")'])
    nb.run_and_wait(0)
    nb.run_cell(1)
    _wait_requests(api, 1)
    time.sleep(0.5)  # the stream has started and gone silent
    assert nb.is_running(1)
    nb.interrupt()
    nb.wait_output(1, "Stopped: interrupted by the user", timeout=8)
    nb.wait_done(1, timeout=8)
    assert "Stopped · 0 turns" in nb.output_text(1)
    assert nb.output_text(1).lower().count("interrupted by the user") == 1  # said once
    assert len(api.requests) == 1  # interrupted, not retried
    nb.run_cell(2)
    nb.wait_output(2, "alive", timeout=15)


def test_saved_and_reloaded_notebook_keeps_plain_outputs(notebook, api: FakeMessagesServer):
    api.add(Turn([tool_use("Bash", {"command": "touch kept-file && echo saved-marker"})]),
            Turn([text("The transcript survives a reload.")]))
    nb = notebook([LOAD, "%%fuxi\nSay something to keep"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.click(1, "Allow")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    nb.save()
    nb.reload()
    nb.wait_output(1, "The transcript survives a reload.")
    assert "saved-marker" in nb.output_text(1)
    page = nb.page_text()
    assert not [e for e in WIDGET_ERRORS if e.lower() in page.lower()], page[-2000:]
    saved = nbformat.read(str(nb.path), as_version=4)
    mimes = [m for o in saved.cells[1].outputs for m in o.get("data", {})]
    assert RECORD_MIME in mimes
    assert "application/vnd.jupyter.widget-view+json" not in mimes  # no card left behind
    record = next(o.data[RECORD_MIME] for o in saved.cells[1].outputs
                  if RECORD_MIME in o.get("data", {}))
    assert record["cell_id"] == saved.cells[1].id  # the run is tied to its saved cell


MONEY = "North (≈ $94k), then South ($83k); code `$HOME` stays code."


def _no_math(nb, index: int) -> None:
    """Nothing in the cell's output was typeset as LaTeX, and the amounts read as written."""
    assert nb.outputs(index).locator("mjx-container, .MathJax, .katex").count() == 0
    shown = nb.output_text(index)
    assert "(≈ $94k), then South ($83k)" in shown, shown[-1500:]


def test_dollar_amounts_stay_text_live_and_after_reload(notebook, api: FakeMessagesServer):
    """Issue 9, item 1: model text with dollar amounts rendered as italic math."""
    gate = Gate(Turn([text(f"To sum up: {MONEY}")]))
    api.add(Turn([text(MONEY), tool_use("Bash", {"command": "sleep 0.1"})]), gate)
    nb = notebook([LOAD, '%%fuxi --allowed-tools "Bash(sleep *)"\nWhich region sold most?'])
    try:
        nb.run_and_wait(0)
        nb.run_cell(1)
        nb.wait_output(1, "then South")  # the live view, while the model is held
        _no_math(nb, 1)
    finally:
        gate.open()
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    _no_math(nb, 1)
    assert "To sum up" in nb.output_text(1)
    nb.save()
    nb.reload()
    nb.wait_output(1, "To sum up")
    _no_math(nb, 1)


def test_stop_mid_answer_keeps_the_text_and_shows_one_line(notebook, api: FakeMessagesServer):
    """Issue 9, items 2 and 4, as a user saw them: after Stop the streamed paragraph was
    gone ("Stopped · 0 turns") and a 20-line traceback through the package was saved."""
    answer = Turn([text("North sold the most this quarter, then South, and the other "
                        "regions trail far behind them.")])
    api.add(Fault(stall_seconds=60, cut_after_events=4, turn=answer))
    nb = notebook([LOAD, "%%fuxi\nWhich region sold most?", 'print("alive")'])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_output(1, "North sold the most")  # on screen, and the model has gone quiet
    nb.interrupt()
    nb.wait_output(1, "Stopped: interrupted by the user", timeout=10)
    nb.wait_done(1, timeout=10)
    shown = nb.output_text(1)
    assert "North sold the most" in shown and "cut off" in shown  # kept, and marked
    assert "1 turn" in shown
    assert "Traceback" not in shown and "__import__" not in shown
    assert "fuxi_notebook" not in shown
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4)
    errors = [o for o in saved.cells[1].outputs if o.get("output_type") == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1
    nb.run_cell(2)
    nb.wait_output(2, "alive", timeout=15)


def test_the_tab_title_says_when_a_card_waits(notebook, api: FakeMessagesServer):
    """Issue 9, item 14: a card off-screen was missed; the tab title now says so."""
    api.add(Turn([tool_use("Bash", {"command": "touch title-file"})]), Turn([text("done")]))
    nb = notebook([LOAD, "%%fuxi\nsay something"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Allow", "Always allow", "Deny")
    expect_title = nb.page.wait_for_function(
        "() => document.title.startsWith('⏳ Approval needed')", timeout=15_000)
    assert expect_title
    nb.click(1, "Allow")
    nb.page.wait_for_function(
        "() => !document.title.startsWith('⏳ Approval needed')", timeout=15_000)
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4)
    mimes = [m for o in saved.cells[1].outputs for m in o.get("data", {})]
    assert "application/javascript" not in mimes  # the script is not left in the file


def test_cards_show_code_and_diffs_formatted(notebook, api: FakeMessagesServer):
    """Issue 9, item 8: InsertCell showed escaped JSON; Write showed no diff or path."""
    api.add(Turn([tool_use("Read", {"file_path": "notes.md"})]),  # else it is refused unasked
            Turn([tool_use("Write", {"file_path": "notes.md",
                                     "content": "# Notes\nSouth leads\n"})]),
            Turn([tool_use("InsertCell", {"code": "sales.plot(x='month')"})]),
            Turn([text("done")]))
    nb = notebook([LOAD, "%%fuxi\nupdate my notes, then add a plot cell"])
    (nb.lab.root / "notes.md").write_text("# Notes\nNorth leads\n")
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Allow", "Always allow", "Deny")
    card = nb.outputs(1).inner_text()
    assert "overwrite" in card and str(nb.lab.root / "notes.md") in card
    assert "-North leads" in card and "+South leads" in card
    assert "Always allow adds Edit(./**) for the rest of this session" in card
    nb.screenshot(SCREENSHOTS / "write-card.png", index=1)
    nb.click(1, "Allow")
    code = nb.outputs(1).locator(".widget-html pre", has_text="sales.plot(x=")
    code.wait_for(timeout=30_000)  # the InsertCell card
    assert code.inner_text().strip() == "sales.plot(x='month')"  # code, not escaped JSON
    assert code.locator("span[style]").count() > 0  # highlighted
    nb.click(1, "Deny")
    nb.wait_output(1, DONE)
    nb.wait_done(1)


PLOT = ("import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 2.5)); "
        "plt.plot([3, 1, 2]); plt.title({title!r});")
#: Each output of a cell, in order: "figure" (an image output), else its text.
LAYOUT = """(area) => [...area.querySelectorAll(':scope > .jp-OutputArea-child')].map(child =>
    child.querySelector('.jp-RenderedImage img') ? 'figure'
    : (child.innerText.trim() || '(empty)'))"""


def _layout(nb, index: int) -> list[str]:
    return nb.outputs(index).evaluate(LAYOUT)


def _at(layout: list[str], needle: str) -> int:
    """The index of the first output showing `needle`."""
    return next(i for i, shown in enumerate(layout) if needle in shown)


def test_plots_and_decisions_sit_next_to_their_calls(notebook, api: FakeMessagesServer):
    """Issue 9, items 9, 10 and 11: figures appeared below "Done", far from the call that
    drew them; cards showed `[image]`; decision lines piled up below the live view."""
    api.add(Turn([text("Sales first."), tool_use("Python", {"code": PLOT.format(title="sales")})]),
            Turn([text("Now costs."), tool_use("Python", {"code": PLOT.format(title="costs")})]),
            Turn([tool_use("Bash", {"command": "touch plotted"})]),
            Turn([text("Both plots are above: sales, then costs.")]))
    nb = notebook([LOAD, "%%fuxi\nplot sales, then costs"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.click(1, "Allow")
    nb.wait_output(1, "Now costs.")
    nb.click(1, "Allow")
    nb.wait_buttons(1, "Allow", "Deny")  # the Bash card
    nb.wait_output(1, "touch plotted")
    live = [line for line in _layout(nb, 1) if line != "(empty)"]
    # each figure right below its call's card and decision; the waiting card last
    sales, costs = _at(live, "Sales first."), _at(live, "Now costs.")
    assert live[sales + 1].startswith("✓ Allowed: Python") and live[sales + 2] == "figure"
    assert live[costs + 1].startswith("✓ Allowed: Python") and live[costs + 2] == "figure"
    assert sales < costs < len(live) - 2 and live.count("figure") == 2, live
    thumbnails = nb.outputs(1).locator(".jp-RenderedMarkdown img[alt^='Figure']")
    assert thumbnails.count() == 2  # in the cards, numbered: told apart
    assert "[image]" not in nb.output_text(1) and "**" not in nb.output_text(1)  # rendered
    nb.screenshot(SCREENSHOTS / "plots-live.png", index=1)
    nb.click(1, "Allow")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    final = _layout(nb, 1)
    assert len(final) == 5 and final[1] == final[3] == "figure", final
    assert final[2].startswith("Now costs.") and final[4].startswith("Bash"), final
    shown = nb.output_text(1)
    assert "Figure 1 below" in shown and "Figure 2 below" in shown
    assert "[image]" not in shown and "(empty)" not in final
    # each call is one folded line: its result is one click away
    folded = nb.outputs(1).locator("details:not([open]) > summary", has_text="Python")
    assert folded.count() == 2
    folded.first.click()
    expect_code = nb.outputs(1).locator("details[open] pre", has_text="plt.title('sales')")
    expect_code.first.wait_for(timeout=10_000)
    nb.screenshot(SCREENSHOTS / "plots-final.png", index=1)
    nb.save()
    nb.reload()
    nb.wait_output(1, "Both plots are above")
    assert _layout(nb, 1) == final
    saved = nbformat.read(str(nb.path), as_version=4)
    kinds = ["image/png" in o.get("data", {}) for o in saved.cells[1].outputs]
    assert kinds == [False, True, False, True, False]  # figures stored once, in place
    assert all(o.get("data") for o in saved.cells[1].outputs)  # no empty outputs


def test_end_states_in_a_users_words(notebook, api: FakeMessagesServer):
    """Issue 9, item 11: `--max-turns 1` said "2 turns", ends read `error_max_turns`."""
    api.add(Turn([tool_use("Bash", {"command": "ls"})]),
            Turn([text("One more look."), tool_use("Bash", {"command": "ls -a"})]))
    nb = notebook([LOAD, '%%fuxi --max-turns 1 --allowed-tools "Bash(ls *)"\nlook around'])
    nb.run_and_wait(0)
    nb.run_and_wait(1)
    nb.wait_output(1, "Stopped · the turn limit was reached · 1 turn · ")
    shown = nb.output_text(1)
    assert "error_max_turns" not in shown and "2 turns" not in shown and "**" not in shown
    assert "(estimate)" in shown and "tokens" in shown  # what it spent, on the last line
