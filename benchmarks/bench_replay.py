"""A replayed notebook against its live run, and nbval of it against the notebook alone.

    .venv/bin/python benchmarks/bench_replay.py [--runs 3] [--latency 1.0]
                                                [--notebook quickstart.ipynb]

1. The `%%fuxi` cells, live against replayed. Every code cell of the notebook runs in
   order in a fresh kernel, as JupyterLab with fuxi's extension runs it
   (`fuxi_notebook.testing.frontend`, cards clicked at once: "Always allow", "Replay"):
   - live: an API key, `FUXI_REPLAY=off`, and the fake Messages API in a process of its
     own (benchmarks/fake_api_process.py) answering with the notebook's recorded turns,
     each `--latency` seconds after its request (a model's time to first token);
   - replayed: no key, so the recorded cells replay (after the consent card).
   Each `%%fuxi` cell is timed from its request until its reply; the ratio is the sum over
   the cells, live / replayed (target >= 10 at 1 s per response). Both sides load the
   agent in the same kernel the same way (`%load_ext` starts its background preload).
2. nbval: `pytest --nbval --nbval-current-env` of the notebook (the package's pytest
   plugin replays it strictly), against the same notebook without its `%%fuxi` cells
   (target <= 1.5; its later cells may fail without what the agent made: only the time
   counts), and against the notebook with each `%%fuxi` cell replaced by the code its
   recorded Python calls ran (the same work written by hand).

Configurations alternate from round to round; medians over `--runs` rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from fake_api_process import FakeApiProcess

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing.frontend import Card, NotebookFrontend

ROOT = Path(__file__).resolve().parent.parent


def _is_fuxi(cell: Any) -> bool:
    return bool(cell.cell_type == "code" and cell.source.startswith("%%fuxi"))


def _record(cell: Any) -> dict[str, Any]:
    output = next(o for o in cell.outputs if RECORD_MIME in o.get("data", {}))
    return dict(output["data"][RECORD_MIME])


def _assistant_blocks(cell: Any) -> list[list[dict[str, Any]]]:
    """The recorded model turns of a cell, as wire content (what the fake API serves)."""
    return [list(m["content"]) if isinstance(m["content"], list)
            else [{"type": "text", "text": m["content"]}]
            for m in _record(cell)["messages"] if m["role"] == "assistant"]


def _python_code(cell: Any) -> str:
    """The code the cell's recorded Python calls ran, in order: the same work by hand."""
    return "\n".join(block["input"]["code"] for turn in _assistant_blocks(cell)
                     for block in turn if block.get("type") == "tool_use"
                     and block.get("name") == "Python") or "pass"


def _decide(card: Card) -> tuple[str, str | None]:
    for label in ("Always allow", "Replay", "Allow"):
        if label in card.buttons:
            return label, None
    raise AssertionError(f"a card without a known button: {list(card.buttons)}")


def _fuxi_cells_time(folder: Path, path: Path, env: dict[str, str]) -> list[float]:
    """Seconds each of the notebook's `%%fuxi` cells took, every code cell run in order."""
    notebook = nbformat.read(path, as_version=4)
    each: list[float] = []
    with NotebookFrontend(cwd=str(folder), env=env, flavor="lab", path=str(path)) as frontend:
        frontend.open(notebook)
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            started = time.perf_counter()
            status = frontend.execute(cell, decide=_decide)
            if _is_fuxi(cell):
                each.append(time.perf_counter() - started)
            if status != "ok":
                raise SystemExit(f"cell {cell.id} failed: {json.dumps(cell.outputs)[:2000]}")
    return each


