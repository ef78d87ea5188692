"""Helpers for the subagent tests: Agent calls, telling requests apart, probe tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from fuxi_notebook._internal.models.base import ModelRequest
from fuxi_notebook._internal.models.script import Turn, text, tool_use
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook._internal.tools.base import ToolContext, ToolOutput
from fuxi_notebook.options import AgentDefinition

WORKER_PROMPT = "You are the worker."


def worker(**fields: Any) -> dict[str, AgentDefinition]:
    """`options.agents` with one agent, "worker"."""
    return {"worker": AgentDefinition(description="Does one piece of work.",
                                      prompt=WORKER_PROMPT, **fields)}


def agent_call(prompt: str, subagent_type: str = "worker", *, name: str = "Agent",
               **extra: Any) -> dict[str, Any]:
    return tool_use(name, {"description": "a task", "prompt": prompt,
                           "subagent_type": subagent_type, **extra})


def is_subagent(request: ModelRequest) -> bool:
    return not request.system[0]["text"].startswith("You are Fuxi")


def task_of(request: ModelRequest) -> str:
    """The task a subagent's request is about (its first user message)."""
    return request.messages[0]["content"][0]["text"]


def answered(request: ModelRequest) -> bool:
    """Whether the last user message carries tool results (the model's tool came back)."""
    last = request.messages[-1]["content"]
    return any(block.get("type") == "tool_result" for block in last)


def two_step(first: Callable[[ModelRequest], list[dict[str, Any]]],
             then: Callable[[ModelRequest], list[dict[str, Any]]]) -> Callable[
                 [ModelRequest], Turn]:
    """A scripted step for concurrent subagents: `first` for a request that starts one,
    `then` once its tool results are back (whichever subagent asks)."""
    def step(request: ModelRequest) -> Turn:
        return Turn((then if answered(request) else first)(request))
    return step


def says(prefix: str) -> Callable[[ModelRequest], list[dict[str, Any]]]:
    return lambda request: [text(f"{prefix} {task_of(request)}")]


class Gate:
    """A read tool each caller waits at until `parties` callers have arrived: two calls
    that both pass it ran at the same time."""

    name = "Meet"
    description = "Wait for the others."
    kind = "read"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self, parties: int) -> None:
        self.barrier = asyncio.Barrier(parties)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.wait_for(self.barrier.wait(), timeout=10)
        return ToolOutput("met")


class Hold:
    """A read tool that says it started and then waits until it is cancelled."""

    name = "Hold"
    description = "Wait."
    kind = "read"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.all_started = asyncio.Event()
        self.expected = 1
        self.release = asyncio.Event()

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.started += 1
        if self.started >= self.expected:
            self.all_started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return ToolOutput("released")


def delegating(*child_turns: list[dict[str, Any]]) -> ScriptedModel:
    """The parent starts the worker, the worker plays `child_turns`, the parent ends."""
    return ScriptedModel([[agent_call("find the config")], *child_turns, [text("all done")]])
