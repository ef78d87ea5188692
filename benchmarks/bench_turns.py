"""The loop's own CPU per turn, early and late in one long query.

One `query()` whose model reads a file on every turn, 150 turns, against the fake API in
its own process (so its CPU is not ours). The client's CPU (`time.process_time`) is
taken as each request starts; a turn's cost is the difference to the next one: the
request's building and sending, the response's streaming, the tool call, the
bookkeeping. Prints the medians around turns 10, 50 and 150, pooled over three queries
(one query's ten turns around a mark vary by a tenth from run to run), and their ratios
to turn 10 (flat would be 1.0); with `--profile` the functions that take the late turns'
time in the first query.

Then the wire floor of the same turns: the very request bytes a query sent (recorded
once), each posted and its stream read to the end as JSON, nothing else done, timed the
same way. Sending a bigger body costs more however it is built (the client, the kernel's
copy), so the floor grows too; what the loop adds over it per turn is its own work, and
that is what should stay flat.

With `--provider bedrock|vertex|foundry` the same queries run against that provider's fake
(in its own process, `python -m fuxi_notebook.testing serve --provider`), through the
`anthropic` package's own provider client (Bedrock signs every body with SigV4, Vertex
signs in once with a service account's key), alternating with queries on the Anthropic
API's fake: it prints both, their ratio at each mark, and the provider's late turns over
its early ones (the wire floor is the Anthropic API's only).

Run: .venv/bin/python benchmarks/bench_turns.py [--turns 150] [--runs 3] [--profile]
         [--provider bedrock|vertex|foundry]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

from fuxi_notebook import FuxiAgentOptions, query
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.base import ModelRequest

MODEL = "claude-sonnet-5-5"
AROUND = 5  # turns each side of a mark


class _TimedModel(AnthropicModel):
    """The real model client, noting the process's CPU time as each request starts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.starts: list[float] = []
        self.profile: cProfile.Profile | None = None
        self.profile_from = 0

    async def stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
        self.starts.append(time.process_time())
        if self.profile is not None and len(self.starts) == self.profile_from:
            self.profile.enable()
        elif self.profile is not None and len(self.starts) == self.profile_from + 2 * AROUND:
            self.profile.disable()  # the turns only, not the end of the query
        async for item in super().stream(request):
            yield item


#: the model each provider's fake is asked for (Bedrock knows models by its own ids)
PROVIDER_MODELS = {"anthropic": MODEL, "bedrock": "global.anthropic.claude-sonnet-5-5-v1:0",
                   "vertex": MODEL, "foundry": MODEL}


@contextmanager
def fake_api(turns: int, provider: str = "anthropic") -> Iterator[str]:
    """The fake in its own process; yields its URL. For a provider, the variables its
    client needs are set in this process's environment while the block runs."""
    read = {"content": [{"type": "tool_use", "name": "Read",
                         "input": {"file_path": "notes.txt"}}]}
    steps = [read] * turns + [{"content": [{"type": "text", "text": "Done."}]}]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as script:
        json.dump({"steps": steps}, script)
    process = subprocess.Popen([sys.executable, "-m", "fuxi_notebook.testing", "serve",
                                "--script", script.name, "--provider", provider],
                               stdout=subprocess.PIPE, text=True)
    before = dict(os.environ)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip().split("=", 1)[1]
        if provider != "anthropic":
            os.environ.update(json.loads(process.stdout.readline().split("=", 1)[1]))
        yield url
    finally:
        os.environ.clear()
        os.environ.update(before)
        process.terminate()
        process.wait(timeout=10)
        os.unlink(script.name)


async def one_query(turns: int, profile: bool, provider: str = "anthropic"
                    ) -> tuple[list[float], pstats.Stats | None]:
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    (folder / "notes.txt").write_text("a line of notes to read again\n" * 40)
    with fake_api(turns, provider) as url:
        if provider == "anthropic":
            model = _TimedModel(MODEL, api_key="bench", base_url=url)
        else:
            model = _TimedModel(PROVIDER_MODELS[provider], provider=provider)
        if profile:
            model.profile, model.profile_from = cProfile.Profile(), turns - 2 * AROUND
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"],
                                   max_turns=turns + 1)
        async for _ in query(prompt="Read notes.txt again and again.", options=options):
            pass
    costs = [b - a for a, b in pairwise(model.starts)]
    stats = pstats.Stats(model.profile) if model.profile is not None else None
    return costs, stats


