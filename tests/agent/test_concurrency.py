"""Read-only calls of one turn run concurrently; mutating calls one at a time, in order."""

from __future__ import annotations

import asyncio
from typing import Any

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.tools.base import ToolContext, ToolOutput

from .helpers import result_text, tool_results


class Probe:
    """A tool that records when it runs; read-only probes wait for each other."""

    def __init__(self, name: str, *, kind: str, log: list[str],
                 gate: asyncio.Barrier | None = None) -> None:
        self.input_schema = {"type": "object", "properties": {"tag": {"type": "string"}},
                             "required": ["tag"]}
        self.name, self.kind, self.log, self.gate = name, kind, log, gate
        self.description = f"probe {name}"

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.log.append(f"start {input['tag']}")
        if self.gate is not None:
            # Two read-only probes reach this barrier together only if they run concurrently.
            await asyncio.wait_for(self.gate.wait(), timeout=5)
        else:
            await asyncio.sleep(0)
        self.log.append(f"end {input['tag']}")
        return ToolOutput(content=f"done {input['tag']}")


async def _run(calls: list[dict], tools: list[Probe]) -> tuple[ScriptedModel, list[Any]]:
    model = ScriptedModel([calls, [text("ok")]])
    names = [t.name for t in tools]
    session = build_session(FuxiAgentOptions(model=model, allowed_tools=names, tools=names),
                      extra_tools=tools)
    messages = [m async for m in run_prompt(Run(session), "go")]
    return model, messages


async def test_read_only_calls_run_concurrently_and_keep_model_order():
    log: list[str] = []
    gate = asyncio.Barrier(2)
    reader = Probe("Look", kind="read", log=log, gate=gate)
    model, _ = await _run([tool_use("Look", {"tag": "a"}), tool_use("Look", {"tag": "b"})],
                          [reader])
    assert log[:2] == ["start a", "start b"]
    results = tool_results(model.requests[1].messages)
    assert [result_text(r) for r in results] == ["done a", "done b"]


async def test_mutating_calls_run_one_at_a_time_in_order():
    log: list[str] = []
    writer = Probe("Change", kind="edit", log=log)
    reader = Probe("Look", kind="read", log=log)
    calls = [tool_use("Change", {"tag": "w1"}), tool_use("Look", {"tag": "r1"}),
             tool_use("Change", {"tag": "w2"})]
    model, _ = await _run(calls, [writer, reader])
    assert log == ["start w1", "end w1", "start r1", "end r1", "start w2", "end w2"]
    assert [result_text(r) for r in tool_results(model.requests[1].messages)] == [
        "done w1", "done r1", "done w2"]


async def test_a_tool_without_a_declared_kind_runs_alone():
    """Undeclared means `execute`: two calls of it never overlap (issue 8, finding 2)."""
    log: list[str] = []
    tool = Probe("Foreign", kind="read", log=log)
    del tool.kind  # as a tool written without our declaration would be
    await _run([tool_use("Foreign", {"tag": "a"}), tool_use("Foreign", {"tag": "b"})], [tool])
    assert log == ["start a", "end a", "start b", "end b"]
