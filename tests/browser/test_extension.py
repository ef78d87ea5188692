"""The frontend extension (labextension/, shipped in the wheel) in a real browser.

JupyterLab (and Notebook 7) run with the extension installed from this checkout, the way
`pip install -e` leaves it. Each test waits for evidence (a file's content, the app's own
state through `window.jupyterapp`, a DOM element), never for a fixed time, and each fails
without the extension: nothing else mirrors records, answers `fuxi.notebook` or switches
an editor to markdown.
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys
import time
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from fuxi_notebook.testing import FakeMessagesServer

from ..missing import skip_or_fail
from .conftest import close_pages

if TYPE_CHECKING:
    from .lab import ChromiumBrowser, JupyterLab, NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

MIME = "application/vnd.fuxi.session.v1+json"
EXTENSION = "fuxi-notebook"
PLUGIN = "fuxi-notebook:plugin"
MARKDOWN = "text/x-ipythongfm"
PYTHON = "text/x-ipython"
RECORD = {"version": 1, "session_id": "s-1", "turns": [{"role": "user", "text": "hi"}]}
VOLATILE = {"cost_usd": 0.1}
MS = 1000
# what ipykernel reports (JupyterLab copies it into a notebook's metadata when it differs)
LANGUAGE_INFO = {"name": "python", "version": platform.python_version(),
                 "mimetype": "text/x-python", "codemirror_mode": {"name": "ipython", "version": 3},
                 "pygments_lexer": "ipython3", "nbconvert_exporter": "python",
                 "file_extension": ".py"}
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
# The first lines of every `window.jupyterapp` script: `panel`, the panel showing `name`.
PANEL = """
    const app = window.jupyterapp;
    const panel = app && Array.from(app.shell.widgets('main')).find(
        w => w.context && w.context.path === name && w.content && w.content.model);
"""


def record_cell(record: dict[str, Any] = RECORD) -> str:
    """A plain Python cell that shows a record output (no agent needed)."""
    return ("from IPython.display import display\n"
            f"display({{{MIME!r}: {record!r}, 'text/plain': 'fuxi record'}}, raw=True,\n"
            f"        metadata={{'fuxi': {VOLATILE!r}}})")


def extension_installed() -> str | None:
    """Why the extension cannot be tested here, or None."""
    found = Path(sys.prefix, "share", "jupyter", "labextensions", EXTENSION, "package.json")
    if not found.exists():
        return (f"the extension is not installed in {sys.prefix} "
                "(pip install -e . builds and installs it; it needs node/npm)")
    return None


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    reason = extension_installed()
    if reason is not None:
        pytest.fail(reason)  # a missing extension is a failure, not a skip


def _server(cls: type[JupyterLab], tmp_path_factory: pytest.TempPathFactory, name: str,
            api: FakeMessagesServer) -> Iterator[JupyterLab]:
    root = tmp_path_factory.mktemp(f"{name}-root")
    state = tmp_path_factory.mktemp(f"{name}-state")
    server = cls(root, state, env={
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5"})
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """This module's JupyterLab: the conftest's, plus `window.jupyterapp`."""
    from .lab import ExposedJupyterLab

    yield from _server(ExposedJupyterLab, tmp_path_factory, "ext-lab", api)


@pytest.fixture
def open_file(lab: JupyterLab, browser: ChromiumBrowser, request: pytest.FixtureRequest,
              ) -> Iterator[Callable[[nbformat.NotebookNode], NotebookPage]]:
    """Writes the given notebook under the test's name and opens it in JupyterLab."""
    from .lab import NotebookPage

    opened: list[NotebookPage] = []

    def open_notebook(notebook: nbformat.NotebookNode) -> NotebookPage:
        name = f"{request.node.name}.ipynb".replace("[", "-").replace("]", "")
        nbformat.write(notebook, str(lab.root / name))
        page = NotebookPage(lab, browser.new_page(), name)
        opened.append(page)
        return page.open()

    open_notebook.root = lab.root  # type: ignore[attr-defined]
    yield open_notebook
    close_pages(opened, request, lab)


