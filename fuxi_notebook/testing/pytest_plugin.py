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

- `pytest --nbval -n auto notebooks/` (pytest-xdist) keeps each notebook's cells on one
  worker, in order: nbval runs a notebook's cells one after another in the notebook's one
  kernel, and xdist's default `--dist load` (or `worksteal`, or `loadgroup` for unmarked
  items) would hand them to several workers, each with a kernel missing the earlier cells.
  Notebooks go to workers whole; other tests are scheduled as the chosen mode schedules
  them (untouched when no notebook is collected). `loadfile`, `loadscope` and `each`
  already keep a notebook whole.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from .._internal.common.replay_modes import REPLAY_MODES
from .fake_server import FakeMessagesServer

__all__ = ["NotebookAwareScheduling", "fake_messages_api", "pytest_addoption",
           "pytest_runtest_setup", "pytest_xdist_make_scheduler"]

#: the xdist modes that could send one notebook's cells to several workers
_SPLITTING_MODES = ("load", "worksteal", "loadgroup")


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


def _notebook_of(nodeid: str) -> str | None:
    """The notebook of a cell's node id (`notebooks/a.ipynb::Cell 3`), None for other tests."""
    path, separator, _ = nodeid.partition("::")
    return path if separator and path.endswith(".ipynb") else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With nbval on, schedule through `NotebookAwareScheduling` in the modes that would
    split a notebook; None (xdist's own choice) in the others or without nbval. Not
    `tryfirst`: a conftest's own scheduler still comes first."""
    dist = config.getvalue("dist")
    nbval = config.getoption("nbval", False) or config.getoption("nbval_lax", False)
    if dist not in _SPLITTING_MODES or not nbval:
        return None
    from xdist import scheduler  # type: ignore[import-untyped, import-not-found, unused-ignore]

    plain = {"load": scheduler.LoadScheduling, "worksteal": scheduler.WorkStealingScheduling,
             "loadgroup": scheduler.LoadGroupScheduling}[dist](config, log)
    return NotebookAwareScheduling(plain, _whole_notebooks(scheduler, dist)(config, log))


def _whole_notebooks(scheduler: Any, dist: str) -> Any:
    """xdist's scope scheduler with one scope per notebook (all its cells, in order), one
    per `xdist_group` under `loadgroup`, and one per test otherwise (as `load` has it)."""

    class WholeNotebookScheduling(scheduler.LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if dist == "loadgroup" and nodeid.rfind("@") > nodeid.rfind("]"):
                return str(super()._split_scope(nodeid))
            return _notebook_of(nodeid) or nodeid

    return WholeNotebookScheduling


class NotebookAwareScheduling:
    """An xdist scheduler that sends each notebook to one worker whole, and leaves a run
    without notebooks exactly as the user's mode schedules it.

    The controller learns which tests exist only when the workers have collected them, so
    until then both candidate schedulers hear of every node and collection; once the
    collection is complete, the whole-notebook one is kept if a notebook is in it, the
    user's mode's one otherwise, and every later call goes to the one kept.
    """

    def __init__(self, plain: Any, whole_notebooks: Any) -> None:
        self._plain = plain
        self._whole_notebooks = whole_notebooks
        self._chosen: Any = None

    @property
    def chosen(self) -> Any:
        """The scheduler in use (the user's mode's one until the collection is known)."""
        return self._plain if self._chosen is None else self._chosen

    def _undecided(self) -> tuple[Any, ...]:
        return (self._plain, self._whole_notebooks) if self._chosen is None else (self._chosen,)

    @property
    def nodes(self) -> Any:
        return self.chosen.nodes

    @property
    def collection_is_completed(self) -> bool:
        return bool(self.chosen.collection_is_completed)

    @property
    def tests_finished(self) -> bool:
        return bool(self.chosen.tests_finished)

    @property
    def has_pending(self) -> bool:
        return bool(self.chosen.has_pending)

    def add_node(self, node: Any) -> None:
        for candidate in self._undecided():
            candidate.add_node(node)

    def add_node_collection(self, node: Any, collection: Any) -> None:
        for candidate in self._undecided():
            candidate.add_node_collection(node, collection)
        if self._chosen is None and self._whole_notebooks.collection_is_completed:
            collected = self._whole_notebooks.registered_collections.values()
            has_notebook = any(_notebook_of(nodeid) for ids in collected for nodeid in ids)
            self._chosen = self._whole_notebooks if has_notebook else self._plain

    def remove_node(self, node: Any) -> Any:
        crashed = [candidate.remove_node(node) for candidate in self._undecided()]
        return crashed[0]

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.chosen.mark_test_complete(node, item_index, duration)

    def mark_test_pending(self, item: str) -> None:
        self.chosen.mark_test_pending(item)

    def remove_pending_tests_from_node(self, node: Any, indices: Any) -> None:
        self.chosen.remove_pending_tests_from_node(node, indices)

    def schedule(self) -> None:
        self.chosen.schedule()
