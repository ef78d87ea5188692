"""Sessions the notebook never loses, in a real JupyterLab with fuxi's extension installed
(as `pip install -e` leaves it): saving while the replay card waits, Clear Outputs + save +
restart + Run All, a new unsaved cell after a restart, and the status bar while a card
waits. The recorded quickstart runs without a key (its cells replay); the other notebook
talks to the fake Messages API."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from fuxi_notebook._internal.sessions.notebook_file import read_notebook
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .conftest import close_pages, running_lab
from .test_extension import extension_installed, menu, notebook_of
from .test_replay_lab import KERNEL_START, OVERVIEW, PLOT, UNSET, _wait_all_done, _wait_output

if TYPE_CHECKING:
    from .lab import ChromiumBrowser, JupyterLab, NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
MS = 1000


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    reason = extension_installed()
    if reason is not None:
        pytest.fail(reason)


@pytest.fixture(scope="module")
def api() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as server:
        yield server


@pytest.fixture(scope="module")
def keyless(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[JupyterLab]:
    """A JupyterLab whose kernels have no API key (recorded cells replay)."""
    yield from running_lab(tmp_path_factory, "sessions-keyless", {
        "ANTHROPIC_BASE_URL": api.url, "FUXI_BLOCK_REAL_API": "1",
        "FUXI_STALL_TIMEOUT": "30"}, unset=UNSET)


@pytest.fixture(scope="module")
def keyed(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[JupyterLab]:
    """A JupyterLab whose kernels call the fake Messages API."""
    yield from running_lab(tmp_path_factory, "sessions-keyed", {
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5",
        "FUXI_STALL_TIMEOUT": "30"}, unset=("FUXI_NOTEBOOK", "FUXI_REPLAY"))


@pytest.fixture
def pages(browser: ChromiumBrowser, request: pytest.FixtureRequest
          ) -> Iterator[Callable[[JupyterLab, str], NotebookPage]]:
    from .lab import NotebookPage

    opened: list[tuple[NotebookPage, JupyterLab]] = []

    def open_page(lab: JupyterLab, name: str) -> NotebookPage:
        page = NotebookPage(lab, browser.new_page(height=1000), name)
        opened.append((page, lab))
        return page.open(timeout=KERNEL_START)

    yield open_page
    for page, lab in opened:
        close_pages([page], request, lab)


def _quickstart(lab: JupyterLab, folder: str) -> str:
    shutil.copytree(REPO / "notebooks", lab.root / folder,
                    ignore=lambda where, names: ["work"] if Path(where) == REPO / "notebooks"
                    else [])
    return f"{folder}/quickstart.ipynb"


def _records(path: Path) -> dict[str, str | None]:
    """cell id -> the prompt of its readable record (None: no record, or unreadable)."""
    return {cell.key: (cell.record.prompt if cell.record is not None else cell.problem)
            for cell in read_notebook(path).cells}


def _restart(nb: NotebookPage) -> None:
    """Kernel, Restart Kernel…, confirmed, and wait for the new kernel to be idle."""
    menu(nb, "Kernel", "Restart Kernel…")
    nb.page.locator(".jp-Dialog-button", has_text=re.compile(r"^Restart$")).click()
    nb._wait_ready(KERNEL_START)


def _kernel_status(nb: NotebookPage) -> str:
    """What the status bar says of the kernel ("Python 3 (ipykernel) | Idle")."""
    item = nb.page.locator(".jp-StatusBar-Widget .jp-StatusBar-TextItem",
                           has_text=re.compile(r"\| (Idle|Busy)")).first
    return item.inner_text().rsplit("|", 1)[-1].strip().lower()


def test_saving_while_the_replay_card_waits_keeps_every_record(keyless, pages, api):
    name = _quickstart(keyless, "while-waiting")
    before = _records(keyless.root / name)
    asked = len(api.requests)
    assert all(isinstance(p, str) and before[k] for k, p in before.items())
    nb = pages(keyless, name)
    nb.run_all()
    nb.wait_buttons(OVERVIEW, "Replay", "Cancel", timeout=KERNEL_START)
    assert nb.is_running(OVERVIEW)
    deadline = time.monotonic() + 30  # the kernel stays "busy" while the card waits
    while _kernel_status(nb) != "busy":
        assert time.monotonic() < deadline, _kernel_status(nb)
        time.sleep(0.2)
    nb.save()  # what autosave would do meanwhile
    assert _records(nb.path) == before
    nb.click(OVERVIEW, "Cancel")
    _wait_output(nb, OVERVIEW, "replay cancelled")
    nb.wait_done(OVERVIEW)
    nb.save()
    assert _records(nb.path) == before
    assert len(api.requests) == asked


def test_clear_outputs_save_restart_run_all_replays(keyless, pages, api):
    name = _quickstart(keyless, "cleared")
    before = _records(keyless.root / name)
    asked = len(api.requests)
    nb = pages(keyless, name)
    menu(nb, "Edit", "Clear Outputs of All Cells")
    nb.save()
    saved = nbformat.read(nb.path, as_version=4)
    assert all(not cell.get("outputs") for cell in saved.cells if cell.cell_type == "code")
    assert _records(nb.path) == before  # kept in the cells' metadata
    _restart(nb)
    nb.run_all()
    nb.wait_buttons(OVERVIEW, "Replay", "Cancel", timeout=KERNEL_START)
    nb.click(OVERVIEW, "Replay")
    _wait_all_done(nb, timeout=180)
    _wait_output(nb, OVERVIEW, "48 rows")
    _wait_output(nb, PLOT, "July 2025 is odd")
    assert "no recorded run" not in nb.page_text()
    nb.save()
    assert _records(nb.path) == before
    assert len(api.requests) == asked


def test_a_new_unsaved_cell_after_a_restart_continues_the_conversation(keyed, pages, api):
    api.add(Turn([text("Noted: the code word is kiwi.")]), Turn([text("kiwi")]))
    first = "%%fuxi\nRemember this code word: kiwi."
    notebook = notebook_of(new_code_cell("%load_ext fuxi_notebook", id="load"),
                           new_code_cell(first, id="tell"))
    nbformat.write(notebook, keyed.root / "code-word.ipynb")
    nb = pages(keyed, "code-word.ipynb")
    nb.run_and_wait(0)
    nb.run_and_wait(1, timeout=90)
    nb.save()
    _restart(nb)
    nb.run_and_wait(0)
    nb.cell(1).locator(".jp-InputPrompt").first.click()
    nb.page.keyboard.press("b")  # a new cell below, never saved
    nb.page.keyboard.press("Enter")
    nb.page.keyboard.insert_text("%%fuxi\nWhat is the code word?")
    nb.page.keyboard.press("Escape")
    nb.run_and_wait(2, timeout=90)
    asked = api.requests[-1]["messages"]
    assert [m["role"] for m in asked] == ["user", "assistant", "user"]
    assert "kiwi" in json.dumps(asked[0])
    nb.save()
    assert read_notebook(nb.path).cells[-1].record.parent == "tell"


def test_a_card_waiting_keeps_the_kernel_busy(keyed, pages, api):
    api.add(Turn([tool_use("Bash", {"command": "touch approved"})]), Turn([text("done")]))
    notebook = notebook_of(new_code_cell("%load_ext fuxi_notebook", id="load"),
                           new_code_cell("%%fuxi\nmake the file", id="ask"))
    nbformat.write(notebook, keyed.root / "busy.ipynb")
    nb = pages(keyed, "busy.ipynb")
    nb.run_and_wait(0)
    nb.run_cell(1)
    nb.wait_buttons(1, "Allow", "Deny", timeout=90)
    nb.outputs(1).get_by_placeholder("Reason for denying (optional)").fill("typing")
    deadline = time.monotonic() + 10  # a state change went over a subshell meanwhile
    while _kernel_status(nb) != "busy":
        assert time.monotonic() < deadline, _kernel_status(nb)
        time.sleep(0.2)
    nb.click(1, "Allow")
    nb.wait_done(1, timeout=60)
    assert (keyed.root / "approved").exists()


@pytest.fixture(scope="module")
def notebook7(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[JupyterLab]:
    """Notebook 7 (`jupyter notebook`) whose kernels have no API key."""
    import importlib.util

    if importlib.util.find_spec("notebook") is None:
        pytest.fail("Notebook 7 is not installed (pip install -e '.[test]' installs it)")
    from .lab import JupyterNotebook

    root = tmp_path_factory.mktemp("sessions-nb7-root")
    state = tmp_path_factory.mktemp("sessions-nb7-state")
    with pytest.MonkeyPatch.context() as patch:
        for variable in UNSET:
            patch.delenv(variable, raising=False)
        server = JupyterNotebook(root, state, env={
            "ANTHROPIC_BASE_URL": api.url, "FUXI_BLOCK_REAL_API": "1",
            "FUXI_STALL_TIMEOUT": "30"})
    try:
        yield server.start()
    finally:
        server.stop()


def test_notebook7_clear_outputs_save_restart_run_all_replays(notebook7, browser, api,
                                                              request):
    from .lab import Notebook7Page

    name = _quickstart(notebook7, "nb7-cleared")
    before = _records(notebook7.root / name)
    asked = len(api.requests)  # the module's fake API also serves the keyed tests
    nb = Notebook7Page(notebook7, browser.new_page(height=1000), name)
    try:
        nb.open(timeout=KERNEL_START)
        menu(nb, "Edit", "Clear Outputs of All Cells")
        nb.save()
        assert _records(nb.path) == before
        _restart(nb)
        nb.run_all()
        nb.wait_buttons(OVERVIEW, "Replay", "Cancel", timeout=KERNEL_START)
        nb.click(OVERVIEW, "Replay")
        _wait_output(nb, PLOT, "July 2025 is odd", timeout=180)
        nb.save()
        assert _records(nb.path) == before
        assert len(api.requests) == asked
    finally:
        close_pages([nb], request, notebook7)


def test_a_real_card_off_screen_notifies_and_show_brings_it_back(keyed, pages, api):
    api.add(Turn([tool_use("Bash", {"command": "touch shown"})]), Turn([text("done")]))
    filler = "\n".join(f"line_{n} = {n}" for n in range(25))
    cells = [new_code_cell("%load_ext fuxi_notebook", id="load"),
             *[new_code_cell(filler, id=f"f{n}") for n in range(8)],
             new_code_cell("%%fuxi\nmake the file", id="ask")]
    nbformat.write(notebook_of(*cells), keyed.root / "off-screen.ipynb")
    nb = pages(keyed, "off-screen.ipynb")
    last = len(cells) - 1
    toast = nb.page.locator(".Toastify__toast", has_text="fuxi: an approval waits in").first
    nb.run_all()
    nb.wait_buttons(last, "Allow", "Deny", timeout=90)
    nb.cell(0).scroll_into_view_if_needed()  # the user reads the top meanwhile
    toast.wait_for(timeout=15 * MS)
    toast.get_by_role("button", name="Show").click()
    expect_visible = nb.button(last, "Allow")
    expect_visible.wait_for(timeout=15 * MS)
    toast.wait_for(state="detached", timeout=15 * MS)
    nb.click(last, "Allow")
    nb.wait_done(last, timeout=60)
    assert (keyed.root / "shown").exists()