def notebook_of(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A notebook as JupyterLab saves it for this kernel (so opening it changes nothing)."""
    return new_notebook(cells=list(cells),
                        metadata={"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO})


# -- reading the app's state ---------------------------------------------------------------

def app_value(nb: NotebookPage, body: str, arg: Any = None) -> Any:
    """Evaluate `body` (a function body, with `panel`, `name` and `arg`) in the page."""
    script = f"([name, arg]) => {{ {PANEL} {body} }}"
    return nb.page.evaluate(script, [nb.name, arg])


def wait_app(nb: NotebookPage, condition: str, arg: Any = None, timeout: float = 30) -> None:
    """Wait until `condition` (an expression, with `panel`, `name`, `arg`) holds."""
    script = f"([name, arg]) => {{ {PANEL} return !!panel && !!({condition}); }}"
    nb.page.wait_for_function(script, arg=[nb.name, arg], timeout=timeout * MS)


def wait_extension(nb: NotebookPage) -> None:
    """The extension's plugin is active in the page."""
    nb.page.wait_for_function(
        f"() => window.jupyterapp && window.jupyterapp.isPluginActivated({PLUGIN!r})",
        timeout=30 * MS)


def cell_metadata(nb: NotebookPage, index: int) -> Any:
    return app_value(nb, "const v = panel.content.model.cells.get(arg).getMetadata('fuxi');"
                         " return v === undefined ? null : v;", index)


def is_dirty(nb: NotebookPage) -> bool:
    return bool(app_value(nb, "return panel.context.model.dirty;"))


def saved(nb: NotebookPage) -> nbformat.NotebookNode:
    return nbformat.read(str(nb.path), as_version=4)


def menu(nb: NotebookPage, top: str, item: str) -> None:
    """A menu command, as a person picks it (menu bar, then the item)."""
    nb.page.locator(".lm-MenuBar-itemLabel", has_text=top).first.click()
    nb.page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def kernel_json(nb: NotebookPage, filename: str, timeout: float = 30) -> Any:
    """What a cell wrote to `filename` (JSON) in the notebook's folder, once it is all
    there: the cell's `write_text` truncates, then writes, so a file that exists may not
    be whole yet (a JSON document parses only once its last character is written)."""
    path = nb.lab.root / filename
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ValueError):
            return json.loads(path.read_text())
        if time.monotonic() > deadline:
            raise TimeoutError(f"{filename} was never written whole")
        time.sleep(0.1)


# The colour the editor of cell `i` draws `text` in (the innermost element that holds it).
COLOR = """(i, text) => {
    const cell = document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[i];
    const holders = cell ? [...cell.querySelectorAll('.cm-content .cm-line, .cm-line *')]
        .filter(e => e.textContent.includes(text)) : [];
    const inner = holders.filter(e => !holders.some(o => o !== e && e.contains(o)));
    return inner.length ? getComputedStyle(inner[0]).color : null;
}"""
IN_VIEW = """(i) => {
    const cell = document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[i];
    const view = cell && cell.closest('.jp-WindowedPanel-outer');
    if (!cell || !view) return false;
    const a = cell.getBoundingClientRect(), b = view.getBoundingClientRect();
    return a.height > 0 && a.bottom > b.top && a.top < b.bottom;
}"""


def in_view(nb: NotebookPage, index: int) -> bool:
    return bool(nb.page.evaluate(f"([i]) => ({IN_VIEW})(i)", [index]))


def wait_highlighted_apart(nb: NotebookPage, a: tuple[int, str], b: tuple[int, str]) -> None:
    """Wait until the editors draw text `a` and text `b` in different colours."""
    nb.page.wait_for_function(
        f"([a, b]) => {{ const c = {COLOR}; const x = c(...a), y = c(...b);"
        " return x !== null && y !== null && x !== y; }",
        arg=[list(a), list(b)], timeout=15 * MS)


def replace_source(nb: NotebookPage, index: int, source: str) -> None:
    """Type `source` over cell `index`'s source, as a person does (not saved)."""
    nb.cell(index).locator(".cm-content").click()
    nb.page.keyboard.press("Control+a")
    nb.page.keyboard.insert_text(source)


