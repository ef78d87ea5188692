"""Fixtures: a real IPython shell for the kernel tools, reset around every test; and a real
ipykernel with `%load_ext fuxi_notebook` against a fake Messages API, one per module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from fuxi_notebook.testing import FakeMessagesServer
from fuxi_notebook.tools.base import ToolContext

from .kernel_harness import KernelHarness


@pytest.fixture(scope="session")
def _ipython(tmp_path_factory: pytest.TempPathFactory) -> InteractiveShell:
    """The process-wide shell; created with in-memory history and a temp IPYTHONDIR."""
    if not InteractiveShell.initialized():
        saved = os.environ.get("IPYTHONDIR")
        os.environ["IPYTHONDIR"] = str(tmp_path_factory.mktemp("ipythondir"))
        try:
            config = Config()
            config.HistoryManager.hist_file = ":memory:"
            InteractiveShell.instance(config=config)
        finally:
            if saved is None:
                os.environ.pop("IPYTHONDIR", None)
            else:
                os.environ["IPYTHONDIR"] = saved
    return InteractiveShell.instance()


@pytest.fixture
def shell(_ipython: InteractiveShell):
    """The shell with an empty namespace and history; display publisher restored after."""
    _ipython.reset(new_session=True)
    publisher = _ipython.display_pub
    yield _ipython
    _ipython.display_pub = publisher


@pytest.fixture
def displays(shell: InteractiveShell) -> CapturingDisplayPublisher:
    """Everything shown to the user during the test, instead of printing it."""
    publisher = CapturingDisplayPublisher()
    shell.display_pub = publisher
    return publisher


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


@pytest.fixture(scope="module")
def api():
    with FakeMessagesServer() as server:
        yield server


@pytest.fixture(scope="module")
def kernel(api, tmp_path_factory):
    work = tmp_path_factory.mktemp("kernel-work")
    harness = KernelHarness(cwd=str(work), env={
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0001",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5", "MPLBACKEND": "Agg",
        "FUXI_STALL_TIMEOUT": "30"})
    loaded = harness.run("%load_ext fuxi_notebook")
    assert loaded.status == "ok", loaded.messages
    where = harness.run("import fuxi_notebook; print(fuxi_notebook.__file__)").stdout.strip()
    assert where == str(Path(__file__).resolve().parents[2] / "fuxi_notebook" / "__init__.py")
    harness.work = work
    yield harness
    harness.close()


@pytest.fixture
def fresh(kernel, api):
    """A clean script and a new conversation for each test."""
    api.reset()
    kernel.run("%fuxi reset")
    return kernel
