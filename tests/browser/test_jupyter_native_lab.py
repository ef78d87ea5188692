"""Issue 39 in a real JupyterLab 4 and Notebook 7 in chromium: the Settings Editor shows
Fuxi's schema and a changed default reaches the next agent cell; the `Fuxi: …` commands
are in the palette and the cell's context menu; "insert an agent cell below" (Shift F)
makes a cell about the selected cell, which reaches the prompt's context; a cell the agent
inserted or edited shows a badge naming its agent cell and carries its provenance in the
saved file, and undo takes both back; the line under an agent cell says which
conversation it continues, after a reload too; "replay this cell" replays a record
without asking the model.

With FUXI_SCREENSHOTS=<folder> set, the tests leave the screenshots docs/notebook.md
shows there (taken from the real browser)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .conftest import close_pages
from .shots import docs_screenshot

if TYPE_CHECKING:
    from .lab import ChromiumBrowser, JupyterLab, NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LOAD = "%load_ext fuxi_notebook"
DONE = "Done · "
MS = 1000
ENV = {"FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5",
       "FUXI_STALL_TIMEOUT": "30", "MPLBACKEND": "Agg", "ANTHROPIC_API_KEY": "sk-test"}


def _server(kind: type[JupyterLab], name: str, api: FakeMessagesServer,
            factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    server = kind(factory.mktemp(f"{name}-root"), factory.mktemp(f"{name}-state"),
                  env={**ENV, "ANTHROPIC_BASE_URL": api.url})
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[JupyterLab]:
    """JupyterLab with `window.jupyterapp` (the app's commands and models are read)."""
    from .lab import ExposedJupyterLab

    yield from _server(ExposedJupyterLab, "native-lab", api, tmp_path_factory)


@pytest.fixture(scope="module")
def notebook7(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[JupyterLab]:
    from .lab import JupyterNotebook

    yield from _server(JupyterNotebook, "native-nb7", api, tmp_path_factory)


@pytest.fixture(params=["lab", "notebook7"])
def frontend(request: pytest.FixtureRequest) -> JupyterLab:
    """Each test that uses it runs in JupyterLab and in Notebook 7."""
    return request.getfixturevalue(request.param)


@pytest.fixture
def open_nb(browser: ChromiumBrowser, api: FakeMessagesServer,
            request: pytest.FixtureRequest) -> Iterator[Callable[..., NotebookPage]]:
    """Opens a notebook of the given cells in a server (JupyterLab or Notebook 7)."""
    from .lab import JupyterNotebook, Notebook7Page, NotebookPage, write_notebook

    api.reset()
    opened: list[tuple[NotebookPage, JupyterLab]] = []

    def open_notebook(server: JupyterLab, cells: list[str], height: int = 860
                      ) -> NotebookPage:
        name = f"{request.node.name}.ipynb".replace("[", "-").replace("]", "")
        write_notebook(server.root / name, cells)
        kind = Notebook7Page if isinstance(server, JupyterNotebook) else NotebookPage
        page = kind(server, browser.new_page(height=height), name)
        opened.append((page, server))
        page.open()
        _wait_extension(page)
        return page

    yield open_notebook
    for page, server in opened:
        close_pages([page], request, server)


def _wait_extension(nb: NotebookPage) -> None:
    """The extension is active once its commands are registered."""
    nb.page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand("
        "'fuxi:insert-agent-cell')", timeout=60 * MS)


def _cells(nb: NotebookPage) -> list[dict[str, Any]]:
    """The live notebook's cells (id, source, metadata.fuxi), from the app's model."""
    return list(nb.page.evaluate("""() => {
        const app = window.jupyterapp;
        const shell = app.shell;
        const widget = shell.currentWidget;
        const cells = widget.content.model.cells;
        const found = [];
        for (let i = 0; i < cells.length; i++) {
            const cell = cells.get(i);
            found.push({id: cell.id, source: cell.sharedModel.getSource(),
                        fuxi: cell.getMetadata('fuxi') ?? null});
        }
        return found;
    }"""))


def _command(nb: NotebookPage, label: str) -> None:
    """Run a command from the palette, as a person does: Ctrl+Shift+C, type, Enter."""
    nb.page.keyboard.press("Escape")
    nb.page.keyboard.press("Control+Shift+c")
    palette = nb.page.locator(".lm-CommandPalette-input").first
    palette.wait_for(timeout=10 * MS)
    palette.fill(label)
    item = nb.page.locator(".lm-CommandPalette-item", has_text=label).first
    item.wait_for(timeout=10 * MS)
    item.click()


def _run_agent(nb: NotebookPage, index: int) -> None:
    """Run agent cell `index` and wait until its run is done."""
    nb.run_cell(index)
    nb.wait_output(index, DONE)


def _request_text(api: FakeMessagesServer) -> str:
    return json.dumps(api.requests[-1]["messages"], ensure_ascii=False)


# -- 7: the Settings Editor ---------------------------------------------------------------

def _settings_form(page: Any) -> None:
    """The Settings Editor shows Fuxi's schema: its title, fields and descriptions."""
    page.locator(".jp-PluginList").get_by_text("Fuxi", exact=True).first.click()
    for label in ("Default model", "Permission mode", "Budget per cell (USD)", "Effort",
                  "Replay of recorded cells"):
        page.get_by_text(label, exact=True).first.wait_for(timeout=20 * MS)
    page.get_by_text("a default set here may make the agent ask more").first.wait_for(
        timeout=10 * MS)


def _set_model(page: Any, settings_dir: Path, model: str) -> None:
    """Type the default model into the form; it is saved (the file is evidence)."""
    field = page.locator("[id='jp-SettingsEditor-fuxi-notebook:plugin_model']")
    field.fill(model)
    field.press("Tab")
    target = settings_dir / "fuxi-notebook" / "plugin.jupyterlab-settings"
    deadline = time.monotonic() + 20
    while not (target.exists() and model in target.read_text()):
        assert time.monotonic() < deadline, "the Settings Editor did not save the setting"
        page.wait_for_timeout(100)


def test_jupyterlab_settings_editor_changes_the_next_agent_cells_model(
        lab: JupyterLab, open_nb, api: FakeMessagesServer):
    api.add(Turn([text("First answer.")]), Turn([text("Second answer.")]))
    nb = open_nb(lab, [LOAD, "%%fuxi\nhello", "%%fuxi\nand again"])
    nb.run_and_wait(0)
    _run_agent(nb, 1)
    assert api.requests[-1]["model"] == "claude-sonnet-5-5"  # FUXI_MODEL, nothing set
    nb.page.evaluate("() => window.jupyterapp.commands.execute('settingeditor:open', "
                     "{query: 'Fuxi'})")
    _settings_form(nb.page)
    _set_model(nb.page, lab.state / "settings", "claude-opus-5")
    docs_screenshot(nb.page, "settings-editor.png")
    nb.page.locator(".lm-TabBar-tab", has_text=nb.name).first.click()  # back to the notebook
    nb.run_cell(2)  # the kernel was told as the setting changed (the comm is open)
    nb.wait_output(2, DONE)
    assert api.requests[-1]["model"] == "claude-opus-5"


def test_notebook7_settings_editor_sets_the_default_a_notebook_opened_after_uses(
        notebook7: JupyterLab, open_nb, browser: ChromiumBrowser, api: FakeMessagesServer):
    tree = browser.new_page()
    try:
        tree.goto(f"{notebook7.url}/tree")
        tree.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                               ".hasCommand('settingeditor:open')", timeout=60 * MS)
        tree.evaluate("() => window.jupyterapp.commands.execute('settingeditor:open', "
                      "{query: 'Fuxi'})")
        _settings_form(tree)
        _set_model(tree, notebook7.state / "settings", "claude-opus-4-8")
    finally:
        tree.close()
    api.add(Turn([text("Answer.")]))
    nb = open_nb(notebook7, [LOAD, "%%fuxi\nhello"])
    nb.run_and_wait(0)
    _run_agent(nb, 1)
    assert api.requests[-1]["model"] == "claude-opus-4-8"


# -- 8: commands --------------------------------------------------------------------------

FUXI_COMMANDS = ("Fuxi: insert an agent cell below", "Fuxi: replay this cell",
                 "Fuxi: undo the last agent cell", "Fuxi: show permissions")


def test_the_fuxi_commands_are_in_the_palette_and_the_cell_menu(frontend: JupyterLab,
                                                                open_nb):
    nb = open_nb(frontend, [LOAD, "x = 1"])
    nb.run_and_wait(0)
    nb.page.keyboard.press("Escape")
    nb.page.keyboard.press("Control+Shift+c")
    palette = nb.page.locator(".lm-CommandPalette-input").first
    palette.wait_for(timeout=10 * MS)
    palette.fill("Fuxi:")
    for label in FUXI_COMMANDS:
        nb.page.locator(".lm-CommandPalette-item", has_text=label).first.wait_for(
            timeout=10 * MS)
    docs_screenshot(nb.page, f"palette-{'nb7' if 'notebooks' in nb.page.url else 'lab'}.png")
    nb.page.keyboard.press("Escape")
    nb.cell(1).locator(".jp-InputPrompt").first.click(button="right")
    menu = nb.page.locator(".lm-Menu").last
    for label in FUXI_COMMANDS:
        menu.get_by_text(label, exact=True).wait_for(timeout=10 * MS)
    nb.page.keyboard.press("Escape")
    _command(nb, "Fuxi: show permissions")  # runs %fuxi permissions, shown in a dialog
    dialog = nb.page.locator(".jp-Dialog")
    dialog.get_by_text(re.compile("permission mode", re.I)).first.wait_for(timeout=30 * MS)
    assert "Traceback" not in dialog.inner_text()
    dialog.locator(".jp-Dialog-button", has_text="Close").click()


# -- 9: the cell you point at -------------------------------------------------------------

def test_an_agent_cell_inserted_for_the_selected_cell_sends_it_with_the_prompt(
        frontend: JupyterLab, open_nb, api: FakeMessagesServer):
    api.add(Turn([text("It prints the number of rows.")]))
    nb = open_nb(frontend, [LOAD, "rows = [1, 2]\nprint('rows:', len(rows))"])
    nb.run_and_wait(0)
    nb.run_and_wait(1)
    nb.wait_output(1, "rows: 2")
    nb.cell(1).locator(".jp-InputPrompt").first.click()  # select it (command mode)
    nb.page.keyboard.press("Shift+F")  # Fuxi: insert an agent cell below
    nb.page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell')"
                              ".length === 3", timeout=10 * MS)
    line = nb.cell(2).locator(".fuxi-cell-line")
    line.wait_for(timeout=10 * MS)
    assert line.inner_text() == "about cell 2 “rows = [1, 2]”"
    cells = _cells(nb)
    assert cells[2]["source"] == "%%fuxi\n" and cells[2]["fuxi"] == {"about": [cells[1]["id"]]}
    nb.page.keyboard.type("explain this cell")  # the editor has the focus, on line 2
    docs_screenshot(nb.page, f"about-{'nb7' if 'notebooks' in nb.page.url else 'lab'}.png")
    nb.page.keyboard.press("Control+Enter")
    nb.wait_output(2, DONE)
    sent = _request_text(api)
    assert "Cells the user points at" in sent and "print('rows:', len(rows))" in sent
    assert "stream: rows: 2" in sent
    assert "explain this cell" in sent


