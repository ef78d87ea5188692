"""Tokens sent and cost over a 200-turn session, with and without compaction.

One scripted agent reads a large file 50 lines at a time for 200 turns, on the fake
Messages API (real `anthropic` client, the fake's prompt-cache accounting), priced as
claude-sonnet-5-5. "Without" runs with `auto_compact=False` on the model's 1M window;
"with" compacts at a 40,000-token window (`context_window`). Each run counts every token
of every request it sent (summary requests included) as the API reports them: uncached
input, cache writes, cache reads; and the session's cost. Prints the ratios of one run.

Run: .venv/bin/python benchmarks/bench_compaction.py [--turns N] [--window TOKENS]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from fuxi_notebook import FuxiAgentOptions, ResultMessage, query
from fuxi_notebook._internal.context.compaction import asks_for_summary
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.retry import RetryPolicy
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

MODEL = "claude-sonnet-5-5"


class Reader:
    """Reads the next 50 lines each turn; writes a summary when asked for one."""

    def __init__(self, turns: int) -> None:
        self.turns, self.served, self.summaries = turns, 0, 0

    def __call__(self, body: dict[str, Any]) -> Turn:
        if asks_for_summary(body["messages"]):
            self.summaries += 1
            return Turn([text(f"Summary: read the log up to line {self.served * 50}; "
                              "nothing unusual found so far. Next: keep reading.")])
        self.served += 1
        if self.served > self.turns:
            return Turn([text("Read all of it: nothing unusual.")])
        offset = 1 + (self.served - 1) * 50
        return Turn([text(f"Lines {offset}+."),
                     tool_use("Read", {"file_path": "log.txt", "offset": offset, "limit": 50})])


async def session(turns: int, folder: Path, *, window: int | None) -> dict[str, Any]:
    reader = Reader(turns)
    with FakeMessagesServer([reader] * (turns * 2 + 50), cache_min_tokens=1024) as server:
        model = AnthropicModel(MODEL, api_key="bench", base_url=server.url,
                               retry=RetryPolicy(max_retries=0))
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"],
                                   persist_session=False, context_window=window,
                                   auto_compact=window is not None)
        result: ResultMessage | None = None
        async for message in query(prompt="Read log.txt and tell me what is odd.",
                                   options=options):
            if isinstance(message, ResultMessage):
                result = message
        assert result is not None and result.subtype == "success", result
        log = server.usage_log
        summaries = sum(asks_for_summary(r["messages"]) for r in server.requests)
    prompts = [u["input_tokens"] + u["cache_read_input_tokens"]
               + u["cache_creation_input_tokens"] for u in log]
    return {"sent": sum(prompts), "largest": max(prompts), "requests": len(log),
            "read": sum(u["cache_read_input_tokens"] for u in log),
            "cost": result.total_cost_usd, "summaries": summaries}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=40_000)
    args = parser.parse_args()
    os.environ.setdefault("FUXI_SKIP_SESSION_PERSISTENCE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "log.txt").write_text("".join(
            f"2026-11-30 12:{i // 60 % 60:02d}:{i % 60:02d} INFO worker {i % 7} processed "
            f"batch {i} in {i % 97} ms\n" for i in range(args.turns * 50 + 100)))
        without = asyncio.run(session(args.turns, folder, window=None))
        with_ = asyncio.run(session(args.turns, folder, window=args.window))
    print(f"{args.turns}-turn session, {MODEL} prices, fake API cache accounting")
    for name, run in (("without compaction", without), (f"compacting at {args.window:,}",
                                                         with_)):
        print(f"  {name:>24}: {run['sent']:>12,} tokens sent in {run['requests']} requests "
              f"(largest {run['largest']:,}; {run['read'] / run['sent']:.0%} cache reads; "
              f"{run['summaries']} summaries), cost ${run['cost']:.4f}")
    print(f"  tokens sent, with / without: {with_['sent'] / without['sent']:.3f}")
    print(f"  largest request, with / without: {with_['largest'] / without['largest']:.3f}")
    print(f"  cost, with / without: {with_['cost'] / without['cost']:.3f}")


if __name__ == "__main__":
    main()
