"""A small driver for real-browser tests: JupyterLab from the venv + Debian's chromium.

Why it exists: approval cards, live updates and interrupt only prove themselves in a real
frontend (comm messages, display updates, JupyterLab's save). Everything here is scoped
to the *visible* notebook panel, because JupyterLab keeps hidden tabs in the DOM, and
every process it starts is stopped again, also when a test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from playwright.sync_api import Browser, Locator, Page, Playwright, expect, sync_playwright

__all__ = ["CHROMIUM", "ChromiumBrowser", "ExposedJupyterLab", "JupyterLab", "JupyterNotebook",
           "Notebook7Page", "NotebookPage", "write_notebook"]

CHROMIUM = "/usr/bin/chromium"
# --no-sandbox: CI runs as root; the rest keeps a headless run quiet and off the network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# No "Jupyter news?" toast and no update check: they would cover outputs in screenshots.
QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CELLS = f"{PANEL} .jp-Notebook .jp-Cell"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
MS = 1000  # Playwright timeouts are in milliseconds


def free_port() -> int:
    """A loopback port nobody listens on right now (the server fails if it is taken)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells with the venv's kernel, so opening it starts that kernel."""
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells],
                            metadata={"kernelspec": KERNELSPEC})
    nbformat.write(notebook, str(path))
    return path


