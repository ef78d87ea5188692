"""What file checkpoints cost a call of code, measured as ratios in one run.

A working folder like a data scientist's (a small repository: 300 source and data files,
5 MB in all, plus a `.git` folder that is not scanned). A conversation of 40 Bash calls
(`true`, and every fourth one rewriting one data file) runs through `query()` on
`ScriptedModel`, alternating checkpoints on and off, 5 conversations each. Printed: the
median time per call with and without, the overhead per call in ms and their ratio, what
the first call pays (it reads the folder once), and the memory the kept copies take.

Run: .venv/bin/python benchmarks/bench_checkpoints.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from fuxi_notebook import FuxiAgentOptions, ResultMessage, ScriptedModel, query
from fuxi_notebook._internal.checkpoints.history import FileHistory
from fuxi_notebook._internal.checkpoints.watch import FileCheckpoints
from fuxi_notebook._internal.models.script import text, tool_use

CALLS = 40


def make_folder(root: Path) -> None:
    """300 files, about 5 MB, in a few folders; a `.git` beside them."""
    rng = random.Random(20)
    for index in range(300):
        folder = root / ("src" if index % 3 else "data") / f"part{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        size = rng.choice([2_000, 8_000, 16_000, 40_000])
        (folder / f"file{index}.txt").write_bytes(rng.randbytes(size // 2).hex().encode())
    (root / ".git" / "objects").mkdir(parents=True)
    for index in range(200):
        (root / ".git" / "objects" / f"o{index}").write_bytes(b"x" * 4000)


def script() -> list[list[dict]]:
    turns = []
    for index in range(CALLS):
        command = ("true" if index % 4 else
                   f"printf '{index}' > data/part0/file0.txt")
        turns.append([tool_use("Bash", {"command": command})])
    return [*turns, [text("done")]]


async def conversation(root: Path, enabled: bool) -> float:
    """Seconds per call over one conversation."""
    options = FuxiAgentOptions(model=ScriptedModel(script()), cwd=root,
                               allowed_tools=["Bash"], enable_file_checkpointing=enabled,
                               persist_session=False)
    started = time.perf_counter()
    async for message in query(prompt="go", options=options):
        if isinstance(message, ResultMessage):
            assert message.subtype == "success", message
    return (time.perf_counter() - started) / CALLS


def first_scan(root: Path) -> tuple[float, int]:
    """What the first call of a conversation pays (reading the folder), and the memory."""
    history = FileHistory()
    checkpoints = FileCheckpoints([root], history)
    started = time.perf_counter()
    watch = checkpoints.before("first", "execute")
    assert watch is not None
    checkpoints.after(watch)
    return time.perf_counter() - started, history.memory_bytes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        make_folder(root)
        on: list[float] = []
        off: list[float] = []
        asyncio.run(conversation(root, True))  # warm: imports, caches
        for _ in range(args.runs):
            off.append(asyncio.run(conversation(root, False)))
            on.append(asyncio.run(conversation(root, True)))
        first, memory = first_scan(root)
    with_, without = statistics.median(on), statistics.median(off)
    print(f"Bash call in query(), 300-file 5 MB folder, {CALLS} calls x {args.runs} "
          f"conversations: {with_ * 1000:.2f} ms with checkpoints, {without * 1000:.2f} ms "
          "without")
    print(f"overhead per call: {(with_ - without) * 1000:.2f} ms; ratio with / without: "
          f"{with_ / without:.2f}")
    print(f"first call of a conversation (reads the folder once): {first * 1000:.1f} ms, "
          f"kept copies {memory / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
