"""The render path of `%%fuxi`: deltas per second in, updates per second out, loop lag.

A model stream of many small text deltas (plus a tool call every so often) is fed into
the LiveRenderer exactly as the loop feeds it, on one asyncio loop, with the display
replaced by a counter (so the browser's cost is not measured, only what we send it).
A probe task measures how late the loop wakes up meanwhile: that is what a widget click
or "Interrupt kernel" would wait. Everything is printed as rates and ratios of one run.

Run: .venv/bin/python benchmarks/bench_render.py [--deltas N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from fuxi_notebook._internal.notebook.display import render
from fuxi_notebook.types import AssistantMessage, StreamEvent, ToolUseBlock


class CountingHandle:
    """Stands in for an IPython display handle; counts and sizes the updates."""

    def __init__(self) -> None:
        self.updates = 0
        self.bytes = 0

    def update(self, data: dict[str, Any], **_: Any) -> None:
        self.updates += 1
        self.bytes += sum(len(v) for v in data.values() if isinstance(v, str))


def _delta(index: int, text: str) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="s", event={
        "type": "content_block_delta", "index": index,
        "delta": {"type": "text_delta", "text": text}})


async def _probe(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        planned = time.perf_counter() + 0.005
        await asyncio.sleep(0.005)
        lags.append(max(0.0, time.perf_counter() - planned))


async def flood(deltas: int, per_tick: int) -> dict[str, float]:
    handle = CountingHandle()
    render.display = lambda *args, **kwargs: handle  # type: ignore[assignment]
    renderer = render.LiveRenderer()
    renderer.start("benchmark", [])
    lags: list[float] = []
    stop = asyncio.Event()
    probe = asyncio.create_task(_probe(lags, stop))
    renderer.on_message(StreamEvent(uuid="u", session_id="s", event={
        "type": "message_start", "message": {"id": "m", "model": "x"}}))
    renderer.on_message(StreamEvent(uuid="u", session_id="s", event={
        "type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    started = time.perf_counter()
    for i in range(deltas):  # a paragraph every 60 words, as model text has
        renderer.on_message(_delta(0, "word\n\n" if i % 60 == 59 else "word "))
        if i % 5000 == 4999:
            renderer.on_message(AssistantMessage(
                content=[ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": "a.py"})],
                model="x"))
        if i % per_tick == 0:
            await asyncio.sleep(0)  # a real stream yields to the loop between network reads
    elapsed = time.perf_counter() - started
    await asyncio.sleep(render.UPDATE_INTERVAL * 2)  # let the last coalesced draw happen
    stop.set()
    await probe
    return {"elapsed": elapsed, "deltas_per_s": deltas / elapsed,
            "updates_per_s": handle.updates / max(elapsed, render.UPDATE_INTERVAL),
            "updates": handle.updates, "lag_p50_ms": statistics.median(lags) * 1000,
            "lag_max_ms": max(lags) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=60_000)
    args = parser.parse_args()
    for per_tick in (1, 20):
        figures = asyncio.run(flood(args.deltas, per_tick))
        print(f"{args.deltas} deltas, yielding every {per_tick}: "
              f"{figures['deltas_per_s']:,.0f} deltas/s in -> "
              f"{figures['updates_per_s']:.1f} updates/s out ({figures['updates']} updates); "
              f"loop lag p50 {figures['lag_p50_ms']:.1f} ms, max {figures['lag_max_ms']:.1f} ms")
        ratio = figures["deltas_per_s"] / max(figures["updates_per_s"], 1e-9)
        print(f"  coalescing ratio (deltas in per update out): {ratio:,.0f}")


if __name__ == "__main__":
    main()