# -- 10: where each cell came from --------------------------------------------------------

def test_cells_the_agent_made_show_a_badge_and_carry_their_provenance(
        frontend: JupyterLab, open_nb, api: FakeMessagesServer):
    nb = open_nb(frontend, [LOAD, "total = 1 + 1",
                            "%%fuxi --permission-mode acceptEdits\nfix the total and show it"])
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("EditCell", {"cell_id": target, "old_string": "1 + 1",
                                        "new_string": "40 + 2"})]),
            Turn([tool_use("InsertCell", {"code": "print(total)", "after_cell_id": target})]),
            Turn([text("Fixed the total and added a cell that prints it.")]))
    nb.run_and_wait(0)
    nb.run_cell(2)
    nb.wait_output(3, DONE)  # the inserted cell moved the agent cell down by one
    badges = nb.page.locator(".jp-Notebook .fuxi-provenance")
    badges.nth(1).wait_for(timeout=10 * MS)
    assert badges.count() == 2
    tip = nb.cell(1).locator(".fuxi-provenance").get_attribute("title") or ""
    assert tip.startswith("Edited by agent cell 4 “fix the total and show it” · EditCell")
    inserted = nb.cell(2).locator(".fuxi-provenance").get_attribute("title") or ""
    assert inserted.startswith("Inserted by agent cell 4 “fix the total and show it”")
    nb.cell(2).locator(".fuxi-provenance").hover()
    docs_screenshot(nb.page, f"provenance-{'nb7' if 'notebooks' in nb.page.url else 'lab'}.png")
    nb.save()
    saved = nbformat.read(str(nb.path), as_version=4)
    assert [e["tool"] for e in saved.cells[1].metadata["fuxi"]["provenance"]] == ["EditCell"]
    assert [e["tool"] for e in saved.cells[2].metadata["fuxi"]["provenance"]] == [
        "InsertCell"]
    _command(nb, "Fuxi: undo the last agent cell")  # undone: the marks go with the changes
    dialog = nb.page.locator(".jp-Dialog")
    dialog.get_by_text(re.compile("undid cell")).first.wait_for(timeout=30 * MS)
    dialog.locator(".jp-Dialog-button", has_text="Close").click()
    nb.page.wait_for_function("() => document.querySelectorAll('.jp-Notebook "
                              ".fuxi-provenance').length === 0", timeout=20 * MS)
    cells = _cells(nb)
    assert cells[1]["source"] == "total = 1 + 1" and cells[1]["fuxi"] is None
    assert len(cells) == 3



