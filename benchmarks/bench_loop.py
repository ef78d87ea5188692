"""Loop overhead, import time and prompt-cache share, measured as ratios in one run.

1. A 2-turn `Read` scenario on the fake server: our `query()` against a minimal
   hand-written `AsyncAnthropic` streaming loop on the same server, alternating in one
   process, both warm (one client kept across runs). Prints the ratio of medians, with
   all built-in tools offered (the default) and with only `Read`, as the floor offers.
   Then against loops that send what our query sent (its two request bodies, captured):
   the hand-written loop given those requests (`messages.stream`, running `Read` itself),
   so that only the loop differs and not what it offers the model; and the wire floor,
   which posts the very bytes and reads the events as JSON, doing nothing else (no loop
   that calls tools can go below it).
2. The import time of `fuxi_notebook` in a fresh interpreter (`-X importtime`).
3. The cache-read share of input tokens after turn 1 over a 20-turn tool session.
4. What saving the session costs a warm query: CPU with saving against without.

Run: .venv/bin/python benchmarks/bench_loop.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic

from fuxi_notebook import FuxiAgentOptions, ResultMessage, query
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.wire_body import dumps
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

MODEL = "claude-sonnet-5-5"


def read_scenario(request: dict[str, Any]) -> Turn:
    """Turn 1 reads the file; turn 2 answers. Works for any number of repetitions."""
    last = request["messages"][-1]["content"]
    if isinstance(last, list) and last and last[0].get("type") == "tool_result":
        return Turn([text("The file holds a greeting.")])
    return Turn([text("Reading it."), tool_use("Read", {"file_path": "hello.txt"})])


async def ours(model: AnthropicModel, folder: Path, tools: list[str] | None = None) -> None:
    options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"], tools=tools)
    async for message in query(prompt="What is in hello.txt?", options=options):
        if isinstance(message, ResultMessage):
            assert message.subtype == "success", message


async def handwritten(client: anthropic.AsyncAnthropic, folder: Path) -> None:
    """The floor: stream, run Read by hand, send the result, stream again."""
    tools: Any = [{"name": "Read", "description": "Read a file.", "input_schema": {
        "type": "object", "properties": {"file_path": {"type": "string"}},
        "required": ["file_path"]}}]
    messages: Any = [{"role": "user", "content": "What is in hello.txt?"}]
    while True:
        async with client.messages.stream(model=MODEL, max_tokens=1024, tools=tools,
                                          messages=messages) as stream:
            final = await stream.get_final_message()
        messages.append({"role": "assistant", "content": [b.to_dict() for b in final.content]})
        calls = [b for b in final.content if b.type == "tool_use"]
        if not calls:
            return
        results = []
        for call in calls:
            content = (folder / str(call.input["file_path"])).read_text()
            results.append({"type": "tool_result", "tool_use_id": call.id, "content": content})
        messages.append({"role": "user", "content": results})


async def handwritten_same(client: anthropic.AsyncAnthropic, folder: Path,
                           bodies: list[dict[str, Any]]) -> None:
    """The hand-written loop sending our query's requests: each captured body through
    `messages.stream`, the final message turned into the next turn's content and its
    `Read` calls run, as `handwritten` does (the body already holds that next turn)."""
    turns: list[dict[str, Any]] = []
    for body in bodies:
        params = {key: value for key, value in body.items() if key != "stream"}
        async with client.messages.stream(**params) as stream:
            final = await stream.get_final_message()
        turns.append({"role": "assistant", "content": [b.to_dict() for b in final.content]})
        results = [{"type": "tool_result", "tool_use_id": call.id,
                    "content": (folder / str(call.input["file_path"])).read_text()}
                   for call in final.content if call.type == "tool_use"]
        if results:
            turns.append({"role": "user", "content": results})


async def same_bytes(client: anthropic.AsyncAnthropic, bodies: list[bytes]) -> None:
    """The wire floor of our query: post each captured body, read its stream to the end,
    each event as the JSON the API sent (as our loop reads them: no typed models)."""
    for body in bodies:
        await post_and_read(client, body)


async def post_and_read(client: anthropic.AsyncAnthropic, body: bytes) -> None:
    """Post one request body and read its stream to the end, each event as JSON."""
    from anthropic.types import Message

    stream = await client.post(
        "/v1/messages", cast_to=Message, content=body, stream=True,
        options={"headers": {"Content-Type": "application/json"}},
        stream_cls=anthropic.AsyncStream[object])
    async with stream:
        async for _event in stream:
            pass


async def alternate(runs: int, mine: Callable[[], Awaitable[None]],
                    floor: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """Median milliseconds of `mine` and `floor`, alternating `runs` times after three
    warm-up rounds of each (imports, connections, validators)."""
    for _ in range(3):
        await mine()
        await floor()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for run, kept in ((mine, times[0]), (floor, times[1])):
            start = time.perf_counter()
            await run()
            kept.append(time.perf_counter() - start)
    return statistics.median(times[0]) * 1000, statistics.median(times[1]) * 1000


async def wire_overhead(runs: int) -> tuple[float, float]:
    """query() against loops sending its requests (all tools, fake API in its own
    process): (against the hand-written loop given them, against the wire floor)."""
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    (folder / "hello.txt").write_text("hello world\n" * 20)
    with FakeMessagesServer() as recorder:  # capture what one query sends
        recorder.add(*[read_scenario] * 2)
        await ours(AnthropicModel(MODEL, api_key="bench", base_url=recorder.url), folder)
        requests = list(recorder.requests)
    bodies = [dumps(body) for body in requests]  # as the loop encodes them
    floors: list[tuple[str, Callable[[anthropic.AsyncAnthropic], Awaitable[None]]]] = [
        ("the hand-written loop sending its requests",
         lambda client: handwritten_same(client, folder, requests)),
        ("the same request bytes posted, events read as JSON",
         lambda client: same_bytes(client, bodies))]
    ratios = []
    for name, floor in floors:
        ours_ms, floor_ms = await against_own_process(runs, folder, floor)
        print(f"2-turn Read scenario (all tools; fake API in its own process): query() "
              f"median {ours_ms:.1f} ms, {name} {floor_ms:.1f} ms")
        ratios.append(ours_ms / floor_ms)
    return ratios[0], ratios[1]


async def against_own_process(runs: int, folder: Path, floor: Callable[
        [anthropic.AsyncAnthropic], Awaitable[None]]) -> tuple[float, float]:
    """`alternate` of query() and `floor` (given a warm client), the fake API in its own
    process."""
    with fake_api(runs, own_process=True) as url:
        model = AnthropicModel(MODEL, api_key="bench", base_url=url)
        client = anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        try:
            return await alternate(runs, lambda: ours(model, folder), lambda: floor(client))
        finally:
            await client.close()


async def saving_cost(runs: int) -> tuple[float, float]:
    """CPU milliseconds a warm query spends saving its session: medians of `runs`
    alternating queries with and without saving (FUXI_SKIP_SESSION_PERSISTENCE), the fake
    API in its own process; and the share of the query's CPU that is."""
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    (folder / "hello.txt").write_text("hello world\n" * 20)
    cpu: dict[bool, list[float]] = {True: [], False: []}
    with fake_api(runs, own_process=True) as url:
        model = AnthropicModel(MODEL, api_key="bench", base_url=url)
        for _ in range(3):
            await ours(model, folder)
        for run in range(runs):  # in turn first: the query after a switch differs
            for saving in ((True, False) if run % 2 else (False, True)):
                if saving:
                    os.environ.pop("FUXI_SKIP_SESSION_PERSISTENCE", None)
                else:
                    os.environ["FUXI_SKIP_SESSION_PERSISTENCE"] = "1"
                start = time.process_time()
                await ours(model, folder)
                cpu[saving].append(time.process_time() - start)
    os.environ.pop("FUXI_SKIP_SESSION_PERSISTENCE", None)
    saved, skipped = statistics.median(cpu[True]), statistics.median(cpu[False])
    return (saved - skipped) * 1000, (saved - skipped) / saved