def _nbval(folder: Path, path: Path, *, must_pass: bool = False) -> list[float]:
    """Wall seconds of `pytest --nbval` on one notebook, in a fresh process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env",
                           "-q", "-p", "no:cacheprovider", str(path)], cwd=folder,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
                               "FUXI_BLOCK_REAL_API": "1", "ANTHROPIC_API_KEY": ""})
    if must_pass and done.returncode != 0:
        raise SystemExit(f"nbval of {path.name} failed:\n{done.stdout[-3000:]}")
    return [time.perf_counter() - started]


def _variants(folder: Path, path: Path) -> tuple[Path, Path]:
    """The notebook without its `%%fuxi` cells, and with each one's Python code instead."""
    notebook = nbformat.read(path, as_version=4)
    without = nbformat.v4.new_notebook(metadata=notebook.metadata)
    by_hand = nbformat.v4.new_notebook(metadata=notebook.metadata)
    for cell in notebook.cells:
        if _is_fuxi(cell):
            by_hand.cells.append(nbformat.v4.new_code_cell(_python_code(cell)))
            continue
        without.cells.append(cell)
        by_hand.cells.append(cell)
    paths = (folder / f"{path.stem}-without-fuxi.ipynb", folder / f"{path.stem}-by-hand.ipynb")
    for target, variant in zip(paths, (without, by_hand), strict=True):
        nbformat.write(variant, target)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds (fresh kernels each)")
    parser.add_argument("--latency", type=float, default=1.0,
                        help="seconds the live model takes per response")
    parser.add_argument("--notebook", default="quickstart.ipynb",
                        help="a notebook of notebooks/ with recorded %%fuxi cells")
    args = parser.parse_args()
    times: dict[str, list[list[float]]] = {name: [] for name in (
        "live", "replayed", "nbval replayed", "nbval without fuxi", "nbval by hand")}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "notebooks"
        shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns("work"))
        path = folder / args.notebook
        saved = nbformat.read(path, as_version=4)
        cells = [c for c in saved.cells if _is_fuxi(c)]
        turns = [turn for cell in cells for turn in _assistant_blocks(cell)]
        without, by_hand = _variants(folder, path)
        base = {"FUXI_NOTEBOOK": str(path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
                "FUXI_BLOCK_REAL_API": "1", "FUXI_REPLAY": "", "FUXI_PRELOAD": "1"}

        def live() -> list[float]:
            with FakeApiProcess(turns, latency=args.latency) as url:
                return _fuxi_cells_time(folder, path, {
                    **base, "FUXI_REPLAY": "off", "ANTHROPIC_BASE_URL": url,
                    "ANTHROPIC_API_KEY": "bench-key"})

        def replayed() -> list[float]:
            return _fuxi_cells_time(folder, path, {**base, "ANTHROPIC_API_KEY": ""})

        steps = [("live", live), ("replayed", replayed),
                 ("nbval replayed", lambda: _nbval(folder, path, must_pass=True)),
                 ("nbval without fuxi", lambda: _nbval(folder, without)),
                 ("nbval by hand", lambda: _nbval(folder, by_hand))]
        for run in range(args.runs):
            for name, step in steps[::1 if run % 2 == 0 else -1]:
                times[name].append(step())
                cells_said = " + ".join(f"{t:.2f}" for t in times[name][-1])
                print(f"run {run + 1}/{args.runs} {name:<19} {sum(times[name][-1]):6.2f} s"
                      + (f" ({cells_said})" if len(times[name][-1]) > 1 else ""), flush=True)
    median = {name: statistics.median(sum(v) for v in values) for name, values in times.items()}
    print(f"\n{args.notebook}: {len(cells)} %%fuxi cells, {len(turns)} model responses, "
          f"live at {args.latency:g} s per response")
    for name, value in median.items():
        print(f"  {name:<19} {value:6.2f} s (median of {args.runs})")
    print(f"%%fuxi cells, live / replayed: {median['live'] / median['replayed']:.1f}x "
          "(target >= 10)")
    print(f"nbval, replayed / without its %%fuxi cells: "
          f"{median['nbval replayed'] / median['nbval without fuxi']:.2f} (target <= 1.5); "
          f"/ its Python calls by hand: {median['nbval replayed'] / median['nbval by hand']:.2f}")


if __name__ == "__main__":
    main()
