"""nbval at scale: N replayed notebooks on K = 1 and K = 2 pytest-xdist workers.

    .venv/bin/python benchmarks/bench_nbval_xdist.py [--notebooks 16] [--runs 3]

N copies of the shipped replayable notebooks (notebooks/*.ipynb and batch/, taken in
turn), each in a folder of its own holding a copy of notebooks/ (what it reads and writes
stays its own), are replayed by `pytest --nbval --nbval-current-env -n K` (the package's
pytest plugin replays each strictly and keeps a notebook's cells on one worker) in a fresh
process: no key, no network. K = 1 and K = 2 alternate from round to round (the order
flips each round); each run must pass. It prints every run's wall time and CPU time (all
its processes, kernels included), the medians, and the speed-up median(K = 1) /
median(K = 2), measured in this one run, with the load average (other work on the cores).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORED = shutil.ignore_patterns("work", "out", ".ipynb_checkpoints")


def _shipped() -> list[Path]:
    """The replayable notebooks under notebooks/, relative to it (not what runs wrote)."""
    found = (p.relative_to(ROOT / "notebooks") for p in (ROOT / "notebooks").rglob("*.ipynb"))
    return sorted(p for p in found if not {"work", "out", ".ipynb_checkpoints"} & set(p.parts))


def _copies(scratch: Path, count: int) -> list[Path]:
    """`count` notebooks, each in its own copy of notebooks/, the shipped ones in turn."""
    shipped = _shipped()
    paths = []
    for n in range(count):
        folder = scratch / f"{n:02d}"
        shutil.copytree(ROOT / "notebooks", folder, ignore=IGNORED)
        paths.append(folder / shipped[n % len(shipped)])
    return paths


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _nbval(scratch: Path, notebooks: list[Path], workers: int) -> tuple[float, float, int]:
    """Wall seconds of one `pytest --nbval -n workers` over the notebooks, the CPU seconds
    of its processes (controller, workers, kernels), and the cells that passed."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-n", str(workers),
         "-q", "-p", "no:cacheprovider", *(str(p.relative_to(scratch)) for p in notebooks)],
        cwd=scratch, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
             "FUXI_BLOCK_REAL_API": "1", "ANTHROPIC_API_KEY": ""})
    took, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"-n {workers} failed:\n{done.stdout[-4000:]}{done.stderr[-2000:]}")
    last = done.stdout.strip().splitlines()[-1]
    return took, cpu, int(last.split(" passed")[0].split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=int, default=16, help="N, the notebooks replayed")
    parser.add_argument("--runs", type=int, default=3, help="rounds, each K = 1 and K = 2")
    args = parser.parse_args()
    times: dict[int, list[float]] = {1: [], 2: []}
    cpus: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        notebooks = _copies(scratch, args.notebooks)
        names = sorted({p.name for p in notebooks})
        print(f"N = {len(notebooks)} notebooks ({', '.join(names)}), {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f} before")
        for run in range(args.runs):
            for workers in ((1, 2) if run % 2 == 0 else (2, 1)):
                took, cpu, cells = _nbval(scratch, notebooks, workers)
                times[workers].append(took)
                cpus[workers].append(cpu)
                print(f"round {run + 1}: -n {workers}: {took:6.1f} s wall, {cpu:6.1f} s CPU "
                      f"({cells} cells passed)", flush=True)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"load average {os.getloadavg()[0]:.1f} after (other work on the same cores)")
    cpu_one, cpu_two = statistics.median(cpus[1]), statistics.median(cpus[2])
    print(f"median CPU: K = 1 {cpu_one:.1f} s, K = 2 {cpu_two:.1f} s "
          f"(K=2/K=1 = {cpu_two / cpu_one:.2f}x)")
    print(f"median wall: K = 1 {one:.1f} s, K = 2 {two:.1f} s; "
          f"speed-up K=1/K=2 = {one / two:.2f}x (ideal 2.00x on 2 free cores)")


if __name__ == "__main__":
    main()
