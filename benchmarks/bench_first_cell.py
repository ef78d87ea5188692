"""The first `%%fuxi` cell after `%load_ext`: its own overhead, with and without preload.

    .venv/bin/python benchmarks/bench_first_cell.py [--runs 5] [--delay 3.0] [--warm 3]

`%load_ext fuxi_notebook` starts a thread that imports the agent's modules in the
background (`extension.PRELOAD`); `FUXI_PRELOAD=0` turns it off. For each configuration
(preload on, the default, and off), alternating, over `--runs` fresh ipykernels:

1. `%load_ext fuxi_notebook` timed with `time.perf_counter()` inside its own cell, and
   the kernel's RSS just before it.
2. A pause of `--delay` seconds, modelling the user typing the first prompt.
3. `%%fuxi --new` / `say ok` against a fake Messages API in this process, timed from the
   client (execute_request sent until the kernel reports idle), then the RSS; then the
   same cell `--warm` more times. The warm cells pay the same model, network and
   round-trip costs but no imports, so the first cell's overhead is first - warm (the
   median of the warm cells of that kernel).

Prints medians over the kernels and the ratio overhead(preload off) / overhead(preload
on). Targets (PRODUCT.md): `%load_ext` < 0.3 s; overhead of the first cell < 0.3 s when
typed a few seconds after loading (it was 1.5-2.1 s and +27 MB before the preload).
Numbers from one run on a noisy machine: read them as medians and ratios, not limits.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec

from fuxi_notebook.testing import FakeMessagesServer, Turn, text

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-5-5"
PROMPT_CELL = "%%fuxi --new\nsay ok"

# defined in the kernel before `%load_ext`: resident set size in bytes, Linux or not
RSS_HELPER = """\
import os as __os, time as __time
def __rss():
    try:
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * __os.sysconf('SC_PAGE_SIZE')
    except OSError:  # no /proc: peak RSS instead (KiB on Linux, bytes on macOS)
        import resource, sys
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == 'darwin' else peak * 1024
"""
LOAD_CELL = ("print(__rss())\n__t = __time.perf_counter()\n%load_ext fuxi_notebook\n"
             "print(__time.perf_counter() - __t)")
PRELOAD_ALIVE = ("import threading as __th\n"
                 "print(any(t.name == 'fuxi-preload' for t in __th.enumerate()))")


class CellFailed(RuntimeError):
    """A cell ended with an error (the benchmark measured something else)."""


@dataclass
class Kernel:
    """A fresh ipykernel and a synchronous client: one request at a time."""

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

    def run(self, code: str, timeout: float = 60) -> tuple[float, str]:
        """Run a cell: (seconds from sending it until the kernel is idle, its stdout)."""
        start = time.perf_counter()
        msg_id = self.kc.execute(code, store_history=True)
        stdout, errors = [], []
        deadline = start + timeout
        while True:
            try:
                message = self.kc.get_iopub_msg(timeout=max(0.01, deadline - time.perf_counter()))
            except queue.Empty:
                raise TimeoutError(f"no idle within {timeout} s for {code!r}") from None
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content["execution_state"] == "idle":
                elapsed = time.perf_counter() - start
                break
            if kind == "stream" and content["name"] == "stdout":
                stdout.append(content["text"])
            elif kind == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")
        reply = self.kc.get_shell_msg(timeout=timeout)
        if errors or reply["content"]["status"] != "ok":
            raise CellFailed(f"{code!r} failed: {errors or reply['content']}")
        return elapsed, "".join(stdout)

    def close(self) -> None:
        """Stop the channels and the kernel process."""
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


@dataclass
class Sample:
    """What one fresh kernel measured."""

    load_ext: float
    first: float
    warm: float
    rss_delta: int
    preload_alive: bool

    @property
    def overhead(self) -> float:
        return self.first - self.warm


def kernel_env(api_url: str, *, preload: bool, ipython_dir: str) -> dict[str, str]:
    """The kernel's environment: this checkout first on the path, the fake API, no real one."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update({"FUXI_BLOCK_REAL_API": "1", "ANTHROPIC_BASE_URL": api_url,
                "ANTHROPIC_API_KEY": "bench-key", "FUXI_MODEL": MODEL,
                "IPYTHONDIR": ipython_dir})  # no user startup files in the measurement
    env.pop("FUXI_PRELOAD", None)
    if not preload:
        env["FUXI_PRELOAD"] = "0"
    return env


