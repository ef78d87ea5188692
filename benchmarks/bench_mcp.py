"""MCP servers: session start-up with three servers, and the per-call cost of a tool on an
in-process server against a built-in tool, measured as ratios in one run.

1. Time from `query()` to the first model request (the fake server notes when it
   arrives): with no MCP server, and with three (a stdio server process, a streamable
   HTTP server already running on 127.0.0.1, an in-process `create_sdk_mcp_server`).
   Each configuration runs `--runs` times, alternating; medians are printed.
2. A 30-turn run whose every turn calls one tool: `mcp__calc__echo` (in-process MCP)
   against the built-in `Read`, on `ScriptedModel` (no network), alternating; the CPU
   of each run (`time.process_time()`) per call, the ratio MCP/Read of the medians (issue
   36's target: <= 1.5x) and the wall-clock ratio. An MCP call runs the code seal's
   checks (permissions/integrity.py): its size is printed.
3. The same comparison inside a real kernel (jupyter_client, `%load_ext fuxi_notebook`
   and the notebook's modules imported, so the code seal holds what a kernel's does).

Run: .venv/bin/python benchmarks/bench_mcp.py [--runs N] [--part all|startup|calls|kernel]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fuxi_notebook import (
    FuxiAgentOptions,
    ResultMessage,
    ScriptedModel,
    create_sdk_mcp_server,
    query,
    tool,
)
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

SERVER_SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "server_script.py"
MODEL = "claude-sonnet-5-5"
TURNS = 30


@tool("echo", "Echo the text back.", {"text": str})
async def echo(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args["text"]}]}


def http_server() -> tuple[subprocess.Popen[str], str]:
    """The test MCP server on streamable HTTP (it prints its port once listening)."""
    proc = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "--http"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/mcp"


async def time_to_first_request(server: FakeMessagesServer, folder: Path,
                                servers: dict[str, Any]) -> float:
    arrived: list[float] = []

    def answer(request: dict[str, Any]) -> Turn:
        arrived.append(time.monotonic())
        return Turn([text("ok")])

    server.add(answer)
    model = AnthropicModel(MODEL, api_key="bench", base_url=server.url)
    options = FuxiAgentOptions(model=model, cwd=folder, mcp_servers=servers)
    began = time.monotonic()
    async for message in query(prompt="hi", options=options):
        if isinstance(message, ResultMessage):
            assert message.subtype == "success", message
    return arrived[0] - began


async def startup(runs: int, folder: Path) -> None:
    proc, url = http_server()
    try:
        three = {"stdio": {"command": sys.executable, "args": [str(SERVER_SCRIPT)]},
                 "http": {"type": "http", "url": url},
                 "calc": create_sdk_mcp_server("calculator", tools=[echo])}
        with FakeMessagesServer() as server:
            await time_to_first_request(server, folder, three)  # warm: imports, connections
            await time_to_first_request(server, folder, {})
            none, with_three = [], []
            for _ in range(runs):
                none.append(await time_to_first_request(server, folder, {}))
                with_three.append(await time_to_first_request(server, folder, three))
            only_stdio = [await time_to_first_request(server, folder, {"s": three["stdio"]})
                          for _ in range(max(1, runs // 2))]
            only_fast = [await time_to_first_request(server, folder, {
                "http": three["http"], "calc": three["calc"]}) for _ in range(runs)]
    finally:
        proc.terminate()
        proc.wait()
    print("1. time to the first model request (median):")
    print(f"   no MCP server:                      {statistics.median(none) * 1000:8.1f} ms")
    print(f"   stdio + HTTP + in-process servers:  "
          f"{statistics.median(with_three) * 1000:8.1f} ms")
    print(f"   the stdio server alone:             "
          f"{statistics.median(only_stdio) * 1000:8.1f} ms (a Python process starting)")
    print(f"   HTTP + in-process only:             {statistics.median(only_fast) * 1000:8.1f} ms")
    print(f"   three servers / none: {statistics.median(with_three) / statistics.median(none):.1f}x"
          f"; HTTP + in-process / none: "
          f"{statistics.median(only_fast) / statistics.median(none):.2f}x")


def calls(name: str, make_input: Any) -> list[Any]:
    return [*[[tool_use(name, make_input(i))] for i in range(TURNS)], [text("done")]]


async def one_run(folder: Path, in_process: bool) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one 30-turn run."""
    if in_process:
        model = ScriptedModel(calls("mcp__calc__echo", lambda i: {"text": f"hello {i}"}))
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["mcp__calc__echo"],
                                   mcp_servers={"calc": create_sdk_mcp_server(
                                       "calculator", tools=[echo])})
    else:
        model = ScriptedModel(calls("Read", lambda i: {"file_path": "hello.txt"}))
        options = FuxiAgentOptions(model=model, cwd=folder, allowed_tools=["Read"])
    cpu, began = time.process_time(), time.monotonic()
    async for message in query(prompt="go", options=options):
        if isinstance(message, ResultMessage):
            assert message.subtype == "success", message
    return time.process_time() - cpu, time.monotonic() - began


