"""A cold one-shot `query()` process against a hand-written one, in fresh interpreters.

    .venv/bin/python benchmarks/bench_cold_start.py [--runs 9]

Each run starts a fresh interpreter that imports what it needs and sends one prompt to the
fake Messages API (benchmarks/fake_api_process.py, in a process of its own, answering at
once), then exits:

- `ours`: `query()` from `fuxi_notebook`, default options, read to its `ResultMessage`;
- `hand-written`: `AsyncAnthropic().messages.stream(...)`, the final message read.

Wall time from starting the process until it exited; the two alternate, medians over
`--runs`. Prints the ratio ours / hand-written (target <= 1.1), then one `-X importtime`
run of each: how the import time splits between `anthropic`, this package, the HTTP stack
and the rest, and how many modules each process loaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fake_api_process import FakeApiProcess

ROOT = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-5-5"
COUNT = "import sys; print('MODULES', len(sys.modules), file=sys.stderr)"
OURS = f"""\
import asyncio, sys
from fuxi_notebook import FuxiAgentOptions, ResultMessage, query

async def main():
    async for message in query(prompt="say ok", options=FuxiAgentOptions(cwd=sys.argv[1])):
        if isinstance(message, ResultMessage):
            assert message.subtype == "success", message

asyncio.run(main())
{COUNT}
"""
HAND_WRITTEN = f"""\
import asyncio
from anthropic import AsyncAnthropic

async def main():
    client = AsyncAnthropic()
    async with client.messages.stream(model={MODEL!r}, max_tokens=1024,
                                      messages=[{{"role": "user", "content": "say ok"}}]) as s:
        message = await s.get_final_message()
    assert message.content[0].text == "ok", message

asyncio.run(main())
{COUNT}
"""
GROUPS = (("anthropic", ("anthropic",)), ("fuxi_notebook", ("fuxi_notebook",)),
          ("HTTP stack", ("httpx2", "httpcore2", "h11", "anyio", "sniffio", "certifi",
                          "truststore", "idna")),
          ("pydantic", ("pydantic", "pydantic_core", "annotated_types", "typing_inspection")),
          ("trio", ("trio", "outcome", "sortedcontainers", "attr", "attrs")))


def _run(code: str, env: dict[str, str], folder: str, *flags: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *flags, "-c", code, folder], env=env, cwd=folder,
                          capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the one-shot failed:\n{done.stderr[-3000:]}")
    return elapsed, done.stderr


def _import_shares(stderr: str) -> tuple[dict[str, float], float, int]:
    """Self import time (s) per group from `-X importtime`, the total, and the modules."""
    groups = dict.fromkeys([name for name, _ in GROUPS] + ["rest"], 0.0)
    total, modules = 0.0, 0
    for line in stderr.splitlines():
        if line.startswith("MODULES"):
            modules = int(line.split()[1])
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
        seconds = int(self_us) / 1e6
        total += seconds
        top = name.split(".")[0]
        group = next((g for g, tops in GROUPS if top in tops), "rest")
        groups[group] += seconds
    return groups, total, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="processes per side")
    args = parser.parse_args()
    turns = [[{"type": "text", "text": "ok"}]] * (2 * args.runs + 4)
    times: dict[str, list[float]] = {"ours": [], "hand-written": []}
    with FakeApiProcess(turns) as url, tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FUXI_", "ANTHROPIC_"))}
        env.update({"PYTHONPATH": str(ROOT), "ANTHROPIC_BASE_URL": url,
                    "ANTHROPIC_API_KEY": "bench-key", "FUXI_MODEL": MODEL,
                    "FUXI_BLOCK_REAL_API": "1", "FUXI_CONFIG_DIR": folder})
        sides = [("ours", OURS), ("hand-written", HAND_WRITTEN)]
        for run in range(args.runs):
            for name, code in sides[::1 if run % 2 == 0 else -1]:
                times[name].append(_run(code, env, folder)[0])
            print(f"run {run + 1}/{args.runs}: ours {times['ours'][-1]:.2f} s, hand-written "
                  f"{times['hand-written'][-1]:.2f} s", flush=True)
        shares = {name: _import_shares(_run(code, env, folder, "-X", "importtime")[1])
                  for name, code in sides}
    ours, hand = (statistics.median(times[name]) for name in ("ours", "hand-written"))
    print(f"\nmedians: ours {ours:.2f} s, hand-written {hand:.2f} s")
    print(f"cold one-shot, ours / hand-written: {ours / hand:.2f} (target <= 1.1)")
    print("\nimport time by group (one -X importtime run each; its own overhead inflates it):")
    print(f"{'group':<14} {'ours':>9} {'hand-written':>13}")
    for group in [name for name, _ in GROUPS] + ["rest", "total"]:
        cells = []
        for name in ("ours", "hand-written"):
            values, total, _ = shares[name]
            value = total if group == "total" else values[group]
            cells.append(f"{value:6.2f} s")
        print(f"{group:<14} {cells[0]:>9} {cells[1]:>13}")
    print(f"{'modules':<14} {shares['ours'][2]:>9} {shares['hand-written'][2]:>13}")


if __name__ == "__main__":
    main()