def test_save_as_keeps_the_provenance_and_its_badge(lab: JupyterLab, open_nb):
    """A cell the agent inserted, saved under another name (File → Save As…): the copy
    keeps the provenance, and the copy's tab shows the badge."""
    entry = {"agent_cell": "agent", "session": "3f2a1b9c-0000", "tool": "InsertCell",
             "at": "2026-12-06T09:30:00Z"}
    nb = open_nb(lab, [LOAD, "print(total)"])
    nb.page.evaluate("""(entry) => window.jupyterapp.shell.currentWidget.content.model
        .cells.get(1).setMetadata('fuxi', {provenance: [entry]})""", entry)
    nb.cell(1).locator(".fuxi-provenance").wait_for(timeout=10 * MS)
    copy = lab.root / f"copy-{nb.path.name}"
    nb.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save-as')")
    dialog = nb.page.locator(".jp-Dialog")
    dialog.locator("input").fill(copy.name)
    dialog.locator(".jp-Dialog-button", has_text=re.compile("^Save$")).click()
    deadline = time.monotonic() + 20
    while not copy.exists():
        assert time.monotonic() < deadline, "Save As wrote no file"
        nb.page.wait_for_timeout(100)
    assert nbformat.read(str(copy), as_version=4).cells[1].metadata["fuxi"] == {
        "provenance": [entry]}
    nb.cell(1).locator(".fuxi-provenance").wait_for(timeout=10 * MS)  # the copy's tab

