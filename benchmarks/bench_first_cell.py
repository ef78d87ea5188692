"""The first `%%fuxi` cell of a fresh kernel: at Run All, and typed after a pause.

    .venv/bin/python benchmarks/bench_first_cell.py [--runs 5] [--delay 3.0] [--warm 3]

Fresh ipykernels through jupyter_client, the fake Messages API in a process of its own
(benchmarks/fake_api_process.py, answering at once: the model's time would only dilute
the ratios). Four configurations, one fresh kernel each per round, in an order that
alternates from round to round (drift on a shared machine hits them alike):

- `bare`: a bare kernel's first cell, hand-written: `AsyncAnthropic` streaming one
  message (`BARE_CELL`), timed from sending it until the kernel is idle.
- `run all`: `%load_ext fuxi_notebook` and a `%%fuxi` cell sent back to back as Run All
  (or CI, or a reader running the notebook top to bottom) sends them, timed from the
  first request until the kernel is idle after the second. The extension's background
  preload (`magic.Preload`) starts with `%load_ext` and stops when the cell starts.
- `run all, no preload`: the same with `FUXI_PRELOAD=0` (what the preload changes).
- `after a pause`: `%load_ext`, a pause of `--delay` seconds (the user typing), then the
  `%%fuxi` cell and `--warm` more: the first cell's own overhead is first - warm (the warm
  cells pay the same model, network and round trips, no imports).

Prints the medians and the ratio run all / bare (target <= 1.1: the first cell costs what
hand-written code would), and the overhead after a pause (target < 0.3 s), with the
kernel's resident set size after the cells.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fake_api_process import FakeApiProcess
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-5-5"
LOAD_CELL = "%load_ext fuxi_notebook"
PROMPT_CELL = "%%fuxi --new\nsay ok"
BARE_CELL = f"""\
from anthropic import AsyncAnthropic
client = AsyncAnthropic()
async with client.messages.stream(model={MODEL!r}, max_tokens=1024,
                                  messages=[{{"role": "user", "content": "say ok"}}]) as stream:
    message = await stream.get_final_message()