# -- (a), (b): the record is mirrored into metadata and survives Clear Outputs ---------------

def test_record_output_is_mirrored_and_survives_clear_outputs(notebook):
    nb = notebook([record_cell(), "x = 1"])
    wait_extension(nb)
    assert cell_metadata(nb, 0) is None
    nb.run_and_wait(0)
    nb.wait_output(0, "fuxi record")
    wait_app(nb, "panel.content.model.cells.get(0).getMetadata('fuxi')")
    nb.save()
    cell = saved(nb).cells[0]
    assert cell.metadata["fuxi"] == {"record": RECORD, "volatile": VOLATILE}
    assert MIME in cell.outputs[0]["data"]

    # (b) Edit > Clear Outputs of All Cells, save: the outputs go, the record stays
    menu(nb, "Edit", "Clear Outputs of All Cells")
    wait_app(nb, "panel.content.model.cells.get(0).outputs.length === 0")
    nb.save()
    cell = saved(nb).cells[0]
    assert cell.outputs == []
    assert cell.metadata["fuxi"] == {"record": RECORD, "volatile": VOLATILE}

    # a re-run clears the outputs first and shows no record: the record stays
    replace_source(nb, 0, "print('no record this time')")
    nb.run_and_wait(0)
    nb.wait_output(0, "no record this time")
    nb.save()
    cell = saved(nb).cells[0]
    assert "no record" in cell.outputs[0]["text"]
    assert cell.metadata["fuxi"] == {"record": RECORD, "volatile": VOLATILE}

    # a re-run that shows a newer record: it replaces the old one
    newer = {**RECORD, "turns": [*RECORD["turns"], {"role": "assistant", "text": "hello"}]}
    replace_source(nb, 0, record_cell(newer))
    nb.run_and_wait(0)
    wait_app(nb, "JSON.stringify(panel.content.model.cells.get(0).getMetadata('fuxi').record)"
                 " === JSON.stringify(arg)", newer)
    nb.save()
    assert saved(nb).cells[0].metadata["fuxi"] == {"record": newer, "volatile": VOLATILE}


# -- (c): opening a notebook changes nothing --------------------------------------------------

def test_opening_a_notebook_with_records_changes_nothing(open_file):
    record_output = new_output("display_data", data={MIME: RECORD, "text/plain": "fuxi record"},
                               metadata={"fuxi": VOLATILE})
    mirrored = new_code_cell(record_cell(), outputs=[record_output], execution_count=1,
                             metadata={"fuxi": {"record": RECORD, "volatile": VOLATILE}})
    # an older file: a record output whose metadata was never mirrored (opening adds nothing)
    unmirrored = new_code_cell(record_cell(), outputs=[record_output], execution_count=2)
    fuxi = new_code_cell("%%fuxi\nsummarise the table")
    nb = open_file(notebook_of(mirrored, unmirrored, fuxi))
    before = nb.path.read_bytes()
    wait_extension(nb)
    # evidence that the extension has followed this notebook's cells: the %%fuxi editor
    wait_app(nb, "panel.content.model.cells.get(2).mimeType === arg", MARKDOWN)
    nb.wait_output(0, "fuxi record")
    assert not is_dirty(nb)
    assert nb.page.locator(".jp-mod-current.jp-mod-dirty").count() == 0
    assert cell_metadata(nb, 1) is None
    assert nb.path.read_bytes() == before


# -- (d): the comm answers with the live notebook ---------------------------------------------

