"""Time to the first text chunk over ACP against `query()` directly, in one run.

Both are warm: `query()` runs in this process after a first query; `fuxi-acp` is one
process started once (the checkout's, `python -m fuxi_notebook acp`), with a new session
for each prompt, driven by the protocol package's client over stdio. Each measure is from
sending the prompt to the first chunk of the answer's text, on the same fake Messages API
server; the two alternate. Prints medians and their ratio.

Run: .venv/bin/python benchmarks/bench_acp.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, schema, spawn_agent_process

from fuxi_notebook import FuxiAgentOptions, StreamEvent, query
from fuxi_notebook.testing import FakeMessagesServer, Turn, text

ROOT = Path(__file__).resolve().parents[1]
MODEL = "claude-sonnet-5-5"


class FirstChunk:
    """A client that notes when the first message chunk of a prompt arrives."""

    def __init__(self) -> None:
        self.first: asyncio.Future[float] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk" and (
                self.first is not None and not self.first.done()):
            self.first.set_result(time.perf_counter())

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the benchmark's prompts call no tool")


async def direct(folder: Path) -> float:
    options = FuxiAgentOptions(model=MODEL, cwd=folder, include_partial_messages=True)
    start = time.perf_counter()
    first = None
    async for message in query(prompt="Say hello.", options=options):
        if first is None and isinstance(message, StreamEvent) and (
                message.event.get("type") == "content_block_delta"):
            first = time.perf_counter()
    assert first is not None
    return first - start


async def over_acp(conn: Any, client: FirstChunk, folder: Path) -> float:
    sid = (await conn.new_session(cwd=str(folder), mcp_servers=[])).session_id
    client.first = asyncio.get_running_loop().create_future()
    start = time.perf_counter()
    await conn.prompt(session_id=sid, prompt=[schema.TextContentBlock(type="text",
                                                                      text="Say hello.")])
    return await client.first - start


async def main(runs: int) -> None:
    with FakeMessagesServer() as server, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server.add(*[Turn([text("Hello there, how can I help today?")])] * (2 * runs + 4))
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "bench",
               "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": MODEL,
               "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT),
                                                          os.environ.get("PYTHONPATH"))))}
        os.environ.update({k: env[k] for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
                                                "FUXI_BLOCK_REAL_API")})
        client = FirstChunk()
        async with spawn_agent_process(client, sys.executable, "-m", "fuxi_notebook", "acp",
                                       env=env, cwd=str(folder)) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            await direct(folder)  # warm both
            await over_acp(conn, client, folder)
            ours, acp = [], []
            for _ in range(runs):
                ours.append(await direct(folder))
                acp.append(await over_acp(conn, client, folder))
    a, b = statistics.median(ours), statistics.median(acp)
    print(f"time to first chunk, medians of {runs}: query() {a * 1000:.1f} ms, "
          f"over ACP {b * 1000:.1f} ms (new session each), ratio {b / a:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
