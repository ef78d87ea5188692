"""What file checkpoints cost a call of code, measured as ratios in one run.

A working folder like a data scientist's (a small repository: 300 source and data files,
5 MB in all, plus a `.git` folder that is not scanned). A conversation of 40 Bash calls
(`sh -c true`, code the permission analysis cannot see into, and every fourth one
rewriting one data file) runs through `query()` on `ScriptedModel`, alternating
checkpoints on and off, 5 conversations each. Printed: the median time per call with and
without, the overhead per call in ms and their ratio, what the first call pays (it reads
the folder once), and the memory the kept copies take. The same for 40 read-only command
lines (`cat ... | wc -c`), which are not scanned around. Then a folder of 25,000 small
files, over the default cap of 20,000 (a home folder): what the first call pays to find
that out, and what a later call pays (nothing is scanned any more).

Then the kernel side of `%fuxi undo`: the Python tool in an in-process IPython shell
whose namespace holds 200 names and a 100,000-row DataFrame, with and without the watch
over the kernel's names, for code that only reads (`n = len(df)`) and code that changes
the DataFrame in place (`df["z"] = 1`, which copies it first).

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


def script(read_only: bool = False) -> list[list[dict]]:
    turns = []
    for index in range(CALLS):
        command = ("cat data/part0/file0.txt | wc -c" if read_only else "sh -c true"
                   if index % 4 else f"printf '{index}' > data/part0/file0.txt")
        turns.append([tool_use("Bash", {"command": command})])
    return [*turns, [text("done")]]


async def conversation(root: Path, enabled: bool, read_only: bool = False) -> float:
    """Seconds per call over one conversation."""
    options = FuxiAgentOptions(model=ScriptedModel(script(read_only)), cwd=root,
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


def crowded_folder(root: Path) -> tuple[float, float]:
    """(first call, a later call) in a folder over the file cap, in seconds."""
    for index in range(25_000):
        folder = root / f"d{index // 1000}"
        if index % 1000 == 0:
            folder.mkdir()
        (folder / f"f{index}").write_bytes(b"x")
    checkpoints = FileCheckpoints([root], FileHistory())
    times = []
    for call in ("first", "later"):
        started = time.perf_counter()
        watch = checkpoints.before(call, "execute")
        if watch is not None:
            checkpoints.after(watch)
        times.append(time.perf_counter() - started)
    assert checkpoints.too_many_files
    return times[0], times[1]


def python_calls(runs: int) -> dict[str, tuple[float, float, int]]:
    """Per code: (seconds with the names watch, without, bytes copied)."""
    import numpy
    import pandas
    from IPython.core.interactiveshell import InteractiveShell

    from fuxi_notebook._internal.notebook.kernel.names import NameWatch
    from fuxi_notebook._internal.notebook.kernel.python import PythonTool
    from fuxi_notebook._internal.tools.base import ToolContext

    shell = InteractiveShell.instance()
    shell.user_ns.update({f"v{i}": list(range(10)) for i in range(200)})
    shell.user_ns["df"] = pandas.DataFrame({"a": numpy.arange(100_000), "b": 1.5})
    ctx = ToolContext(cwd=Path.cwd())
    found = {}
    for code in ("n = len(df)", 'df["z"] = 1'):
        timings: dict[bool, list[float]] = {True: [], False: []}
        copied = 0
        for _ in range(runs * 20):
            for watched in (False, True):
                watch = NameWatch(shell.user_ns) if watched else None
                tool = PythonTool(shell, watch)
                started = time.perf_counter()
                asyncio.run(tool.run({"code": code}, ctx))
                timings[watched].append(time.perf_counter() - started)
                if watch is not None:
                    copied = watch.changes.copied_bytes
        found[code] = (statistics.median(timings[True]), statistics.median(timings[False]),
                       copied)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        make_folder(root)
        on: list[float] = []
        off: list[float] = []
        reads_on: list[float] = []
        reads_off: list[float] = []
        asyncio.run(conversation(root, True))  # warm: imports, caches
        for _ in range(args.runs):
            off.append(asyncio.run(conversation(root, False)))
            on.append(asyncio.run(conversation(root, True)))
            reads_off.append(asyncio.run(conversation(root, False, read_only=True)))
            reads_on.append(asyncio.run(conversation(root, True, read_only=True)))
        first, memory = first_scan(root)
    with tempfile.TemporaryDirectory() as scratch:
        crowded_first, crowded_later = crowded_folder(Path(scratch))
    with_, without = statistics.median(on), statistics.median(off)
    reads_with, reads_without = statistics.median(reads_on), statistics.median(reads_off)
    print(f"Bash call in query(), 300-file 5 MB folder, {CALLS} calls x {args.runs} "
          f"conversations: {with_ * 1000:.2f} ms with checkpoints, {without * 1000:.2f} ms "
          "without")
    print(f"overhead per call: {(with_ - without) * 1000:.2f} ms; ratio with / without: "
          f"{with_ / without:.2f}")
    print(f"first call of a conversation (reads the folder once): {first * 1000:.1f} ms, "
          f"kept copies {memory / 1e6:.1f} MB")
    print(f"read-only command lines: {reads_with * 1000:.2f} ms with checkpoints, "
          f"{reads_without * 1000:.2f} ms without; ratio {reads_with / reads_without:.2f}")
    print(f"25,000-file folder (over the cap): first call {crowded_first * 1000:.1f} ms "
          f"(finds it out), a later call {crowded_later * 1000:.3f} ms (not scanned)")
    for code, (watched, bare, copied) in python_calls(args.runs).items():
        print(f"Python {code!r} (200 names, 100,000-row DataFrame): {watched * 1000:.2f} ms "
              f"watched, {bare * 1000:.2f} ms not; overhead {(watched - bare) * 1000:.2f} ms, "
              f"ratio {watched / bare:.2f}, copied {copied / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