COMM_CELL = """\
import asyncio, json, pathlib
import comm

async def until(check):
    for _ in range(600):  # at most 30 s; the loop ends as soon as the answer is there
        if check():
            return
        await asyncio.sleep(0.05)

other, absolute, replies = [], [], []
elsewhere = comm.create_comm(target_name="fuxi.notebook",
                             data={"version": 1, "path": "elsewhere.ipynb"})
elsewhere.on_msg(lambda msg: other.append(msg["content"]["data"]))
# what JupyterLab gives the kernel as JPY_SESSION_NAME: the absolute path
full = comm.create_comm(target_name="fuxi.notebook",
                        data={"version": 1, "path": str(pathlib.Path(NAME).resolve())})
full.on_msg(lambda msg: absolute.append(msg["content"]["data"]))
c = comm.create_comm(target_name="fuxi.notebook", data={"version": 1, "path": "/" + NAME})
c.on_msg(lambda msg: replies.append(msg["content"]["data"]))
await until(lambda: replies and absolute)
for junk in ("junk", [1, 2], {"request": "notebook"}, {"request": "notebook", "id": "1"},
             {"request": "later-version", "id": 7}, {"event": "waiting"}, {"event": "new"}):
    c.send(junk)
c.send({"request": "notebook", "id": 1})
await until(lambda: any(isinstance(r, dict) and r.get("id") == 1 for r in replies))
pathlib.Path(NAME + ".replies.json").write_text(
    json.dumps({"replies": replies, "other": other, "absolute": absolute}))
"""


def test_the_comm_answers_with_the_live_notebook(open_file, request: pytest.FixtureRequest):
    name = f"{request.node.name}.ipynb"
    cells = [new_code_cell("x = 1"), new_markdown_cell("# Notes"),
             new_code_cell(f"NAME = {name!r}\n" + COMM_CELL)]
    ids = [cell.id for cell in cells]
    nb = open_file(notebook_of(*cells))
    assert nb.name == name
    wait_extension(nb)
    replace_source(nb, 0, "x = 2  # not saved")  # the reply must show the browser's source
    nb.run_cell(2)
    answer = kernel_json(nb, f"{name}.replies.json")
    nb.wait_done(2)
    # of the malformed and unknown messages, only the request with an id is answered: with
    # an error, so that a kernel newer than the extension does not wait for an answer
    hello, unknown, reply = answer["replies"]
    assert unknown == {"id": 7, "result": {"error": 'unknown request "later-version"'}}
    assert hello == {"event": "hello", "version": 1, "app": "JupyterLab",
                     "app_version": version("jupyterlab"), "path": name,
                     "edits": 1,  # it changes cells when asked (the cell tools)
                     "settings": {}}  # the Settings Editor's Fuxi defaults: none set
    assert answer["absolute"] == [hello]  # the notebook named by its absolute path answers
    assert answer["other"] == []  # a comm for another notebook is not answered
    assert reply["id"] == 1
    document = reply["notebook"]
    assert document["path"] == name
    assert document["dirty"] is True
    assert document["running"] == [ids[2]]
    assert document["replay"] == []  # no "Fuxi: replay this cell" asked
    assert [(c["id"], c["cell_type"]) for c in document["cells"]] == [
        (ids[0], "code"), (ids[1], "markdown"), (ids[2], "code")]
    assert [c["source"] for c in document["cells"][:2]] == ["x = 2  # not saved", "# Notes"]
    assert all(c["fuxi"] is None and c["has_record_output"] is False
               for c in document["cells"])
    assert not [line for line in nb.console if "comm" in line.lower()], nb.console


SHARED_CELL = """\
import asyncio, json, pathlib
import comm

async def until(check):
    for _ in range(600):  # at most 30 s; the loop ends as soon as the answers are there
        if check():
            return
        await asyncio.sleep(0.05)

heard = {"anyone": [], "mine": [], "theirs": []}
comms = {}
for key, path in (("anyone", None), ("mine", MINE), ("theirs", THEIRS)):
    comms[key] = comm.create_comm(target_name="fuxi.notebook", data={"version": 1, "path": path})
    comms[key].on_msg(lambda msg, key=key: heard[key].append(msg["content"]["data"]))
# the page answers in the order the comms opened: once the last one is answered, an
# answer to an earlier one can no longer come
await until(lambda: heard["anyone"] and heard["mine"] and heard["theirs"])
pathlib.Path(MINE + ".heard.json").write_text(json.dumps(heard))
"""


