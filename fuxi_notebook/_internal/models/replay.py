"""ReplayModel: serves a recorded run's model turns instead of calling an API.

Each request is answered with the next recorded assistant message, streamed through the
same events and accumulator as the other models, so the loop runs unchanged: tools execute
for real, permissions apply, hooks fire. Replay costs nothing (zero usage) and never
touches the network.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import AsyncGenerator
from typing import Any

from ...errors import ModelError
from .accumulate import play_events
from .base import ModelRequest, ModelStreamItem
from .script import Turn, turn_events

__all__ = ["ReplayModel"]


class ReplayModel:
    """A `Model` whose responses are the assistant messages of a recorded run, in order
    (a notebook's replay serves the turns of its plan: notebook/replay_plan.py).

    Attributes:
        requests: how many requests were answered.
    """

    def __init__(self, turns: list[list[dict[str, Any]]], *, name: str) -> None:
        self._name = name
        self._turns = [copy.deepcopy(turn) for turn in turns]
        self.requests = 0
        self._ids = (f"toolu_replay_{n:02d}" for n in itertools.count(1))

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """Recorded turns not served yet."""
        return len(self._turns)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        """Play the next recorded turn; past the end, a non-retryable error."""
        if not self._turns:
            raise ModelError("the recorded run has no further model turn (the replay went "
                             "further than the record)", retryable=False)
        self.requests += 1
        content = self._turns.pop(0)
        events = turn_events(Turn(content=content, usage={"output_tokens": 0}),
                             message_id=f"msg_replay_{self.requests:02d}", model=self._name,
                             usage={"input_tokens": 0}, tool_ids=lambda: next(self._ids))
        for item in play_events(events):
            yield item