@contextlib.contextmanager
def fake_api(runs: int, *, own_process: bool) -> Iterator[str]:
    """The fake API's URL: a server thread in this process (it then competes with the
    loops for the GIL, and more so for bigger requests), or its own process, as the real
    API is."""
    if not own_process:
        with FakeMessagesServer() as server:
            server.add(*[read_scenario] * (4 * (runs + 3)))
            yield server.url
        return
    turns = [{"content": [{"type": "text", "text": "Reading it."},
                          {"type": "tool_use", "name": "Read",
                           "input": {"file_path": "hello.txt"}}]},
             {"content": [{"type": "text", "text": "The file holds a greeting."}]}]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as script:
        json.dump({"steps": turns * (2 * (runs + 3))}, script)
    process = subprocess.Popen([sys.executable, "-m", "fuxi_notebook.testing", "serve",
                                "--script", script.name], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server says where it listens, then serves
        yield line.strip().split("=", 1)[1]
    finally:
        process.terminate()
        process.wait(timeout=10)
        os.unlink(script.name)


async def overhead(runs: int, tools: list[str] | None = None, *,
                   own_process: bool = False) -> float:
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    (folder / "hello.txt").write_text("hello world\n" * 20)
    with fake_api(runs, own_process=own_process) as url:
        model = AnthropicModel(MODEL, api_key="bench", base_url=url)
        client = anthropic.AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        ours_ms, floor_ms = await alternate(runs, lambda: ours(model, folder, tools),
                                            lambda: handwritten(client, folder))
        await client.close()
    offered = "all built-in tools" if tools is None else ", ".join(tools)
    where = "in its own process" if own_process else "in this process"
    print(f"2-turn Read scenario ({offered} offered; fake API {where}): query() median "
          f"{ours_ms:.1f} ms, hand-written loop (Read only) median {floor_ms:.1f} ms")
    return ours_ms / floor_ms


def import_seconds(statement: str) -> float:
    """Seconds for `statement` in a fresh interpreter, minus an empty one (median of 5)."""
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    return statistics.median(run(statement) - run("pass") for _ in range(5))


async def cache_share(turns: int = 20) -> float:
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-"))
    for i in range(turns):
        (folder / f"file{i}.txt").write_text(f"line {i}\n" * 30)
    steps = [Turn([tool_use("Read", {"file_path": f"file{i}.txt"})]) for i in range(turns - 1)]
    with FakeMessagesServer([*steps, Turn([text("All read.")])]) as server:
        model = AnthropicModel(MODEL, api_key="bench", base_url=server.url)
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"])
        async for _ in query(prompt="Read every file.", options=options):
            pass
        later = server.usage_log[1:]
    read = sum(u["cache_read_input_tokens"] for u in later)
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"]
                + u["cache_creation_input_tokens"] for u in later)
    return float(read / total)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    ratio = asyncio.run(overhead(args.runs))
    print(f"loop overhead ratio (query() / hand-written, medians): {ratio:.2f}  (target <= 1.5)")
    # the same request content as the floor: what the loop itself adds, not the 14 tool
    # definitions it offers by default (which the API has to read too)
    same = asyncio.run(overhead(args.runs, tools=["Read"]))
    print(f"  with only Read offered, as the hand-written loop: {same:.2f}")
    apart = asyncio.run(overhead(args.runs, own_process=True))
    print(f"  with the fake API in its own process (as the real API is): {apart:.2f}")
    same_requests, wire = asyncio.run(wire_overhead(args.runs))
    print(f"  query() / the hand-written loop sending the same requests: {same_requests:.2f}"
          "  (target <= 1.1)")
    print(f"  query() / the wire floor (the same bytes posted, nothing else done): {wire:.2f}")
    saving, share = asyncio.run(saving_cost(max(200, 5 * args.runs)))
    print(f"saving the session: {saving:.2f} ms CPU a query ({share:.0%} of it)  "
          "(target < 0.5 ms)")
    seconds = import_seconds("import fuxi_notebook")
    print(f"import fuxi_notebook: {seconds:.3f} s  (target < 0.3 s)")
    core = import_seconds("from fuxi_notebook import query, FuxiAgentOptions, ResultMessage")
    print(f"import of the whole loop (query, options, messages): {core:.3f} s")
    share = asyncio.run(cache_share())
    print(f"cache-read share of input tokens after turn 1, 20-turn session: {share:.1%}  "
          "(target >= 90 %)")


if __name__ == "__main__":
    main()
