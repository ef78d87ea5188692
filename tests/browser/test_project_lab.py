"""A project's trust card, the task checklist and compaction in a real JupyterLab.

- trust card: a folder whose `.fuxi/settings.json` (a hook command, an allow rule) and
  `.mcp.json` (a server) would run code shows a card listing them; "Not now" runs none of
  it (no marker file), the held-back note follows under the cell, and the next cell asks
  nothing (once per content per kernel);
- checklist: TaskCreate / TaskUpdate calls show one checklist in the running cell, and the
  saved transcript a task list JupyterLab renders as checkboxes;
- compaction: a run that fills the window shows one "Context compacted" line with the
  summary folded under it.

This module's JupyterLab gives its kernels a temporary FUXI_CONFIG_DIR (the trust store
lives there, never in the real home) and a 12,000-token window (FUXI_CONTEXT_WINDOW).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fuxi_notebook._internal.context.compaction import asks_for_summary
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .conftest import close_pages, running_lab
from .test_lab import DONE, LOAD, Gate, _wait_requests

if TYPE_CHECKING:
    from .lab import ChromiumBrowser, JupyterLab, NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SCREENSHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots"
               if os.environ.get("FUXI_SCREENSHOTS") == "1"
               else Path(tempfile.mkdtemp(prefix="fuxi-shots-")))
SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server_script.py"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
CHECKBOX = "input[type=checkbox]"
MS = 1000


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuxi-config")


@pytest.fixture(scope="module")
def lab(api: FakeMessagesServer, config_dir: Path,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """conftest's lab, plus the kernels' own config folder and a small window."""
    yield from running_lab(tmp_path_factory, "project", {
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5",
        "FUXI_STALL_TIMEOUT": "30", "MPLBACKEND": "Agg",
        "FUXI_CONFIG_DIR": str(config_dir), "FUXI_CONTEXT_WINDOW": "12000"})


@pytest.fixture
def hostile_notebook(lab: JupyterLab, browser: ChromiumBrowser, api: FakeMessagesServer,
                     request: pytest.FixtureRequest) -> Iterator[tuple[NotebookPage, dict]]:
    """A notebook in a folder of its own whose project settings would run code (the
    kernel's working folder is the notebook's); the marker files they would create."""
    from .lab import NotebookPage, write_notebook

    api.reset()
    folder = lab.root / "hostile"
    marks = {"hook": folder / "hook-ran", "server": folder / "server-started"}
    (folder / ".fuxi").mkdir(parents=True)
    (folder / ".fuxi" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(*)"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": f"touch {marks['hook']}"}]}]}}))
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {
        "command": sys.executable, "args": [str(SERVER), "--touch", str(marks["server"])]}}}))
    write_notebook(folder / "trust.ipynb", [LOAD, "%%fuxi\nfirst", "%%fuxi\nsecond"])
    page = NotebookPage(lab, browser.new_page(), "hostile/trust.ipynb")
    yield page.open(), marks
    close_pages([page], request, lab)


def _expect_checked(nb: NotebookPage, index: int, count: int) -> None:
    """Wait until `count` checkboxes in the cell's outputs are checked."""
    from playwright.sync_api import expect

    checked = nb.outputs(index).locator(f"{CHECKBOX}:checked")
    expect(checked).to_have_count(count, timeout=30 * MS)


