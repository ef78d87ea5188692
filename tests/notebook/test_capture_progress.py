"""The Python tool's capture reports stdout+stderr so far, from its own thread, while the
user's code still holds the main thread."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from fuxi_notebook._internal.notebook.kernel.capture import Capture
from fuxi_notebook._internal.notebook.kernel.python import PythonTool
from fuxi_notebook._internal.tools.base import ToolContext
from fuxi_notebook._internal.tools.progress import PROGRESS_CHARS, calling

WAIT = 30.0  # bound of every wait for evidence; never reached when things work


class Listener:
    """Collects reports (from any thread); `wait_for(*words)` blocks until one report
    contains them all."""

    def __init__(self) -> None:
        self.reports: list[str] = []
        self._lock = threading.Condition()

    def __call__(self, tool_use_id: str, output: str, elapsed: float) -> None:
        with self._lock:
            self.reports.append(output)
            self._lock.notify_all()

    @property
    def last(self) -> str:
        with self._lock:
            return self.reports[-1] if self.reports else ""

    def wait_for(self, *words: str) -> bool:
        with self._lock:
            return self._lock.wait_for(
                lambda: bool(self.reports) and all(w in self.reports[-1] for w in words), WAIT)


def _progress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "fuxi-progress"]


def test_prints_and_fd_writes_are_reported_while_the_code_runs(shell: Any):
    listener = Listener()
    kept: list[str] = []
    with calling("toolu_py", kept.append, listener), Capture(shell) as capture:
        print("\x1b[31mfrom print\x1b[0m")
        print("from stderr", file=sys.stderr)
        os.write(1, b"from fd 1\n")  # as C code or a subprocess would
        os.write(2, b"progress 10%\rprogress 100%\n")
        # still inside the capture: the reports arrive without the code finishing
        assert listener.wait_for("from print", "from fd 1", "from stderr", "progress 100%")
        during = listener.last
    assert "\x1b[" not in during and "progress 10%" not in during  # as the model sees it
    assert during.startswith("stdout:\nfrom print\nfrom fd 1")
    assert "stderr:\nfrom stderr\nprogress 100%" in during
    assert listener.last == capture.streams(PROGRESS_CHARS, so_far=True)  # the final state
    assert kept == listener.reports
    assert _progress_threads() == []


def test_the_final_report_holds_everything_however_fast_the_code_printed(shell: Any):
    listener = Listener()
    with calling("toolu_py", lambda _: None, listener), Capture(shell) as capture:
        for number in range(200_000):
            print(number)
        os.write(1, b"the end\n")
    assert len(listener.reports) < 200_000  # throttled, not one report per line
    final = listener.last
    assert final == capture.streams(PROGRESS_CHARS, so_far=True)
    assert final.startswith("stdout:\n0\n1\n2\n") and final.endswith("199999\nthe end\n")
    assert len(final) < PROGRESS_CHARS + 200  # capped, head and tail


def test_a_slow_listener_never_holds_up_the_code(shell: Any):
    entered, release = threading.Event(), threading.Event()
    reports: list[str] = []

    def slow(tool_use_id: str, output: str, elapsed: float) -> None:
        reports.append(output)
        entered.set()
        release.wait(WAIT)

    try:
        with calling("toolu_py", lambda _: None, slow), Capture(shell):
            print("first")
            assert entered.wait(WAIT)  # the listener is now stuck in its first report
            for number in range(10_000):  # these writes must not wait for it
                print(number)
            os.write(1, b"written while the listener was busy\n")
            release.set()
    finally:
        release.set()
    assert reports[0] == "stdout:\nfirst\n"
    assert reports[-1].endswith("9999\nwritten while the listener was busy\n")


def test_no_progress_thread_outside_a_call(shell: Any):
    with Capture(shell) as capture:
        print("quiet")
        assert _progress_threads() == []
    assert capture.streams(100) == "stdout:\nquiet"


async def test_the_python_tool_reports_before_its_code_returns(shell: Any, ctx: ToolContext):
    listener = Listener()
    seen = threading.Event()
    shell.user_ns["seen"] = seen

    def watch(tool_use_id: str, output: str, elapsed: float) -> None:
        listener(tool_use_id, output, elapsed)
        if "halfway" in output:
            seen.set()

    code = ("print('halfway')\n"
            "assert seen.wait(30), 'no report while the code ran'\n"
            "print('done')")
    with calling("toolu_py", lambda _: None, watch):
        out = await PythonTool(shell).run({"code": code}, ctx)
    assert not out.is_error, out.content
    assert listener.reports[0] == "stdout:\nhalfway\n"
    assert listener.last == "stdout:\nhalfway\ndone\n"


def test_a_running_calls_output_so_far_shows_outside_its_collapsed_card():
    """Issue 36, point 6: the card's body is a collapsed `<details>`; the output so far
    goes below it, where it is seen as it comes (tests/browser/test_live_output_lab.py
    checks it on the page), with its last line whole once that line ended."""
    from fuxi_notebook._internal.notebook.display.view import ToolCard

    card = ToolCard("toolu_1", "Python", {"code": "for n in range(3): print(n)"})
    card.progress = "stdout:\nloading rows: first batch read\n"
    markdown = card.markdown()
    details, after = markdown.split("</details>")
    assert "Output so far" not in details
    assert "Output so far:" in after and "first batch read\n```" in after
    card.result, card.progress = "stdout:\n0\n1\n2", ""
    assert "Output so far" not in card.markdown()


def test_a_report_keeps_the_line_break_its_last_line_ended_with(shell: Any):
    kept: list[str] = []
    listener = Listener()
    with calling("toolu_py", kept.append, listener), Capture(shell):
        print("a whole line")
        assert listener.wait_for("a whole line")
        whole = listener.last
        print("a line not yet ended", end="")
        assert listener.wait_for("not yet ended")
        open_line = listener.last
    assert whole.endswith("a whole line\n")  # ended: nothing of it need wait
    assert open_line.endswith("a line not yet ended")  # may go on: its end waits
