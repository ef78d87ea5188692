"""Fixtures for the real-browser tests: one fake API, one JupyterLab, one chromium per module.

The whole folder is skipped (with the reason) where the browser stack is missing; in CI
`scripts/test.sh` installs it (pip extra `browser`, Debian's chromium), so the tests run,
and under `CI=true` a missing part fails them instead (tests/missing.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fuxi_notebook.testing import FakeMessagesServer

from ..missing import missing_part

if TYPE_CHECKING:
    from .lab import ChromiumBrowser, JupyterLab, NotebookPage


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not os.access("/usr/bin/chromium", os.X_OK):
        return "no /usr/bin/chromium (apt-get install chromium; scripts/test.sh does it as root)"
    for module in ("playwright", "jupyterlab"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install -e '.[browser]')"
    if not (Path(sys.executable).parent / "jupyter").exists():
        return "no `jupyter` command next to this Python"
    return None


_REASON = _missing()
_HERE = Path(__file__).resolve().parent
_FAILED = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real JupyterLab in headless chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every test of this folder, with the reason, where the browser stack is missing.

    (A module-level skip in a conftest breaks `pytest tests/browser`, so it is done here;
    the test modules import nothing from playwright, so they always collect.)
    """
    if _REASON is None:
        return
    skip = missing_part(f"browser tests cannot run: {_REASON}")
    for item in items:
        if _HERE in item.path.parents:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember the call's outcome, so the fixture can keep evidence of a failure."""
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


def _keep_evidence(page: NotebookPage, folder: Path) -> str:
    """A screenshot and the page's text, so a CI failure can be understood afterwards."""
    shot = folder / f"{page.path.stem}-failure.png"
    try:
        page.screenshot(shot)
        (folder / f"{page.path.stem}-failure.txt").write_text(
            page.page_text() + "\n--- console ---\n" + "\n".join(page.console))
    except Exception as error:  # the page may be gone; the original failure matters more
        return f"no evidence: {error!r}"
    return f"evidence of the failure: {shot} (+ .txt); server log {page.lab.log_path}"


@pytest.fixture(scope="module")
def api() -> Iterator[FakeMessagesServer]:
    """The fake model every kernel of the module talks to."""
    with FakeMessagesServer() as server:
        yield server


def running_lab(tmp_path_factory: pytest.TempPathFactory, name: str, env: dict[str, str],
                unset: tuple[str, ...] = ()) -> Iterator[JupyterLab]:
    """A started JupyterLab (kernels inherit its env), without the `unset` variables."""
    from .lab import JupyterLab

    root = tmp_path_factory.mktemp(f"{name}-root")
    state = tmp_path_factory.mktemp(f"{name}-state")
    with pytest.MonkeyPatch.context() as patch:  # the server copies os.environ when built
        for variable in unset:
            patch.delenv(variable, raising=False)
        server = JupyterLab(root, state, env=env)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab(api: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """A JupyterLab whose kernels reach the fake API (kernels inherit the server's env)."""
    yield from running_lab(tmp_path_factory, "lab", {
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5",
        "FUXI_STALL_TIMEOUT": "30", "MPLBACKEND": "Agg"})


@pytest.fixture(scope="module")
def browser() -> Iterator[ChromiumBrowser]:
    from .lab import ChromiumBrowser

    chromium = ChromiumBrowser()
    try:
        yield chromium.start()
    finally:
        chromium.stop()


def close_pages(opened: list[NotebookPage], request: pytest.FixtureRequest,
                lab: JupyterLab) -> None:
    """Close a test's pages (keeping evidence if it failed) and their kernels."""
    for page in opened:
        if request.node.stash.get(_FAILED, False):
            print(_keep_evidence(page, lab.state))
        page.close()
    lab.shutdown_kernels()


@pytest.fixture
def notebook(lab: JupyterLab, browser: ChromiumBrowser, api: FakeMessagesServer,
             request: pytest.FixtureRequest) -> Iterator[Callable[[list[str]], NotebookPage]]:
    """Opens a new notebook with the given cells; closes it and its kernel afterwards."""
    from .lab import NotebookPage, write_notebook

    api.reset()
    opened: list[NotebookPage] = []

    def open_notebook(cells: list[str]) -> NotebookPage:
        name = f"{request.node.name}.ipynb".replace("[", "-").replace("]", "")
        write_notebook(lab.root / name, cells)
        page = NotebookPage(lab, browser.new_page(), name)
        opened.append(page)
        return page.open()

    yield open_notebook
    close_pages(opened, request, lab)