def test_notebooks_sharing_a_kernel_answer_only_for_themselves(
        open_file, request: pytest.FixtureRequest):
    mine, theirs = f"{request.node.name}.ipynb", f"{request.node.name}-other.ipynb"
    nbformat.write(notebook_of(new_code_cell("z = 0")), str(open_file.root / theirs))
    nb = open_file(notebook_of(new_code_cell(f"MINE, THEIRS = {mine!r}, {theirs!r}\n"
                                             + SHARED_CELL)))
    wait_extension(nb)
    # the other notebook, in the same page, on this notebook's kernel
    nb.page.evaluate("""async ([mine, theirs]) => {
        const app = window.jupyterapp;
        const find = path => Array.from(app.shell.widgets('main')).find(
            w => w.context && w.context.path === path);
        const other = await app.commands.execute('docmanager:open', {path: theirs});
        await other.context.ready;
        await other.sessionContext.ready;
        const kernel = find(mine).sessionContext.session.kernel.id;
        await other.sessionContext.changeKernel({id: kernel});
        app.shell.activateById(find(mine).id);
    }""", [mine, theirs])
    wait_app(nb, "panel.isVisible")
    nb.run_cell(0)
    heard = kernel_json(nb, f"{mine}.heard.json", timeout=45)
    nb.wait_done(0)
    # In one page only the first connection to a kernel (this notebook's) handles comms:
    # the other notebook still answers the comm that names it, and only that one.
    assert [hello["path"] for hello in heard["mine"]] == [mine]
    assert [hello["path"] for hello in heard["theirs"]] == [theirs]
    assert [hello["path"] for hello in heard["anyone"]] == [mine]  # no path: the receiver


# -- (e): a wait the person cannot see: tab mark and notification -----------------------------

