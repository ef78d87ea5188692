"""Fixtures for the kernel tools: a real IPython shell, reset around every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from fuxi_notebook.tools.base import ToolContext


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
