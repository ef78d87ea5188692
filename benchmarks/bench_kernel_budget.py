"""What a kernel budget (`FUXI_MAX_BUDGET_USD`) costs a `%%fuxi` cell.

    .venv/bin/python benchmarks/bench_kernel_budget.py [--cells 30] [--warm 3]

Two real ipykernels side by side (through jupyter_client, as bench_first_cell.py drives
them), the fake Messages API in a process of its own answering at once: one kernel with
`FUXI_MAX_BUDGET_USD=1000` (every cell capped at what is left, its spend counted, the
budget watched by the cell's policy guard, the guards sealed again after the spend), one
without. After `--warm` cells each, `--cells` rounds of one live cell in each kernel, in an
order that alternates from round to round (drift on a shared machine hits both alike);
each cell is timed from its request until the kernel is idle. Prints the median cell of
each and the ratio with / without (1.0: the budget costs nothing measurable).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_first_cell import ROOT, WHERE, Kernel, kernel_env
from fake_api_process import FakeApiProcess

CELL = "%%fuxi\nsay ok"
CHECK = "print(_fuxi.result.subtype, _fuxi.result.num_turns)"
BUDGET = "FUXI_MAX_BUDGET_USD"


def _kernel(url: str, work: Path, budget: str | None) -> Kernel:
    env = kernel_env(url, preload=True, ipython_dir=str(work / "ipython"))
    env.pop(BUDGET, None)
    if budget is not None:
        env[BUDGET] = budget
    kernel = Kernel(env=env, cwd=str(work))
    kernel.run("%load_ext fuxi_notebook")
    where = kernel.run(WHERE)[1].strip()
    assert Path(where).parent.parent == ROOT, where  # this checkout is measured
    return kernel


def _cell(kernel: Kernel) -> float:
    seconds, _ = kernel.run(CELL)
    said = kernel.run(CHECK)[1].split()
    assert said == ["success", "1"], said  # one live turn, not cut, not failed
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=30, help="measured cells per kernel")
    parser.add_argument("--warm", type=int, default=3, help="cells per kernel not measured")
    args = parser.parse_args()
    if args.cells < 1 or args.warm < 0:
        parser.error("--cells must be at least 1 and --warm at least 0")
    turns = [[{"type": "text", "text": "ok"}]] * (2 * (args.cells + args.warm))
    times: dict[str, list[float]] = {"with": [], "without": []}
    with (FakeApiProcess(turns) as url, tempfile.TemporaryDirectory() as one,
          tempfile.TemporaryDirectory() as two):
        kernels = {"with": _kernel(url, Path(one), "1000"),
                   "without": _kernel(url, Path(two), None)}
        try:
            for _ in range(args.warm):
                for kernel in kernels.values():
                    _cell(kernel)
            for round_ in range(args.cells):
                order = ["with", "without"] if round_ % 2 == 0 else ["without", "with"]
                for name in order:
                    times[name].append(_cell(kernels[name]))
            budget = kernels["with"].run(
                "print(get_ipython().magics_manager.registry['FuxiMagics'].agent.budget)")[1]
            assert "limit=1000.0" in budget and "spent=0.0," not in budget, budget  # counted
        finally:
            for kernel in kernels.values():
                kernel.close()
    with_budget, without = (statistics.median(times[n]) for n in ("with", "without"))
    print(f"cells per kernel: {args.cells} (after {args.warm} warm), alternating order")
    print(f"median cell with {BUDGET}=1000: {with_budget * 1000:7.1f} ms")
    print(f"median cell without it:            {without * 1000:7.1f} ms")
    print(f"ratio with / without (medians): {with_budget / without:.3f}")
    pairs = [w / o for w, o in zip(times["with"], times["without"], strict=True)]
    print(f"median of the per-round ratios: {statistics.median(pairs):.3f}")


if __name__ == "__main__":
    main()
