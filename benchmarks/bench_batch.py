"""A batch on Dask against papermill alone (issue 37): wall time on 1 and 2 workers, and
what the batch adds to each run.

N runs of a small agent notebook (a parameters cell, `%load_ext fuxi_notebook`, a code cell
that writes a file, a `%%fuxi` cell answered by the fake Messages API in a process of its
own, at once) are executed three ways, in turn, each round: papermill alone, one run after
another, each a fresh `python -m papermill` process (what a shell loop over papermill
does); `python -m fuxi_notebook batch` on a local cluster of 1 worker; the same on 2
workers. Prints the medians of `--rounds` rounds, the speed-up of 2 workers over 1, and
the batch's overhead per run over papermill alone (its cluster's start-up included, and
apart), in wall time and in CPU time of all the processes involved (the runs, their
kernels, the cluster's scheduler, nanny and worker): wall time depends on what else the
machine runs, CPU time much less. `--load N` runs N busy processes meanwhile (a machine
that other jobs use), so both conditions are measured on demand. Ends with the
`summary.md` of the first batch on 2 workers, as a person reads it.

Run: .venv/bin/python benchmarks/bench_batch.py [--runs 8] [--rounds 1] [--load 0]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_api_process import FakeApiProcess


def _notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell('region = "north"', id="params")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, nbformat.v4.new_code_cell("%load_ext fuxi_notebook", id="load"),
                nbformat.v4.new_code_cell("open(f'{region}.txt', 'w').write(region)",
                                          id="write"),
                nbformat.v4.new_code_cell("%%fuxi\nSummarise the region.", id="ask")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = folder / "report.ipynb"
    nbformat.write(nb, path)
    return path


def _children_cpu() -> float:
    """CPU seconds of every process this one waited for, and theirs (the runs' kernels,
    the cluster's processes: all are waited for by the process that started them)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command's processes)."""
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return took, _children_cpu() - cpu


def _busy() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--load", type=int, default=0,
                        help="busy processes running meanwhile (other jobs on the machine)")
    args = parser.parse_args()
    regions = [f"region{n}" for n in range(args.runs)]
    turns = [[{"type": "text", "text": "One line."}]] * (args.runs * 3 * args.rounds + 4)
    modes = ("papermill", "batch 1 worker", "batch 2 workers")
    wall: dict[str, list[float]] = {mode: [] for mode in modes}
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.load)]
    for process in busy:
        process.start()
    try:
        with FakeApiProcess(turns) as url, tempfile.TemporaryDirectory() as scratch:
            work = Path(scratch)
            (work / "project").mkdir()
            notebook = _notebook(work / "project")
            env = {**os.environ, "ANTHROPIC_BASE_URL": url, "FUXI_BLOCK_REAL_API": "1",
                   "ANTHROPIC_API_KEY": "sk-ant-bench-key-0000000000000001",
                   "FUXI_MODEL": "claude-sonnet-5-5", "FUXI_PRELOAD": "0"}
            for round_ in range(args.rounds):
                out = work / f"papermill-{round_}"
                out.mkdir()
                took = used = 0.0
                for region in regions:  # each told its notebook, as a batch tells its runs
                    output = out / f"{region}.ipynb"
                    one_wall, one_cpu = _timed(
                        [sys.executable, "-m", "papermill", str(notebook), str(output),
                         "-p", "region", region, "--cwd", str(out), "--no-progress-bar"],
                        {**env, "FUXI_NOTEBOOK": str(output)})
                    took, used = took + one_wall, used + one_cpu
                wall["papermill"].append(took)
                cpu["papermill"].append(used)
                for workers in (1, 2):
                    mode = f"batch {workers} worker{'s' if workers > 1 else ''}"
                    grid = [arg for region in regions for arg in ("-p", "region", region)]
                    took, used = _timed(
                        [sys.executable, "-m", "fuxi_notebook", "batch", str(notebook), *grid,
                         "--out", str(work / f"batch-{workers}-{round_}"),
                         "--workers", str(workers)], env)
                    wall[mode].append(took)
                    cpu[mode].append(used)
            summary = json.loads((work / "batch-1-0" / "summary.json").read_text())
            assert summary["succeeded"] == args.runs, summary
            table = (work / "batch-2-0" / "summary.md").read_text()
            cluster = _cluster_start(env)
    finally:
        for process in busy:
            process.terminate()
    walls = {mode: statistics.median(times) for mode, times in wall.items()}
    cpus = {mode: statistics.median(times) for mode, times in cpu.items()}
    print(f"{args.runs} runs of a small agent notebook, medians of {args.rounds} round(s), "
          f"{args.load} busy process(es) meanwhile, {os.cpu_count()} cores:")
    for mode in modes:
        print(f"  {mode:<16} {walls[mode]:7.1f} s  ({walls[mode] / args.runs:.2f} s a run)  "
              f"CPU {cpus[mode] / args.runs:.2f} s a run")
    one, two, alone = walls["batch 1 worker"], walls["batch 2 workers"], walls["papermill"]
    print(f"speed-up of 2 workers over 1: {one / two:.2f}x")
    print(f"batch on 1 worker / papermill alone: {one / alone:.2f}x; overhead "
          f"{(one - alone) / args.runs:.2f} s a run, of which the local cluster's start "
          f"and stop ({cluster:.1f} s) is {cluster / args.runs:.2f} s a run")
    print(f"CPU of the batch on 1 worker / papermill alone: "
          f"{cpus['batch 1 worker'] / cpus['papermill']:.2f}x "
          f"(+{(cpus['batch 1 worker'] - cpus['papermill']) / args.runs:.2f} s a run)")
    print("\nsummary.md of the first batch on 2 workers:\n")
    print(table)


def _cluster_start(env: dict[str, str]) -> float:
    """A local cluster of one worker started and closed, as a batch does."""
    code = ("import logging, time; from distributed import LocalCluster, Client\n"
            "t = time.perf_counter()\n"
            "c = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, "
            "dashboard_address=None, silence_logs=logging.ERROR); k = Client(c)\n"
            "k.close(); c.close(); print(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
