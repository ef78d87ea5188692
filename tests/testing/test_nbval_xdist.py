"""`pytest --nbval -n auto notebooks/` works as a user types it (issue 37, point 2).

nbval runs a notebook's cells in order in the notebook's one kernel; xdist's default
`--dist load` used to hand one notebook's cells to several workers (quickstart: 4 failed,
2 passed). The package's pytest plugin now schedules every notebook whole on one worker,
and leaves a run without notebooks exactly as the user's mode schedules it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fuxi_notebook.testing.pytest_plugin import (
    NotebookAwareScheduling,
    pytest_xdist_make_scheduler,
)

from ..missing import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]

#: what each worker ran, in order, one `worker nodeid` line per cell (a conftest observing)
RECORDING_CONFTEST = '''
import os

def pytest_runtest_setup(item):
    with open(os.environ["RAN_LOG"], "a", encoding="utf-8") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + " " + item.nodeid + "\\n")
'''


@pytest.fixture(autouse=True)
def _xdist_installed() -> None:
    if importlib.util.find_spec("xdist") is None:
        skip_or_fail("pytest-xdist is not installed (the test extra has it)")


# --- the scheduler on its own, with workers that run what they are sent -------------------

class FakeConfig:
    """The parts of pytest's config that xdist's schedulers and the hook read."""

    def __init__(self, dist: str, *, nbval: bool = True, workers: int = 2) -> None:
        self.values: dict[str, Any] = {
            "dist": dist, "tx": [f"{workers}*popen"], "maxschedchunk": None,
            "nbval": nbval, "nbval_lax": False, "loadscopereorder": True}
        self.option = SimpleNamespace(**self.values)
        self.hook = SimpleNamespace(pytest_collectreport=lambda report: None)

    def getvalue(self, name: str) -> Any:
        return self.values[name]

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


class FakeWorker:
    """A worker as a scheduler sees it: it queues what it is sent and runs it in order."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name, spec=name)
        self.queue: list[int] = []
        self.ran: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def send_runtest_all(self) -> None:
        raise AssertionError("not sent under these modes")

    def send_steal(self, indices: list[int]) -> None:
        raise AssertionError("no steal expected: a notebook is never split")

    def shutdown(self) -> None:
        self.shutting_down = True


def _run(sched: Any, collection: list[str], workers: int = 2) -> list[FakeWorker]:
    """Bring up the workers, give each the collection, schedule, and run until done."""
    nodes = [FakeWorker(f"gw{n}") for n in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    assert sched.collection_is_completed
    sched.schedule()
    while any(node.queue for node in nodes):
        for node in nodes:  # one test each in turn, as workers in parallel would
            if node.queue:
                index = node.queue.pop(0)
                node.ran.append(index)
                sched.mark_test_complete(node, index)
    assert sched.tests_finished
    return nodes


NOTEBOOKS = {f"notebooks/nb{n}.ipynb": [f"notebooks/nb{n}.ipynb::Cell {c}"
                                        for c in range(3 + n)] for n in range(4)}
PLAIN = [f"tests/test_plain.py::test_{n}" for n in range(12)]


def _mixed() -> list[str]:
    collection = PLAIN[:6]
    for cells in NOTEBOOKS.values():
        collection += cells
    return collection + PLAIN[6:]


@pytest.mark.parametrize("dist", ["load", "worksteal", "loadgroup"])
def test_each_notebook_runs_whole_on_one_worker_in_order(dist: str) -> None:
    collection = _mixed()
    sched = pytest_xdist_make_scheduler(FakeConfig(dist), None)
    assert isinstance(sched, NotebookAwareScheduling)
    nodes = _run(sched, collection)
    ran = sorted(index for node in nodes for index in node.ran)
    assert ran == list(range(len(collection)))  # every test, once
    for cells in NOTEBOOKS.values():
        on = [node for node in nodes if any(collection[i] in cells for i in node.ran)]
        assert len(on) == 1, f"{cells[0]} split over {[n.gateway.id for n in on]}"
        assert [collection[i] for i in on[0].ran if collection[i] in cells] == cells
    assert all(any(collection[i] in PLAIN for i in node.ran) for node in nodes)


def test_an_xdist_group_still_shares_a_worker_under_loadgroup() -> None:
    grouped = [f"tests/test_g.py::test_{n}@db" for n in range(4)]
    collection = [*grouped, *NOTEBOOKS["notebooks/nb1.ipynb"], *PLAIN[:4]]
    nodes = _run(pytest_xdist_make_scheduler(FakeConfig("loadgroup"), None), collection)
    holders = {node.gateway.id for node in nodes for i in node.ran if collection[i] in grouped}
    assert len(holders) == 1


def test_without_notebooks_the_users_mode_schedules_as_it_would_alone() -> None:
    from xdist.scheduler import LoadScheduling

    sched = pytest_xdist_make_scheduler(FakeConfig("load"), None)
    alone = _run(LoadScheduling(FakeConfig("load"), None), PLAIN)
    through = _run(sched, PLAIN)
    assert isinstance(sched.chosen, LoadScheduling)
    assert [node.ran for node in through] == [node.ran for node in alone]


@pytest.mark.parametrize(("dist", "nbval"), [
    ("loadfile", True), ("loadscope", True), ("each", True), ("load", False)])
def test_xdist_chooses_where_no_notebook_can_be_split(dist: str, nbval: bool) -> None:
    assert pytest_xdist_make_scheduler(FakeConfig(dist, nbval=nbval), None) is None


# --- the real run: the shipped notebooks, `pytest --nbval -n 2` in a fresh process ---------

def _ran_per_worker(log: Path) -> dict[str, list[str]]:
    ran: dict[str, list[str]] = defaultdict(list)
    for line in log.read_text(encoding="utf-8").splitlines():
        worker, nodeid = line.split(" ", 1)
        ran[worker].append(nodeid)
    return ran


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_shipped_notebooks_pass_under_n_2_each_on_one_worker(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(
        "work", "out", ".ipynb_checkpoints"))
    (tmp_path / "conftest.py").write_text(RECORDING_CONFTEST, encoding="utf-8")
    log = tmp_path / "ran.log"
    env = {**os.environ, "RAN_LOG": str(log), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "FUXI_BLOCK_REAL_API": "1", "ANTHROPIC_API_KEY": ""}
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-n", "2",
         "-p", "no:cacheprovider", "-q", "notebooks"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=540)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    ran = _ran_per_worker(log)
    assert set(ran) <= {"gw0", "gw1"}
    notebooks = {nodeid.split("::")[0] for ids in ran.values() for nodeid in ids}
    assert len(notebooks) == len(list((tmp_path / "notebooks").rglob("*.ipynb"))) >= 5
    for notebook in notebooks:
        holders = [worker for worker, ids in ran.items()
                   if any(nodeid.startswith(notebook + "::") for nodeid in ids)]
        assert len(holders) == 1, f"{notebook} ran on {holders}"
        cells = [int(nodeid.rsplit(" ", 1)[1]) for nodeid in ran[holders[0]]
                 if nodeid.startswith(notebook + "::")]
        assert cells == list(range(len(cells))), f"{notebook} ran cells {cells}"