def test_not_now_on_the_trust_card_runs_nothing_of_the_folder(
        hostile_notebook, api: FakeMessagesServer, config_dir: Path):
    from playwright.sync_api import expect

    nb, marks = hostile_notebook
    api.add(Turn([tool_use("Bash", {"command": "touch by-model"})]), Turn([text("one")]),
            Turn([text("two")]))
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Trust this folder", "Not now")
    card = nb.cell(1).locator(".jp-Cell-outputArea")  # the card nests an output area
    # the card's text is a widget output of its own: it may render after the buttons
    for shown in (f"touch {marks['hook']}", "Bash(*)", "evil"):
        expect(card).to_contain_text(shown, timeout=30 * MS)
    card.scroll_into_view_if_needed()
    nb.screenshot(SCREENSHOTS / "trust-card.png")
    assert not api.requests  # nothing ran before the decision
    nb.click(1, "Not now")
    nb.wait_buttons(1, "Deny")  # the allow rule was held back: the model's call is asked
    nb.click(1, "Deny")
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    note = nb.outputs(1).locator(STDERR)
    assert "Not applied until you trust this folder" in note.inner_text()
    assert f"touch {marks['hook']}" in note.inner_text()
    last = nb.outputs(1).locator(":scope > .jp-OutputArea-child").last
    assert last.locator(STDERR).count() == 1  # told after the run, below the transcript
    nb.run_cell(2)
    nb.wait_output(2, DONE)  # no card held the cell: asked once per content per kernel
    nb.wait_done(2)
    assert nb.button(2, "Trust this folder").count() == 0
    assert not marks["hook"].exists() and not marks["server"].exists()
    assert not (nb.path.parent / "by-model").exists()
    assert not (config_dir / "trusted-folders.json").exists()  # "Not now" stores nothing
    assert len(api.requests) == 3


def test_the_checklist_shows_once_live_and_saves_as_a_task_list(notebook,
                                                                api: FakeMessagesServer):
    gate = Gate(Turn([text("Loaded; plotting next.")]))
    api.add(Turn([tool_use("TaskCreate", {"subject": "Load the data"}),
                  tool_use("TaskCreate", {"subject": "Plot the totals"})]),
            Turn([tool_use("TaskUpdate", {"taskId": "1", "status": "completed"}),
                  tool_use("TaskUpdate", {"taskId": "2", "status": "in_progress"})]),
            gate)
    nb = notebook([LOAD, "%%fuxi\nplan it"])
    boxes = nb.outputs(1).locator(CHECKBOX)
    try:
        nb.run_and_wait(0)
        nb.run_cell(1)
        _wait_requests(api, 3)  # the tasks are updated; the answer is held
        _expect_checked(nb, 1, 1)
        assert nb.is_running(1)
        assert boxes.count() == 2  # one checklist, not one per call
        shown = nb.output_text(1)
        assert "Plot the totals (in progress)" in shown and shown.count("1 of 2 done") == 1
        nb.screenshot(SCREENSHOTS / "checklist.png", index=1)
    finally:
        gate.open()
    nb.wait_output(1, DONE)
    nb.wait_done(1)
    nb.save()
    nb.reload()
    nb.wait_output(1, "Loaded; plotting next.")
    _expect_checked(nb, 1, 1)
    assert boxes.count() == 2
    assert "Plot the totals (in progress)" in nb.output_text(1)


class _Agent:
    """Bash calls until the window fills and a summary is asked for; then an answer."""

    def __init__(self) -> None:
        self.calls = self.summaries = 0

    def __call__(self, body: dict[str, Any]) -> Turn:
        if asks_for_summary(body["messages"]):
            self.summaries += 1
            return Turn([text("Summary: the user asked to count; seq listed 1 to 400.")])
        if self.summaries or self.calls >= 30:
            return Turn([text("Counted, and the context was compacted on the way.")])
        self.calls += 1
        return Turn([tool_use("Bash", {"command": f"seq 1 400 # call {self.calls}"})])


def test_a_compaction_is_one_line_with_the_summary_folded(notebook, api: FakeMessagesServer):
    agent = _Agent()
    api.add(*[agent] * 40)
    nb = notebook([LOAD, "%%fuxi --allowed-tools Bash\ncount to 400, several times"])
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_output(1, DONE, timeout=90)
    nb.wait_done(1)
    assert agent.summaries == 1 and 1 < agent.calls < 30, (agent.summaries, agent.calls)
    shown = nb.output_text(1)
    assert shown.count("Context compacted") == 1, shown[-2000:]
    line = nb.outputs(1).locator("details > summary", has_text="Context compacted")
    assert line.count() == 1
    assert "automatically" in line.inner_text()
    summary = line.locator("xpath=..").get_by_text("seq listed 1 to 400")  # its <details>
    assert not summary.is_visible()  # folded under the line...
    line.click()
    summary.wait_for(timeout=10 * MS)  # ...one click away
