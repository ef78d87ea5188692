"""Executing the tool calls of one response.

Every call gets exactly one result, in the model's order: unknown tools, invalid JSON,
schema mismatches, denials and tool failures all become `is_error` results the model
can read. Consecutive read-only calls run concurrently; any other call runs alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ..tools.base import ToolError, ToolOutput
from ..types import ToolResultBlock, UserMessage, block_to_wire, new_uuid
from .run import Run

__all__ = ["execute_tool_calls", "not_executed"]

_RAW_INPUT_PREVIEW = 2000


def not_executed(calls: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """Error results for calls that will never run, so the history stays valid."""
    return [_error(call["id"], f"Not executed: {reason}.") for call in calls]


def _error(tool_use_id: str, message: str) -> dict[str, Any]:
    return block_to_wire(ToolResultBlock(tool_use_id=tool_use_id, content=message, is_error=True))


def _batches(run: Run, calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group consecutive read-only calls; every other call is a batch of its own."""
    batches: list[list[dict[str, Any]]] = []
    for call in calls:
        tool = run.session.registry.get(call["name"])
        read_only = tool is None or tool.read_only
        if read_only and batches and batches[-1][0].get("_read_only"):
            batches[-1].append({**call, "_read_only": True})
        else:
            batches.append([{**call, "_read_only": read_only}])
    return batches


async def execute_tool_calls(run: Run, calls: list[dict[str, Any]],
                             results: list[dict[str, Any]]) -> AsyncIterator[UserMessage]:
    """Run `calls`, appending one wire result per call to `results` and yielding each
    as a UserMessage. After an interrupting denial the remaining calls are not run."""
    for batch in _batches(run, calls):
        if run.interrupted:
            outcomes = not_executed(batch, "the run was interrupted")
        elif len(batch) == 1:
            outcomes = [await _call(run, batch[0])]
        else:
            outcomes = list(await asyncio.gather(*(_call(run, call) for call in batch)))
        for outcome in outcomes:
            results.append(outcome)
            yield UserMessage(
                content=[ToolResultBlock(tool_use_id=outcome["tool_use_id"],
                                         content=outcome.get("content"),
                                         is_error=outcome.get("is_error", False))],
                uuid=new_uuid(),
            )


async def _call(run: Run, call: dict[str, Any]) -> dict[str, Any]:
    """Check and run one call; never raises except on cancellation."""
    session = run.session
    tool_id, name = call["id"], call["name"]
    tool = session.registry.get(name)
    if tool is None:
        available = ", ".join(session.registry.names()) or "none"
        return _error(tool_id, f"No such tool available: {name}. Available tools: {available}.")
    if "_invalid_input" in call:
        raw = call["_invalid_input"][:_RAW_INPUT_PREVIEW]
        return _error(tool_id, f"The input for {name} was not valid JSON, so the tool did not "
                               f"run. Send the input again as one JSON object. Received: {raw}")
    tool_input = call["input"]
    problem = session.registry.validate(name, tool_input)
    if problem:
        return _error(tool_id, problem)
    decision = await session.permissions.decide(name, tool_input, tool_id)
    if decision.behavior == "deny":
        run.denials.append({"tool_name": name, "tool_use_id": tool_id, "tool_input": tool_input})
        run.interrupted = run.interrupted or decision.interrupt
        return _error(tool_id, decision.message)
    if decision.updated_input is not None:
        tool_input = decision.updated_input
        problem = session.registry.validate(name, tool_input)
        if problem:
            return _error(tool_id, problem)
    return await _execute(tool, tool_id, tool_input, run)


async def _execute(tool: Any, tool_id: str, tool_input: dict[str, Any],
                   run: Run) -> dict[str, Any]:
    try:
        output: ToolOutput = await tool.run(tool_input, run.session.tool_ctx)
    except ToolError as error:
        return _error(tool_id, str(error))
    except Exception as error:  # F11: a tool bug must not end the run
        return _error(tool_id, f"{tool.name} failed: {type(error).__name__}: {error}")
    return block_to_wire(ToolResultBlock(tool_use_id=tool_id, content=output.content,
                                         is_error=output.is_error))
