"""The plain cells of a replayed example notebook print the same whatever the machine's load.

Under load, nbval found the output of code_work's `!cd work/code_work && python3
check_summary.py` empty. IPython runs a `!` command on a terminal through pexpect and polls
it every 0.05 s. When a poll's `select` has timed out and the kernel's thread then does not
run again until the command has written its output and exited (a busy machine; the
extension's background imports holding the GIL), pexpect finds the child dead and reports
the end of the output without reading what waits on the terminal: the cell prints nothing.
So the example notebooks run commands with `subprocess`, which reads the pipes to their end
and then waits; the first test plays that timing exactly (no load needed).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "scripts" / "notebooks"
#: what IPython turns a `!cmd`, `x = !cmd`, `%sx` or `%system` into
_TERMINAL_CALLS = ("get_ipython().system(", "get_ipython().getoutput(",
                   "run_line_magic('system'", "run_line_magic('sx'")


@pytest.fixture
def late_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """pexpect's first poll times out just before the command writes, and the kernel's
    thread only looks again once the command has exited (what a starved kernel does at
    random): until then no poll sees the command's output."""
    pexpect = pytest.importorskip("pexpect")
    from pexpect import pty_spawn

    children: list[Any] = []
    looked: list[bool] = []  # the late poll happened
    spawn, select = pty_spawn.spawn._spawn, pty_spawn.select_ignore_interrupts

    def spawned(self: Any, *args: Any, **kwargs: Any) -> Any:
        children.append(self)
        looked.clear()
        return spawn(self, *args, **kwargs)

    def late_select(iwtd: list[int], owtd: list[int], ewtd: list[int],
                    timeout: float | None = None) -> Any:
        if looked:
            return select(iwtd, owtd, ewtd, timeout)
        if timeout:  # the poll that times out, then the thread that runs too late
            deadline = time.monotonic() + 30
            while not all(map(_exited, children)) and time.monotonic() < deadline:
                time.sleep(0.01)
            looked.append(True)
        return [], [], []

    monkeypatch.setattr(pty_spawn.spawn, "_spawn", spawned)
    monkeypatch.setattr(pty_spawn, "select_ignore_interrupts", late_select)
    assert pexpect.spawn is pty_spawn.spawn


def _exited(child: Any) -> bool:
    """Whether the child has exited (it stays a zombie for pexpect's own waitpid)."""
    try:
        return os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
    except ChildProcessError:  # reaped already
        return True


@pytest.fixture
def busy_kernel() -> Iterator[None]:
    """Another thread of the kernel wants the GIL all the time (as background imports do)."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def _specs() -> list[Any]:
    """The notebook specs of scripts/notebooks (loaded under names of their own)."""
    import importlib.util
    import sys

    specs = []
    sys.path.insert(0, str(SPECS))  # they import `spec`
    try:
        for path in sorted(SPECS.glob("*.py")):
            if path.stem == "spec":
                continue
            found = importlib.util.spec_from_file_location(f"_notebook_spec_{path.stem}", path)
            assert found is not None and found.loader is not None
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            module.NAME = path.stem
            specs.append(module)
    finally:
        sys.path.remove(str(SPECS))
    return specs


def _plain_code(spec: Any) -> list[str]:
    return [cell.source for cell in spec.CELLS if cell.kind == "code" and not cell.turns
            and not cell.source.lstrip().startswith("%%fuxi")]


def test_a_bang_command_prints_nothing_when_the_kernel_looks_after_it_ended(
        shell, capsys, late_kernel):
    shell.system("sleep 0.3; echo ok")
    assert capsys.readouterr().out == "" and shell.user_ns["_exit_code"] == 0


def test_the_checks_cell_prints_all_of_the_output_in_a_late_and_busy_kernel(
        shell, capsys, tmp_path, monkeypatch, late_kernel, busy_kernel):
    code_work = next(spec for spec in _specs() if spec.NAME == "code_work")
    copy, *_, check = [source for source in _plain_code(code_work)
                       if "work/code_work" in source or "check_summary.py" in source]
    shutil.copytree(ROOT / "notebooks" / "code_work_template", tmp_path / "code_work_template")
    monkeypatch.chdir(tmp_path)
    assert shell.run_cell(copy).success
    summary = tmp_path / "work" / "code_work" / "salestools" / "summary.py"
    summary.write_text(summary.read_text().replace(code_work.OLD_LOOP, code_work.NEW_LOOP))
    capsys.readouterr()
    for _ in range(3):
        assert shell.run_cell(check).success
        assert capsys.readouterr().out == ("ok   check_growth\nok   check_rolling_mean\n"
                                           "exit code 0\n")


def test_no_example_notebook_runs_a_command_on_a_terminal():
    transform = TransformerManager().transform_cell
    found = [(spec.NAME, source) for spec in _specs() for source in _plain_code(spec)
             if any(call in transform(source) for call in _TERMINAL_CALLS)]
    assert found == []
