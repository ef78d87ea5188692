"""`python -m fuxi_notebook batch NOTEBOOK -p NAME VALUE ... --out DIR`: its arguments and
its run (the package docstring says what a batch does). Bad input is one line and exit
status 2; a batch whose runs all succeeded exits 0, else 1; an interrupt 130."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .params import BatchInputError, make_grid

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    parser.add_argument("-p", "--parameters", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"),
                        help="a parameter (as papermill's -p); a name given several times "
                             "makes a grid: one run per combination")
    parser.add_argument("-y", "--parameters_yaml", action="append", default=[],
                        metavar="YAML", help="parameters as a YAML mapping")
    parser.add_argument("-f", "--parameters_file", action="append", default=[],
                        metavar="FILE.yaml", help="parameters from a YAML file")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the batch's folder: a folder per run, summary.json, summary.md")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="a local Dask cluster of N workers (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="an existing Dask cluster's scheduler (tcp://host:8786)")
    parser.add_argument("--max-budget-usd", type=float, metavar="USD",
                        help="the most one run may spend")
    parser.add_argument("--max-budget-usd-total", type=float, metavar="USD",
                        help="the most the whole batch may spend")
    parser.add_argument("--replay", action="store_true",
                        help="re-run a finished batch from its output notebooks, no API key")
    parser.add_argument("--kernel", metavar="NAME", help="the kernel (default: the notebook's)")


def main(args: argparse.Namespace, say_error: Callable[[str, object], None]) -> int:
    from .orchestrate import BatchOptions, run_batch

    say, on_progress, close = _reporting(sys.stdout.isatty())
    try:
        grid = make_grid([tuple(pair) for pair in args.parameters], args.parameters_yaml,
                         [Path(f) for f in args.parameters_file])
        if args.replay and grid != [{}]:
            raise BatchInputError("--replay re-runs the batch's own output notebooks: give "
                                  "no parameters")
        options = BatchOptions(
            notebook=Path(args.notebook).expanduser(), out=Path(args.out).expanduser(),
            grid=grid, workers=args.workers, scheduler=args.scheduler,
            max_budget_usd=args.max_budget_usd,
            max_budget_usd_total=args.max_budget_usd_total, replay=args.replay,
            kernel=args.kernel, say=say, on_progress=on_progress)
        result = run_batch(options)
    except BatchInputError as error:
        say_error("fuxi batch", error)
        return 2
    except KeyboardInterrupt:
        close()
        print("fuxi batch: interrupted; finished runs are kept (run the same command again "
              "to go on)", file=sys.stderr, flush=True)
        return 130
    finally:
        close()
    return result.exit_code


def _reporting(terminal: bool) -> tuple[Callable[[str], None], Callable[[Any], None] | None,
                                        Callable[[], None]]:
    """(say a line, show progress, close): plain lines when not a terminal; in a terminal,
    a progress bar with the lines printed above it."""
    if not terminal:
        return (lambda line: print(line, flush=True)), None, (lambda: None)
    import importlib

    tqdm: Any = importlib.import_module("tqdm").tqdm  # papermill's own dependency
    bar: list[Any] = []

    def show(progress: Any) -> None:
        if not bar:
            bar.append(tqdm(total=progress.total, unit="run", dynamic_ncols=True))
        bar[0].n = progress.done
        bar[0].set_postfix_str(f"{progress.running} running, {progress.failed} failed, "
                               f"${progress.spent_usd:.4f} spent")

    def say(line: str) -> None:
        if bar:
            tqdm.write(line)  # above the bar
        else:
            print(line, flush=True)

    def close() -> None:
        if bar:
            bar[0].close()
            bar.clear()

    return say, show, close