async def recorded_bodies(turns: int) -> list[bytes]:
    """The request bodies one query of `turns` reads sends, as the loop encodes them."""
    from fuxi_notebook._internal.models.wire_body import dumps
    from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    (folder / "notes.txt").write_text("a line of notes to read again\n" * 40)
    steps = [Turn([tool_use("Read", {"file_path": "notes.txt"})])] * turns
    with FakeMessagesServer([*steps, Turn([text("Done.")])]) as server:
        model = AnthropicModel(MODEL, api_key="bench", base_url=server.url)
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"],
                                   max_turns=turns + 1)
        async for _ in query(prompt="Read notes.txt again and again.", options=options):
            pass
        return [dumps(body) for body in server.requests]


async def wire_floor(bodies: list[bytes]) -> list[float]:
    """CPU seconds per turn of posting `bodies` one after another, each stream read to
    its end as JSON (as the loop reads it), against the fake API in its own process."""
    import anthropic
    from bench_loop import post_and_read  # (this folder is on the path of its scripts)

    starts = []
    with fake_api(len(bodies) - 1) as url:
        client = anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        for body in bodies:
            starts.append(time.process_time())
            await post_and_read(client, body)
        await client.close()
    return [b - a for a, b in pairwise(starts)]


def around(runs: list[list[float]], turn: int) -> float:
    """Median CPU ms of the turns around `turn` (1-based; the last ones for the end),
    pooled over the runs."""
    pooled = []
    for costs in runs:
        end = min(turn + AROUND, len(costs))
        pooled.extend(costs[max(end - 2 * AROUND, 0):end])
    return statistics.median(pooled) * 1000


def compare_provider(turns: int, runs: int, provider: str) -> None:
    """Queries on the Anthropic API's fake and on `provider`'s, alternating."""
    first: list[list[float]] = []
    theirs: list[list[float]] = []
    for _ in range(runs):
        first.append(asyncio.run(one_query(turns, False))[0])
        theirs.append(asyncio.run(one_query(turns, False, provider))[0])
    marks = [m for m in (10, 50, turns) if m <= min(map(len, first + theirs))]
    for mark in marks:
        ours, there = around(first, mark), around(theirs, mark)
        print(f"client CPU per turn around turn {mark}: Anthropic API {ours:.2f} ms, "
              f"{provider} {there:.2f} ms ({there / ours:.2f}x)")
    for name, costs in (("Anthropic API", first), (provider, theirs)):
        print(f"{name}: turn {marks[-1]} / turn 10: "
              f"{around(costs, marks[-1]) / around(costs, 10):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--runs", type=int, default=3,
                        help="queries, one after another; each mark pools their turns")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--provider", choices=list(PROVIDER_MODELS), default="anthropic")
    args = parser.parse_args()
    if args.provider != "anthropic":
        compare_provider(args.turns, args.runs, args.provider)
        return
    runs, profiles = [], []
    for run in range(args.runs):
        costs, profile = asyncio.run(one_query(args.turns, args.profile and run == 0))
        runs.append(costs)
        profiles.append(profile)
    stats = profiles[0]
    marks = [m for m in (10, 50, args.turns) if m <= min(map(len, runs))]
    base = around(runs, 10)
    for mark in marks:
        cpu = around(runs, mark)
        print(f"client CPU per turn around turn {mark}: {cpu:.2f} ms ({cpu / base:.2f}x turn 10)")
    print(f"turn {marks[-1]} / turn 10: {around(runs, marks[-1]) / base:.2f}  "
          "(target <= 1.5, goal 1.1)")
    bodies = asyncio.run(recorded_bodies(args.turns))
    floors = [asyncio.run(wire_floor(bodies)) for _ in range(args.runs)]
    own = {mark: around(runs, mark) - around(floors, mark) for mark in marks}
    for mark in marks:
        print(f"the wire floor around turn {mark}: {around(floors, mark):.2f} ms "
              f"({around(floors, mark) / around(floors, 10):.2f}x turn 10); the loop's own "
              f"work: {own[mark]:.2f} ms ({own[mark] / own[10]:.2f}x turn 10)")
    if stats is not None:
        print(f"\nprofile of the last {2 * AROUND} turns (cumulative):")
        stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