async def per_call(runs: int, folder: Path, label: str = "2.") -> None:
    """Alternating runs of each; medians of CPU and wall time per call, and the ratios."""
    from fuxi_notebook._internal.permissions.integrity import CodeSeal, _tag_reader

    for in_process in (True, False, True, False):  # warm both
        await one_run(folder, in_process)
    mcp, builtin = [], []
    for _ in range(runs):
        mcp.append(await one_run(folder, True))
        builtin.append(await one_run(folder, False))
    m_cpu, b_cpu = (statistics.median(r[0] for r in rs) / TURNS for rs in (mcp, builtin))
    m_wall, b_wall = (statistics.median(r[1] for r in rs) / TURNS for rs in (mcp, builtin))
    seal = CodeSeal.current()
    print(f"{label} {TURNS} turns, one tool call each (median of {runs} alternating runs, "
          "ScriptedModel), per call:")
    print(f"   CPU:  in-process MCP {m_cpu * 1000:6.3f} ms   built-in Read "
          f"{b_cpu * 1000:6.3f} ms   MCP/Read {m_cpu / b_cpu:.2f}x "
          f"({(m_cpu - b_cpu) * 1000:+.3f} ms a call)")
    print(f"   wall: in-process MCP {m_wall * 1000:6.3f} ms   built-in Read "
          f"{b_wall * 1000:6.3f} ms   MCP/Read {m_wall / b_wall:.2f}x")
    print(f"   code seal: {seal.entries()} entries; checks read "
          f"{'only namespaces written to (dict version tags)' if _tag_reader() else 'every entry'}")


def in_kernel(runs: int, folder: Path) -> None:
    """Part 2 run by a real kernel, in its own process, after `%load_ext`."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from tests.notebook.kernel_harness import KernelHarness

    harness = KernelHarness(cwd=str(folder), env={"FUXI_BLOCK_REAL_API": "1"})
    try:
        assert harness.run("%load_ext fuxi_notebook").status == "ok"
        where = str(root / "benchmarks")
        code = (f"import sys, pkgutil, importlib\nsys.path.insert(0, {where!r})\n"
                "import fuxi_notebook._internal.notebook as _nb\n"
                "for _m in pkgutil.walk_packages(_nb.__path__, _nb.__name__ + '.'):\n"
                "    try: importlib.import_module(_m.name)\n"
                "    except Exception: pass\n"
                "import bench_mcp\nfrom pathlib import Path\n"
                f"await bench_mcp.per_call({runs}, Path({str(folder)!r}), '3. in a kernel:')")
        result = harness.run(code, timeout=1800)
        assert result.status == "ok", result.messages
        print(result.stdout, end="")
    finally:
        harness.close()


async def main(runs: int, part: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="fuxi-bench-mcp-"))
    (folder / "hello.txt").write_text("hello world\n")
    if part in ("all", "startup"):
        await startup(runs, folder)
    if part in ("all", "calls"):
        await per_call(runs, folder)
    if part in ("all", "kernel"):
        await asyncio.to_thread(in_kernel, runs, folder)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--part", choices=["all", "startup", "calls", "kernel"], default="all")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.part))
