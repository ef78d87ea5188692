"""A run on another model: a slash command's `model` applies to its run only.

The session's model is swapped for the run and put back when the run ends, unless
something (`set_model()`) chose another model meanwhile. The other model is asked through
the session's own transport, so the endpoint, key and retry policy stay the user's (and a
test's scripted model serves it too). A model whose price is unknown is not used under a
budget (the budget could not be kept): the run keeps the session's model, with a note.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from typing import Any

from ....errors import ConfigurationError
from ...models.base import Model, ModelRequest, ModelStreamItem
from ...models.names import model_name
from ...models.pricing import check_budget

__all__ = ["RenamedModel", "model_for_run", "running_on"]


class RenamedModel:
    """A model's transport, asked for another model id."""

    def __init__(self, inner: Model, name: str) -> None:
        self._inner = inner
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        return self._inner.stream(request)


def model_for_run(session: Any, choice: str | None) -> tuple[Model | None, list[str]]:
    """The model `choice` names for one run of `session` (None: the session's own), and
    notes for the user when it cannot be used."""
    if not choice:
        return None, []
    name = model_name(choice)
    if name == session.model_name:
        return None, []
    try:
        check_budget(session.options.max_budget_usd, name, session.usage.endpoint)
    except ConfigurationError as error:
        return None, [f"The command's model {choice!r} was not used: {error}"]
    return RenamedModel(session.model, name), []


@contextmanager
def running_on(session: Any, model: Model | None) -> Iterator[None]:
    """`session` uses `model` (None: its own) until the block ends."""
    if model is None:
        yield
        return
    before, session.model = session.model, model
    try:
        yield
    finally:
        if session.model is model:  # set_model() during the run wins
            session.model = before
