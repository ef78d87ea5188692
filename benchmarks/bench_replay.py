"""Replay of the quickstart notebook: wall time against the model time of a live run.

    .venv/bin/python benchmarks/bench_replay.py [--ttft 1.0] [--tps 60]

Replays `notebooks/quickstart.ipynb` headless (as nbval does: no cell ids, no API key,
strict) in a fresh kernel and times each `%%fuxi` cell. The live run's model time comes
from the notebook's own metadata when it was recorded live (`duration_api_ms`); the
committed notebooks are recorded on the fake API, so it is estimated from the record
instead: per model turn a time to first token (`--ttft`) plus its output tokens at
`--tps` tokens per second, both printed. Also prints the same cells run "live" against the
instant fake API, which shows what the loop itself adds. Ratios from one run.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn
from fuxi_notebook.testing.frontend import NotebookFrontend

ROOT = Path(__file__).resolve().parent.parent


def _fuxi_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%fuxi")]


_PROBE = "print(_fuxi.result.duration_ms, _fuxi.result.duration_api_ms)"


def _run(folder: Path, path: Path, env: dict[str, str]
         ) -> dict[str, tuple[float, float, float]]:
    """cell id -> (wall s, loop s, model s) of each %%fuxi cell, running every code cell
    in order (the loop time is the run inside the cell: tools, loop and model)."""
    nb = nbformat.read(path, as_version=4)
    times = {}
    with NotebookFrontend(cwd=str(folder), env=env, cell_ids=False) as frontend:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            started = time.perf_counter()
            status = frontend.execute(cell, decide=lambda card: ("Always allow", None))
            wall = time.perf_counter() - started
            if status != "ok":
                raise SystemExit(f"cell {cell.id} failed: {cell.outputs}")
            if cell.source.startswith("%%fuxi"):
                probe = nbformat.v4.new_code_cell(_PROBE)
                frontend.execute(probe, counted=False)
                loop_ms, model_ms = (int(x) for x in probe.outputs[0]["text"].split())
                times[cell.id] = (wall, loop_ms / 1000, model_ms / 1000)
    return times


def _model_time(cell: nbformat.NotebookNode, ttft: float, tps: float) -> tuple[float, str]:
    output = next(o for o in cell.outputs if RECORD_MIME in o.get("data", {}))
    volatile = output.get("metadata", {}).get("fuxi", {})
    if "duration_api_ms" in volatile:
        return volatile["duration_api_ms"] / 1000, "recorded"
    record = output["data"][RECORD_MIME]
    turns = sum(1 for m in record["messages"] if m["role"] == "assistant")
    tokens = sum(m.get("outputTokens", 0) for m in volatile.get("model_usage", {}).values())
    return turns * ttft + tokens / tps, "estimated"


def _recorded_turns(cell: nbformat.NotebookNode) -> list[Turn]:
    output = next(o for o in cell.outputs if RECORD_MIME in o.get("data", {}))
    messages = output["data"][RECORD_MIME]["messages"]
    return [Turn(list(m["content"]) if isinstance(m["content"], list) else
                 [{"type": "text", "text": m["content"]}])
            for m in messages if m["role"] == "assistant"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ttft", type=float, default=1.0, help="seconds to first token")
    parser.add_argument("--tps", type=float, default=60.0, help="output tokens per second")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "notebooks"
        shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns("work"))
        path = folder / "quickstart.ipynb"
        saved = nbformat.read(path, as_version=4)
        cells = _fuxi_cells(saved)
        base = {"FUXI_NOTEBOOK": str(path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
                "FUXI_BLOCK_REAL_API": "1"}
        replay = _run(folder, path, {**base, "FUXI_REPLAY": "strict", "ANTHROPIC_API_KEY": ""})
        steps = [turn for cell in cells for turn in _recorded_turns(cell)]
        with FakeMessagesServer(steps) as api:
            live = _run(folder, path, {**base, "FUXI_REPLAY": "off", "ANTHROPIC_BASE_URL": api.url,
                                      "ANTHROPIC_API_KEY": "bench-key", "FUXI_FRONTEND": "lab"})
    print(f"quickstart.ipynb, {len(cells)} %%fuxi cells; live model time: "
          f"{args.ttft:g} s to first token + output tokens at {args.tps:g} tok/s per turn "
          "(unless recorded live)")
    print("replay wall: the whole cell; of it, in the loop: tools + loop (model time 0); "
          "the rest is the cell's own work and, in the first cell, loading the agent")
    print(f"{'cell':>6} {'replay wall':>12} {'in the loop':>12} {'instant fake API':>17} "
          f"{'live model time':>16} {'live / replay':>14}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for cell in cells:
        model, how = _model_time(cell, args.ttft, args.tps)
        wall, loop, _ = replay[cell.id]
        live_total = model + live[cell.id][1] - live[cell.id][2]  # model + tools + loop
        for index, value in enumerate((wall, loop, live[cell.id][0], live_total)):
            totals[index] += value
        print(f"{cell.id:>6} {wall:>11.2f}s {loop:>11.2f}s {live[cell.id][0]:>16.2f}s "
              f"{live_total:>10.2f}s ({how[:3]}) {live_total / wall:>13.1f}x")
    print(f"{'total':>6} {totals[0]:>11.2f}s {totals[1]:>11.2f}s {totals[2]:>16.2f}s "
          f"{totals[3]:>15.2f}s {totals[3] / totals[0]:>13.1f}x")
    print("live model time = modelled model time + the same tools and loop; "
          "live / replay compares it with the whole replayed cell")


if __name__ == "__main__":
    main()