def _descendants(root: int) -> list[int]:
    """Every live process below `root` (kernels run in their own process groups)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class JupyterLab:
    """`jupyter lab` on a free 127.0.0.1 port with its config, data and settings isolated."""

    def __init__(self, root: Path, state: Path, env: dict[str, str]) -> None:
        self.root, self.state = root, state
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = state / "jupyter-lab.log"
        self._env = self._isolated_env(env)
        self.proc: subprocess.Popen[bytes] | None = None

    def _isolated_env(self, extra: dict[str, str]) -> dict[str, str]:
        """The server's (and so every kernel's) environment: no user config leaks in."""
        settings = self.state / "settings"
        for name, content in QUIET_SETTINGS.items():
            target = settings / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(content))
        dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data",
                "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
                "IPYTHONDIR": "ipython"}
        env = {**os.environ, **{k: str(self.state / v) for k, v in dirs.items()}}
        env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
        env.pop("JUPYTER_PATH", None)
        return {**env, **extra}

    def _command(self) -> list[str]:
        jupyter = str(Path(sys.executable).parent / "jupyter")
        return [jupyter, "lab", "--no-browser", "--allow-root", f"--port={self.port}",
                "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                "--IdentityProvider.token=", "--ServerApp.password=",
                f"--ServerApp.root_dir={self.root}",
                "--ServerApp.disable_check_xsrf=True",  # loopback test server: REST DELETE
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]

    def start(self, timeout: float = 60) -> JupyterLab:
        """Start the server in its own process group and wait until it answers."""
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(self._command(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self._env,
                                         cwd=self.root, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early:\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                self.api("/api/status")
                return self
            time.sleep(0.2)
        raise RuntimeError(f"jupyter lab did not answer in {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server log, for failure messages."""
        return self.log_path.read_text(errors="replace")[-chars:]

    def api(self, path: str, method: str = "GET") -> Any:
        """One REST call; JSON answer or None."""
        request = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def kernel_state(self, notebook: str) -> str | None:
        """The execution state of the kernel of `notebook`'s session, if it has one."""
        for session in self.api("/api/sessions"):
            if session["path"] == notebook:
                return str(session["kernel"]["execution_state"])
        return None

    def shutdown_kernels(self) -> None:
        """End every session (and its kernel), so tests do not pile up kernels."""
        with contextlib.suppress(OSError):
            for session in self.api("/api/sessions"):
                self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def stop(self) -> None:
        """Stop the server and anything it started, however the test ended."""
        if self.proc is None:
            return
        self.shutdown_kernels()
        leftovers = _descendants(self.proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self.proc = None


class ChromiumBrowser:
    """Playwright driving Debian's chromium (no `playwright install`: no downloads)."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self.browser: Browser | None = None

    def start(self) -> ChromiumBrowser:
        self._playwright = sync_playwright().start()
        self.browser = self._playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        return self

    def new_page(self, width: int = 1280, height: int = 860) -> Page:
        """A page in a fresh context: no storage shared between tests."""
        assert self.browser is not None, "start() first"
        return self.browser.new_page(viewport={"width": width, "height": height})

    def stop(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            if self._playwright is not None:
                self._playwright.stop()
            self.browser, self._playwright = None, None


class NotebookPage:
    """One notebook open in JupyterLab, with the steps a person takes."""

    def __init__(self, lab: JupyterLab, page: Page, name: str) -> None:
        self.lab, self.page, self.name = lab, page, name
        self.console: list[str] = []
        page.on("console", lambda message: self.console.append(message.text[:300]))

    @property
    def path(self) -> Path:
        return self.lab.root / self.name

    def open(self, timeout: float = 60) -> NotebookPage:
        """Open the notebook (`?reset`: no restored tabs) and wait for an idle kernel."""
        self.page.goto(f"{self.lab.url}/lab/tree/{self.name}?reset")
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float, state: str = "idle") -> None:
        self.cell(0).wait_for(timeout=timeout * MS)
        deadline = time.monotonic() + timeout
        while self.lab.kernel_state(self.name) != state:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the kernel of {self.name} never became {state}")
            time.sleep(0.2)
        time.sleep(1.0)  # the widget manager registers its comm target after kernel ready

    def cell(self, index: int) -> Locator:
        return self.page.locator(CELLS).nth(index)

    def outputs(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-OutputArea")

    def output_text(self, index: int) -> str:
        return "\n".join(self.cell(index).locator(".jp-OutputArea-output").all_inner_texts())

    def run_cell(self, index: int) -> None:
        """Select the cell and run it in place (Ctrl+Enter adds no empty cell)."""
        self.cell(index).locator(".jp-InputPrompt").first.click()
        self.page.keyboard.press("Control+Enter")

    def run_all(self) -> None:
        """Menu Run → Run All Cells, as a person does it (the cells run one after another)."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()

    def is_running(self, index: int) -> bool:
        return "*" in self.cell(index).locator(".jp-InputPrompt").first.inner_text()

    def wait_done(self, index: int, timeout: float = 60) -> None:
        """Wait until the cell has an execution count, i.e. it finished."""
        prompt = self.cell(index).locator(".jp-InputPrompt").first
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=timeout * MS)

    def run_and_wait(self, index: int, timeout: float = 60) -> None:
        self.run_cell(index)
        self.wait_done(index, timeout)

    def wait_output(self, index: int, text: str, timeout: float = 30) -> None:
        """Wait until the cell's output area shows `text`."""
        expect(self.outputs(index)).to_contain_text(text, timeout=timeout * MS)

    def button(self, index: int, name: str) -> Locator:
        return self.outputs(index).get_by_role("button", name=name, exact=True)

    def wait_buttons(self, index: int, *names: str, timeout: float = 30) -> None:
        """Wait until every named button is shown (widget views render one by one)."""
        for name in names:
            expect(self.button(index, name)).to_be_visible(timeout=timeout * MS)

    def widget_text(self, index: int, selector: str, timeout: float = 30) -> str:
        """The text of the first `selector` element inside an HTML widget of the cell."""
        element = self.outputs(index).locator(f".widget-html {selector}").first
        element.wait_for(timeout=timeout * MS)
        return element.inner_text().strip()

    def click(self, index: int, name: str, timeout: float = 30) -> None:
        """Click the button called `name` in the cell's outputs, once it is there."""
        button = self.button(index, name)
        button.wait_for(timeout=timeout * MS)
        button.click()

    def interrupt(self) -> None:
        """The toolbar's "Interrupt the kernel" button, as a person clicks it."""
        self.page.locator(f"{PANEL} jp-button[data-command='notebook:interrupt-kernel']").click()

    def save(self, timeout: float = 20) -> None:
        """Ctrl+S and wait until the file on disk is newer and the tab is clean."""
        before = self.path.stat().st_mtime_ns
        self.cell(0).locator(".jp-InputPrompt").first.click()
        self.page.keyboard.press("Control+s")
        deadline = time.monotonic() + timeout
        while self.path.stat().st_mtime_ns == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} was not saved within {timeout} s")
            time.sleep(0.1)
        dirty = self.page.locator(".jp-mod-current.jp-mod-dirty")
        expect(dirty).to_have_count(0, timeout=timeout * MS)

    def reload(self, timeout: float = 60, *, busy: bool = False) -> None:
        """Reload the whole page: what is shown now comes from the saved file (`busy`: a
        cell still runs in the kernel, which stays busy)."""
        self.page.reload()
        self._wait_ready(timeout, "busy" if busy else "idle")

    def screenshot(self, path: Path, index: int | None = None) -> None:
        """A viewport screenshot, scrolled to show cell `index`'s outputs if given."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if index is not None:
            self.outputs(index).scroll_into_view_if_needed()
        self.page.screenshot(path=str(path), animations="disabled")

    def page_text(self) -> str:
        return self.page.locator("body").inner_text()

    def close(self) -> None:
        self.page.close()


class ExposedJupyterLab(JupyterLab):
    """JupyterLab with `window.jupyterapp`, for tests that read the app's own state (cell
    models, metadata, editor mime types) instead of guessing it from pixels."""

    def _command(self) -> list[str]:
        return [*super()._command(), "--LabApp.expose_app_in_browser=True"]


class JupyterNotebook(JupyterLab):
    """Notebook 7 (`jupyter notebook`), isolated like JupyterLab, with `window.jupyterapp`."""

    def _command(self) -> list[str]:
        jupyter = str(Path(sys.executable).parent / "jupyter")
        return [jupyter, "notebook", "--no-browser", "--allow-root", f"--port={self.port}",
                "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                "--IdentityProvider.token=", "--ServerApp.password=",
                f"--ServerApp.root_dir={self.root}", "--ServerApp.disable_check_xsrf=True",
                "--JupyterNotebookApp.expose_app_in_browser=True"]


class Notebook7Page(NotebookPage):
    """A notebook open in Notebook 7 (one document per browser tab, no dock panel)."""

    def open(self, timeout: float = 60) -> NotebookPage:
        self.page.goto(f"{self.lab.url}/notebooks/{self.name}")
        self._wait_ready(timeout)
        return self