print(message.content[0].text)"""
RSS = ("import os as __os\nwith open('/proc/self/statm') as __f:\n"
       "    print(int(__f.read().split()[1]) * __os.sysconf('SC_PAGE_SIZE'))")
#: the cell ran live, against the fake API (not from a record, not failed)
LIVE_CHECK = "print(_fuxi.result.subtype, _fuxi.result.num_turns)"
WHERE = "import fuxi_notebook as __f; print(__f.__file__)"


class CellFailed(RuntimeError):
    """A cell ended with an error (the benchmark measured something else)."""


@dataclass
class Kernel:
    """A fresh ipykernel and a synchronous client."""

    env: dict[str, str]
    cwd: str
    km: KernelManager = field(init=False)

    def __post_init__(self) -> None:
        self.km = KernelManager()
        self.km._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="fuxi-bench", language="python", interrupt_mode="signal")
        self.km.start_kernel(env=self.env, cwd=self.cwd)
        try:
            self.kc = self.km.client()
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=60)
        except BaseException:
            self.km.shutdown_kernel(now=True)
            raise

    def run_all(self, *cells: str, timeout: float = 120) -> tuple[float, str]:
        """Send the cells back to back, as Run All does: (seconds from the first request
        until the kernel is idle after the last, the last cell's stdout)."""
        start = time.perf_counter()
        ids = [self.kc.execute(code, store_history=True) for code in cells]
        stdout: list[str] = []
        errors: list[str] = []
        deadline = start + timeout
        while True:
            try:
                message = self.kc.get_iopub_msg(timeout=max(0.01, deadline - time.perf_counter()))
            except queue.Empty:
                raise TimeoutError(f"no idle within {timeout} s for {cells!r}") from None
            parent = message["parent_header"].get("msg_id")
            if parent not in ids:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "stream" and content["name"] == "stdout" and parent == ids[-1]:
                stdout.append(content["text"])
            elif (kind == "status" and content["execution_state"] == "idle"
                  and parent == ids[-1]):
                elapsed = time.perf_counter() - start
                break
        for _ in ids:
            self.kc.get_shell_msg(timeout=timeout)
        if errors:
            raise CellFailed(f"{cells!r} failed: {errors}")
        return elapsed, "".join(stdout)

    def run(self, code: str) -> tuple[float, str]:
        return self.run_all(code)

    def close(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


def kernel_env(api_url: str, *, preload: bool, ipython_dir: str) -> dict[str, str]:
    """The kernel's environment: this checkout first on the path, the fake API, no real
    one, no user start-up files."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST",
                                                            "FUXI_PRELOAD", "FUXI_REPLAY")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update({"FUXI_BLOCK_REAL_API": "1", "ANTHROPIC_BASE_URL": api_url,
                "ANTHROPIC_API_KEY": "bench-key", "FUXI_MODEL": MODEL,
                "IPYTHONDIR": ipython_dir})
    if not preload:
        env["FUXI_PRELOAD"] = "0"
    return env


@dataclass
class Sample:
    seconds: float
    rss: int  # the kernel's resident set after the cells
    overhead: float | None = None  # after a pause: first - warm


def _in_kernel(url: str, preload: bool, measure: Callable[[Kernel], Sample]) -> Sample:
    with tempfile.TemporaryDirectory(prefix="fuxi-bench-") as work:
        kernel = Kernel(env=kernel_env(url, preload=preload,
                                       ipython_dir=str(Path(work) / "ipython")), cwd=work)
        try:
            sample = measure(kernel)
            where = kernel.run(WHERE)[1].strip()
            assert Path(where).parent.parent == ROOT, where  # this checkout was measured
            return sample
        finally:
            kernel.close()


def _rss(kernel: Kernel) -> int:
    return int(kernel.run(RSS)[1])


def _checked_live(kernel: Kernel) -> None:
    said = kernel.run(LIVE_CHECK)[1].split()
    assert said == ["success", "1"], said  # one live turn: the cell reached the fake API


def bare(kernel: Kernel) -> Sample:
    seconds, said = kernel.run(BARE_CELL)
    assert said.strip() == "ok", said
    return Sample(seconds, _rss(kernel))


def run_all(kernel: Kernel) -> Sample:
    seconds, _ = kernel.run_all(LOAD_CELL, PROMPT_CELL)
    rss = _rss(kernel)
    _checked_live(kernel)
    return Sample(seconds, rss)


def after_pause(delay: float, warm: int) -> Callable[[Kernel], Sample]:
    def measure(kernel: Kernel) -> Sample:
        kernel.run(LOAD_CELL)
        time.sleep(delay)  # the user typing the first prompt
        first = kernel.run(PROMPT_CELL)[0]
        _checked_live(kernel)
        rss = _rss(kernel)
        warm_times = [kernel.run(PROMPT_CELL)[0] for _ in range(warm)]
        return Sample(first, rss, overhead=first - statistics.median(warm_times))
    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh kernels per configuration")
    parser.add_argument("--delay", type=float, default=3.0,
                        help="seconds between %%load_ext and the first cell (typing)")
    parser.add_argument("--warm", type=int, default=3, help="warm cells per kernel")
    args = parser.parse_args()
    if args.runs < 1 or args.warm < 1:
        parser.error("--runs and --warm must be at least 1")
    configurations: list[tuple[str, bool, Callable[[Kernel], Sample]]] = [
        ("bare", True, bare), ("run all", True, run_all),
        ("run all, no preload", False, run_all),
        ("after a pause", True, after_pause(args.delay, args.warm))]
    samples: dict[str, list[Sample]] = {name: [] for name, _, _ in configurations}
    turns = [[{"type": "text", "text": "ok"}]] * (args.runs * (len(configurations) + args.warm))
    with FakeApiProcess(turns) as url:
        for run in range(args.runs):
            for name, preload, measure in configurations[::1 if run % 2 == 0 else -1]:
                sample = _in_kernel(url, preload, measure)
                samples[name].append(sample)
                extra = (f", overhead {sample.overhead * 1000:.0f} ms"
                         if sample.overhead is not None else "")
                print(f"run {run + 1}/{args.runs} {name:<20}: {sample.seconds * 1000:6.0f} ms"
                      f"{extra}", flush=True)
    report(samples, args.delay)


def report(samples: dict[str, list[Sample]], delay: float) -> None:
    def median(name: str, key: Callable[[Sample], float]) -> float:
        return statistics.median(key(s) for s in samples[name])

    print(f"\n{'configuration':<22} {'cells ms':>9} {'RSS MB':>8}  (the first cell's, medians)")
    for name in samples:
        rss = median(name, lambda s: s.rss) / 2**20
        print(f"{name:<22} {median(name, lambda s: s.seconds) * 1000:9.0f} {rss:8.1f}")
    base = median("bare", lambda s: s.seconds)
    print(f"\nrun all / bare (medians): {median('run all', lambda s: s.seconds) / base:.2f} "
          "(target <= 1.1)")
    print(f"run all without the preload / bare: "
          f"{median('run all, no preload', lambda s: s.seconds) / base:.2f}")
    overhead = median("after a pause", lambda s: s.overhead or 0.0)
    print(f"first cell's own overhead {delay:g} s after %load_ext: {overhead * 1000:.0f} ms "
          "(target < 300 ms)")


if __name__ == "__main__":
    main()