# -- 3: the line under a cell that continues a conversation ------------------------------

def test_the_line_under_a_cell_says_which_conversation_it_continues_after_a_reload(
        frontend: JupyterLab, open_nb, api: FakeMessagesServer):
    api.add(Turn([text("Loaded.")]), Turn([text("Plotted.")]))
    nb = open_nb(frontend, [LOAD, "%%fuxi\nload the sales data", "%%fuxi\nnow plot it"])
    nb.run_and_wait(0)
    _run_agent(nb, 1)
    _run_agent(nb, 2)
    line = nb.cell(2).locator(".fuxi-cell-line")
    line.wait_for(timeout=10 * MS)
    said = "↳ continues the conversation of cell 2 “load the sales data”"
    assert line.inner_text() == said
    assert nb.cell(1).locator(".fuxi-cell-line").count() == 0  # the first: no line
    docs_screenshot(nb.page, f"continues-{'nb7' if 'notebooks' in nb.page.url else 'lab'}.png")
    nb.save()
    nb.reload()
    _wait_extension(nb)
    line = nb.cell(2).locator(".fuxi-cell-line")
    line.wait_for(timeout=20 * MS)
    assert line.inner_text() == said  # drawn from the saved metadata
    saved = nbformat.read(str(nb.path), as_version=4)
    assert all("fuxi-cell-line" not in json.dumps(c.outputs) for c in saved.cells)