def measure(api: FakeMessagesServer, *, preload: bool, delay: float, warm: int) -> Sample:
    """One fresh kernel: `%load_ext`, the typing pause, the first and the warm cells."""
    with tempfile.TemporaryDirectory(prefix="fuxi-bench-") as work:
        env = kernel_env(api.url, preload=preload, ipython_dir=str(Path(work) / "ipython"))
        kernel = Kernel(env=env, cwd=work)
        try:
            kernel.run(RSS_HELPER)
            where = kernel.run("import fuxi_notebook; print(fuxi_notebook.__file__)")[1]
            assert Path(where.strip()).parent.parent == ROOT, where  # this checkout
            rss_before, load_seconds = kernel.run(LOAD_CELL)[1].split()
            time.sleep(delay)  # the user typing the first prompt
            alive = kernel.run(PRELOAD_ALIVE)[1].strip() == "True"
            asked = len(api.requests)
            api.add(Turn([text("ok")]))
            first = kernel.run(PROMPT_CELL)[0]
            assert len(api.requests) > asked, "the first cell did not reach the fake API"
            rss_after = int(kernel.run("print(__rss())")[1])
            warm_times = []
            for _ in range(warm):
                api.add(Turn([text("ok")]))
                warm_times.append(kernel.run(PROMPT_CELL)[0])
        finally:
            kernel.close()
    return Sample(load_ext=float(load_seconds), first=first, warm=statistics.median(warm_times),
                  rss_delta=rss_after - int(rss_before), preload_alive=alive)


def report(samples: dict[str, list[Sample]]) -> None:
    """The table of medians and the off / on ratio of the first cell's overhead."""
    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:8.0f}"

    print(f"{'configuration':<13} {'load_ext':>8} {'first':>8} {'warm':>8} "
          f"{'overhead':>8} {'RSS +MB':>8}  preload still running at first cell")
    print(f"{'':<13} {'ms':>8} {'ms':>8} {'ms':>8} {'ms':>8}")
    for name, runs in samples.items():
        rss = statistics.median(s.rss_delta for s in runs) / 2**20
        alive = sum(s.preload_alive for s in runs)
        print(f"{name:<13} {ms([s.load_ext for s in runs])} {ms([s.first for s in runs])} "
              f"{ms([s.warm for s in runs])} {ms([s.overhead for s in runs])} {rss:8.1f}  "
              f"{alive}/{len(runs)}")
    on = statistics.median(s.overhead for s in samples["preload on"])
    off = statistics.median(s.overhead for s in samples["preload off"])
    ratio = f"{off / on:.1f}" if on > 0.001 else "n/a (overhead with preload ~ 0)"
    print(f"\noverhead ratio, preload off / on (medians): {ratio}")
    print(f"first-cell overhead with preload: {on * 1000:.0f} ms (target < 300 ms); "
          f"%load_ext: {statistics.median(s.load_ext for s in samples['preload on']) * 1000:.0f}"
          " ms (target < 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh kernels per configuration")
    parser.add_argument("--delay", type=float, default=3.0,
                        help="seconds between %%load_ext and the first cell (typing)")
    parser.add_argument("--warm", type=int, default=3, help="warm cells per kernel")
    args = parser.parse_args()
    if args.runs < 1 or args.warm < 1:
        parser.error("--runs and --warm must be at least 1")
    samples: dict[str, list[Sample]] = {"preload on": [], "preload off": []}
    with FakeMessagesServer() as api:
        for run in range(args.runs):
            order = [("preload on", True), ("preload off", False)]
            for name, preload in order[::1 if run % 2 == 0 else -1]:  # drift hits both alike
                sample = measure(api, preload=preload, delay=args.delay, warm=args.warm)
                samples[name].append(sample)
                print(f"run {run + 1}/{args.runs} {name:<11}: load_ext "
                      f"{sample.load_ext * 1000:.0f} ms, first {sample.first * 1000:.0f} ms, "
                      f"warm {sample.warm * 1000:.0f} ms, RSS +{sample.rss_delta / 2**20:.1f} MB",
                      flush=True)
    print()
    report(samples)


if __name__ == "__main__":
    main()