def test_a_wait_off_screen_marks_the_tab_and_notifies(open_file):
    filler = "\n".join(f"line_{n} = {n}" for n in range(25))
    last = new_code_cell("%%fuxi\ndelete the temporary files")
    cells = [new_code_cell("import comm\n"
                           "c = comm.create_comm(target_name='fuxi.notebook',"
                           " data={'version': 1, 'path': None})\n"
                           f"WAIT = {last.id!r}"),
             new_code_cell("c.send({'event': 'waiting', 'cell': WAIT, 'kind': 'approval'})"),
             new_code_cell("c.send({'event': 'answered', 'cell': WAIT})"),
             new_code_cell("c.close()"),
             *[new_code_cell(filler) for _ in range(8)], last]
    nb = open_file(notebook_of(*cells))
    wait_extension(nb)
    mark = nb.page.locator(".lm-TabBar-tab.fuxi-mod-waiting")
    toast = nb.page.locator(".Toastify__toast", has_text="fuxi: an approval waits in").first
    nb.run_and_wait(0)
    assert not in_view(nb, len(cells) - 1)
    nb.run_and_wait(1)
    toast.wait_for(timeout=15 * MS)
    assert f"waits in {nb.name}, cell {len(cells)}" in toast.inner_text()
    mark.wait_for(timeout=15 * MS)
    assert mark.count() == 1 and nb.name in mark.inner_text()

    # the browser tab hidden: its title gets the dot too, and loses it when shown again
    nb.page.evaluate("""() => {
        Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    nb.page.wait_for_function("() => document.title.startsWith('\u25cf ')", timeout=15 * MS)
    nb.page.evaluate("""() => {
        delete document.hidden;
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    nb.page.wait_for_function("() => !document.title.startsWith('\u25cf ')", timeout=15 * MS)

    # answered: the mark and the notification go
    nb.run_and_wait(2)
    mark.wait_for(state="detached", timeout=15 * MS)
    toast.wait_for(state="detached", timeout=15 * MS)

    # waiting again, then "Show": the cell scrolls into view, which ends mark and notification
    nb.run_and_wait(1)
    toast.wait_for(timeout=15 * MS)
    mark.wait_for(timeout=15 * MS)
    toast.get_by_role("button", name="Show").click()
    nb.page.wait_for_function(f"([i]) => ({IN_VIEW})(i)", arg=[len(cells) - 1],
                              timeout=15 * MS)
    mark.wait_for(state="detached", timeout=15 * MS)
    toast.wait_for(state="detached", timeout=15 * MS)

    # scrolled away again and waiting anew, then the comm closes: all of it goes as well
    nb.run_and_wait(1)  # running cell 1 scrolls the notebook back up
    assert not in_view(nb, len(cells) - 1)
    toast.wait_for(timeout=15 * MS)
    mark.wait_for(timeout=15 * MS)
    nb.run_and_wait(3)
    mark.wait_for(state="detached", timeout=15 * MS)
    toast.wait_for(state="detached", timeout=15 * MS)


# -- (f): %%fuxi cells are edited as markdown -------------------------------------------------

def test_fuxi_cells_are_highlighted_as_markdown(open_file):
    cells = [new_code_cell("%%fuxi --model opus\n# Heading\nsome **bold** words"),
             new_code_cell("# comment\nx = 1"), new_code_cell("y = 2")]
    nb = open_file(notebook_of(*cells))
    before = nb.path.read_bytes()
    wait_extension(nb)
    wait_app(nb, "panel.content.model.cells.get(0).mimeType === arg", MARKDOWN)
    assert app_value(nb, "return panel.content.model.cells.get(1).mimeType;") == PYTHON
    # what the person sees: in Python "# Heading" would be a comment; in markdown a heading
    wait_highlighted_apart(nb, (0, "Heading"), (1, "comment"))
    assert not is_dirty(nb)
    assert nb.page.locator(".jp-mod-current.jp-mod-dirty").count() == 0
    assert nb.path.read_bytes() == before

    # JupyterLab resets code cells' mime type (here: the kernel's language changes)
    reset = app_value(nb, "const model = panel.content.model;"
                          " const info = model.getMetadata('language_info') || {};"
                          " model.setMetadata('language_info', {...info, version: '3.99'});"
                          " return model.cells.get(0).mimeType;")
    assert reset == PYTHON  # JupyterLab did reset it ...
    wait_app(nb, "panel.content.model.cells.get(0).mimeType === arg", MARKDOWN)  # ... back
    wait_highlighted_apart(nb, (0, "Heading"), (1, "comment"))

    # the first line edited: no longer %%fuxi, back to Python; and the other way round
    nb.cell(0).locator(".cm-content").click()
    nb.page.keyboard.press("Control+Home")
    nb.page.keyboard.press("Shift+End")
    nb.page.keyboard.insert_text("z = 3")
    wait_app(nb, "panel.content.model.cells.get(0).mimeType === arg", PYTHON)
    nb.cell(2).locator(".cm-content").click()
    nb.page.keyboard.press("Control+Home")
    nb.page.keyboard.insert_text("\n%%fuxi\n")
    wait_app(nb, "panel.content.model.cells.get(2).mimeType === arg", MARKDOWN)


# -- Notebook 7 -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def notebook7(api: FakeMessagesServer,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    import importlib.util

    if importlib.util.find_spec("notebook") is None:
        skip_or_fail("Notebook 7 is not installed (pip install -e '.[test]' installs it)")
    from .lab import JupyterNotebook

    yield from _server(JupyterNotebook, tmp_path_factory, "ext-nb7", api)


def test_notebook7_loads_the_extension_and_mirrors_a_record(
        notebook7: JupyterLab, browser: ChromiumBrowser, request: pytest.FixtureRequest):
    from .lab import Notebook7Page, write_notebook

    name = "notebook7.ipynb"
    write_notebook(notebook7.root / name, [record_cell(), "%%fuxi\nhello"])
    nb = Notebook7Page(notebook7, browser.new_page(), name)
    try:
        nb.open()
        wait_extension(nb)
        wait_app(nb, "panel.content.model.cells.get(1).mimeType === arg", MARKDOWN)
        nb.run_and_wait(0)
        nb.wait_output(0, "fuxi record")
        wait_app(nb, "panel.content.model.cells.get(0).getMetadata('fuxi')")
        nb.save()
        assert saved(nb).cells[0].metadata["fuxi"] == {"record": RECORD, "volatile": VOLATILE}
    finally:
        close_pages([nb], request, notebook7)
