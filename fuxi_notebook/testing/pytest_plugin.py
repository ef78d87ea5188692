"""A pytest plugin (auto-registered) for testing agents and agent notebooks offline.

- `fake_messages_api`: a running fake Messages API server on 127.0.0.1::

      def test_my_agent(fake_messages_api):
          fake_messages_api.add(Turn([text("hi")]))
          model = AnthropicModel("claude-sonnet-5-5", api_key="test",
                                 base_url=fake_messages_api.url)

- `pytest --nbval notebooks/` replays every recorded `%%fuxi` cell strictly: before nbval
  starts a notebook's kernel, the kernel is told its notebook (`FUXI_NOTEBOOK`) and to
  replay (`FUXI_REPLAY`), so the model's turns come from the records, the tools run again,
  and any divergence fails the cell. No key and no network are needed. `--fuxi-replay
  lenient|strict|off` changes the mode (`off`: cells call the model).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from .._internal.common.replay_modes import REPLAY_MODES
from .fake_server import FakeMessagesServer

__all__ = ["fake_messages_api", "pytest_addoption", "pytest_runtest_setup"]



def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fuxi", "fuxi-notebook")
    group.addoption("--fuxi-replay", choices=REPLAY_MODES, default="strict",
                    help="how nbval runs recorded %%fuxi cells: strict (default: replay, a "
                         "divergence fails the cell), lenient (replay, divergences noted), "
                         "off (call the model)")


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesServer]:
    """A running fake Messages API server on 127.0.0.1 with an empty script."""
    with FakeMessagesServer() as server:
        yield server


def _notebook_item(item: pytest.Item) -> Path | None:
    """The notebook of an nbval cell item whose kernel has not started yet."""
    parent = getattr(item, "parent", None)
    path = getattr(parent, "path", None)
    if path is None or Path(str(path)).suffix != ".ipynb":
        return None
    if not hasattr(parent, "kernel") or getattr(parent, "kernel", None) is not None:
        return None
    return Path(str(path)).resolve()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, None]:
    """Set the kernel's environment just while nbval starts it (jupyter_client copies
    `os.environ` at launch), and put the test process's environment back after."""
    notebook = _notebook_item(item)
    if notebook is None:
        yield
        return
    mode = item.config.getoption("--fuxi-replay")
    wanted = {"FUXI_NOTEBOOK": str(notebook), "FUXI_REPLAY": mode}
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
