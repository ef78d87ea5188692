"""ScriptedModel: an offline model that plays scripted turns, for logic tests and demos.

It synthesizes the same raw stream events as the fake server (from `script.turn_events`)
and feeds them through the same accumulator as `AnthropicModel`, so the loop sees exactly
what it would see from the API. Every request is recorded for assertions.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any, cast

from ...errors import ModelError, UnconsumedSteps, UnexpectedModelCall
from .accumulate import play_events
from .base import ModelRequest, ModelStreamItem
from .script import Fault, Turn, turn_events
from .wire_check import request_problem

__all__ = ["ScriptedModel"]

ScriptedStep = Turn | Exception | Callable[[ModelRequest], "Turn | Exception"]


class ScriptedModel:
    """A `Model` that answers each request with the next scripted step.

    A step is a `Turn`, a list of wire blocks (shorthand for a Turn), an exception to
    raise (e.g. `ModelError`), or a callable that receives the `ModelRequest` and returns
    one of those. Tool ids are deterministic: `toolu_01`, `toolu_02`, ...

    Attributes:
        requests: deep copies of every request received, in order.
    """

    def __init__(self, steps: Iterable[ScriptedStep | list[dict[str, Any]]] = (), *,
                 name: str = "scripted-model", usage: dict[str, Any] | None = None) -> None:
        self._name = name
        self._steps: list[Any] = list(steps)
        self._usage = usage or {"input_tokens": 10}
        self.requests: list[ModelRequest] = []
        self._tool_ids = (f"toolu_{n:02d}" for n in itertools.count(1))
        self._message_ids = (f"msg_{n:02d}" for n in itertools.count(1))

    @property
    def name(self) -> str:
        return self._name

    def add(self, *steps: ScriptedStep | list[dict[str, Any]]) -> None:
        """Append steps to the script."""
        self._steps.extend(steps)

    def assert_complete(self) -> None:
        """Raise `UnconsumedSteps` if scripted steps were never requested."""
        if self._steps:
            raise UnconsumedSteps(f"{len(self._steps)} scripted step(s) were not used")

    def _next_turn(self, request: ModelRequest) -> Turn:
        if not self._steps:
            raise UnexpectedModelCall(
                f"request #{len(self.requests)} but the script has no steps left"
            )
        step = self._steps.pop(0)
        if callable(step) and not isinstance(step, Turn | Exception):
            step = step(request)
        if isinstance(step, list):
            step = Turn(content=step)
        if isinstance(step, Fault):
            raise ModelError(step.message or f"scripted fault {step.status}", status=step.status)
        if isinstance(step, Exception):
            raise step
        return cast(Turn, step)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        """Play the next step as a stream."""
        self.requests.append(copy.deepcopy(request))
        problem = request_problem(request.to_wire())
        if problem is not None:  # what the real API rejects, ScriptedModel rejects too
            raise ModelError(f"API error {problem[0]}: {problem[1]}", status=problem[0],
                             retryable=False)
        turn = self._next_turn(request)
        events = turn_events(
            turn,
            message_id=next(self._message_ids),
            model=request.model,
            usage={**self._usage, **turn.usage},
            tool_ids=lambda: next(self._tool_ids),
        )
        for item in play_events(events):
            yield item