# -- replay this cell ---------------------------------------------------------------------

def test_replay_this_cell_replays_the_record_in_a_new_kernel(lab: JupyterLab, open_nb,
                                                            api: FakeMessagesServer):
    from playwright.sync_api import expect

    api.add(Turn([text("Hi there.")]))
    nb = open_nb(lab, [LOAD, "%%fuxi\nsay hi"])
    nb.run_and_wait(0)
    _run_agent(nb, 1)
    asked = len(api.requests)
    nb.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    nb.page.locator(".lm-Menu-itemLabel",
                    has_text=re.compile(r"^Restart Kernel and Clear Outputs")).click()
    nb.page.locator(".jp-Dialog-button", has_text=re.compile(r"^Restart$")).click()
    expect_empty = "() => document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')" \
                   ".length === 0"
    nb.page.wait_for_function(expect_empty, timeout=60 * MS)
    nb._wait_ready(120)
    nb.run_and_wait(0, timeout=120)
    nb.cell(1).locator(".jp-InputPrompt").first.click()
    _command(nb, "Fuxi: replay this cell")
    nb.click(1, "Replay", timeout=60)  # a record's calls are code: asked once per kernel
    # the cell's own output area (the card, until it goes, holds one of its own)
    expect(nb.cell(1).locator(".jp-Cell-outputArea")).to_contain_text("Replayed",
                                                                      timeout=60 * MS)
    assert "Hi there." in nb.output_text(1)
    assert len(api.requests) == asked  # no model was asked


# -- 11: undo after a restart, in Notebook 7 (JupyterLab: test_undo_restart_lab.py) --------

def test_notebook7_undo_after_a_restart_removes_the_file_and_the_inserted_cell(
        notebook7: JupyterLab, open_nb, api: FakeMessagesServer):
    from .test_undo_restart_lab import KERNEL_START, _restart

    nb = open_nb(notebook7, [LOAD, "import os\nprint('kernel', os.getpid())",
                             "%%fuxi --permission-mode acceptEdits --allowed-tools Write\n"
                             "write notes", "%fuxi undo"])
    written = notebook7.root / "nb7-restart-notes.md"
    target = nbformat.read(str(nb.path), as_version=4).cells[1].id
    api.add(Turn([tool_use("Write", {"file_path": written.name, "content": "# notes\n"})]),
            Turn([tool_use("InsertCell", {"code": "## Notes written", "cell_type": "markdown",
                                          "after_cell_id": target})]),
            Turn([text("Wrote the notes.")]))
    nb.run_and_wait(0)
    nb.run_and_wait(1)
    pid = int(re.search(r"kernel (\d+)", nb.output_text(1)).group(1))  # type: ignore[union-attr]
    nb.run_cell(2)
    nb.wait_output(3, DONE, timeout=KERNEL_START)  # below the inserted cell
    assert written.exists() and [c["source"] for c in _cells(nb)][2] == "## Notes written"
    _restart(nb, pid)
    nb.run_and_wait(0, timeout=KERNEL_START)
    nb.run_cell(4)  # `%fuxi undo` in the new kernel
    nb.page.wait_for_function(
        "() => !Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell .cm-content'))"
        ".some(e => e.innerText.includes('## Notes written'))", timeout=30 * MS)
    nb.wait_output(3, "2 restored")
    assert not written.exists()
