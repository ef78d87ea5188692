"""Fixtures: a real IPython shell for the kernel tools, reset around every test; and a real
ipykernel with `%load_ext fuxi_notebook` against a fake Messages API, one per module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from fuxi_notebook._internal.tools.base import ToolContext
from fuxi_notebook.testing import FakeMessagesServer

from .kernel_harness import loaded_kernel


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


@pytest.fixture
def copy_dir(tmp_path: Path) -> Path:
    """A copy of the example notebooks (with their data) to run and to tamper with."""
    import shutil

    target = tmp_path / "notebooks"
    shutil.copytree(Path(__file__).resolve().parents[2] / "notebooks", target,
                    ignore=shutil.ignore_patterns("work", ".ipynb_*"))
    return target


@pytest.fixture(scope="module")
def api():
    with FakeMessagesServer() as server:
        yield server


@pytest.fixture(scope="module")
def kernel(api, tmp_path_factory):
    harness = loaded_kernel(api, tmp_path_factory.mktemp("kernel-work"))
    yield harness
    harness.close()


@pytest.fixture
def fresh(kernel, api):
    """A clean script and a new conversation for each test."""
    api.reset()
    kernel.run("%fuxi reset")
    return kernel
