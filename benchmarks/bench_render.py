"""A long answer on the real path: a kernel as JupyterLab runs it, what reaches the frontend.

A fresh ipykernel (through jupyter_client, `%load_ext fuxi_notebook`, `FUXI_FRONTEND=lab`:
the live view with its cards, as in JupyterLab) runs `%%fuxi` cells whose answers the fake
Messages API, in a process of its own, streams as fast as it can in 16-character deltas.
The answers are model-like markdown (paragraphs of about 60 words, a list, a fenced code
block now and then). Sizes alternate (small, 4x larger, small, ...) in one kernel; for
each cell the time from the request to the kernel's reply, and every byte of
`display_data`/`update_display_data` content on iopub (what a browser is sent) are counted,
split into the live view (before the cell's final outputs) and the final outputs.

Prints, per size, the median cell time, updates and bytes per answer character, and the
ratio of the time of a 4x longer answer to the shorter one's (linear is 4x).

Run: .venv/bin/python benchmarks/bench_render.py [--sizes 60000,240000,1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.notebook.kernel_harness import KernelHarness

WORDS = ("the model data frame column value region sales quarter mean trend token cost "  # noqa: SIM905
         "fit plot figure rows table north south growth rate error check").split()


def answer(size: int, seed: int) -> str:
    """`size` characters of model-like markdown: paragraphs, a list, a code block."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.1:
            part = "\n".join(f"- {' '.join(rng.choices(WORDS, k=8))}" for _ in range(5))
        elif kind < 0.2:
            body = "\n".join(f"x_{n} = df['{rng.choice(WORDS)}'].mean()  # {n}"
                             for n in range(12))
            part = f"```python\n{body}\n```"
        else:
            part = " ".join(rng.choices(WORDS, k=60)).capitalize() + "."
        parts.append(part)
        total += len(part) + 2
    return "\n\n".join(parts)[:size]


def _serve(script: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "fuxi_notebook.testing", "serve", "--script", str(script),
         "--chunk", "16"], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("FAKE_API_URL="), line
    return process, line.strip().split("=", 1)[1]


def _measure(messages: list[dict[str, Any]]) -> dict[str, float]:
    """Display bytes before and after the cell's final outputs began (its clear_output)."""
    live = final = updates = largest = 0
    cleared = False
    for message in messages:
        kind = message["msg_type"]
        if kind == "clear_output":
            cleared = True
        elif kind in ("display_data", "update_display_data"):
            size = len(json.dumps(message["content"]))
            if cleared:
                final += size
            else:
                live += size
                updates += kind == "update_display_data"
                largest = max(largest, size)
    return {"live": live, "final": final, "updates": updates, "largest": largest}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="60000,240000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    order = [1000] + [size for _ in range(args.runs) for size in sizes]  # 1st: warm-up
    work = Path(tempfile.mkdtemp(prefix="fuxi-render-"))
    steps = [{"content": [{"type": "text", "text": answer(size, n)}]}
             for n, size in enumerate(order)]
    script = work / "script.json"
    script.write_text(json.dumps(steps))
    server, url = _serve(script)
    kernel = KernelHarness(cwd=str(work), env={
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-bench-key-0000000000000001",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5",
        "FUXI_FRONTEND": "lab", "FUXI_STALL_TIMEOUT": "600",
        "PATH": os.environ.get("PATH", "")})
    try:
        assert kernel.run("%load_ext fuxi_notebook").status == "ok"
        seen: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
        for n, size in enumerate(order):
            start = time.perf_counter()
            result = kernel.run(f"%%fuxi\nanswer {n}", cell_id=f"c{n}", timeout=1800)
            took = time.perf_counter() - start
            assert result.status == "ok", result.reply
            if n == 0:
                continue  # the warm-up: the agent's first cell imports it
            seen[size].append({"time": took, **_measure(result.messages)})
        print(f"{'answer':>12}{'cell s':>9}{'updates':>9}{'largest KB':>12}{'live B/char':>13}"
              f"{'final B/char':>14}{'all B/char':>12}")
        medians = {}
        for size in sizes:
            rows = seen[size]
            med = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
            medians[size] = med
            print(f"{size:>12,}{med['time']:>9.2f}{med['updates']:>9.0f}"
                  f"{med['largest'] / 1000:>12.1f}"
                  f"{med['live'] / size:>13.2f}{med['final'] / size:>14.2f}"
                  f"{(med['live'] + med['final']) / size:>12.2f}")
        for small, large in itertools.pairwise(sizes):
            ratio = medians[large]["time"] / medians[small]["time"]
            print(f"time of {large:,} / {small:,} characters ({large / small:.1f}x longer): "
                  f"{ratio:.2f}x")
    finally:
        kernel.close()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
