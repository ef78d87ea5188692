"""What every `%%fuxi` cell run shares: the result object, the final outputs, the ticker.

A cell's outputs end in the same order however it ran, live or replayed, in JupyterLab or
headless: the transcript in segments, each followed by what the call it ends with showed
(figures, displays), the last holding the session record. That order is what nbval
compares. Notes on how a cell ran (resumed
from the saved notebook, forked, not replayed) are shown while it runs and kept in the
final display's metadata: the same cell may continue its conversation from memory or
from the file, and its outputs must not differ for that.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ....types import ResultMessage
from ...common.secret_names import API_CREDENTIALS
from .published import PublishedOutputs

__all__ = ["TICK_SECONDS", "CellStopped", "FinalOutputs", "FuxiRun", "secrets",
           "ticking", "with_notes"]

TICK_SECONDS = 0.1  # keeps the loop waking so "Interrupt kernel" lands promptly (ipykernel#881)


class CellStopped(KeyboardInterrupt):
    """A `%%fuxi` cell stopped by the user. It is an error, so the frontend still aborts
    the queued cells, but IPython shows it as one plain line (`_render_traceback_`), not
    as a traceback through the rewritten cell source into the package."""

    def _render_traceback_(self) -> list[str]:
        return [f"Stopped: {self}"]


def secrets() -> list[str]:
    """Values that must never reach the notebook, whatever their shape."""
    return [os.environ[name] for name in API_CREDENTIALS if os.environ.get(name)]


def with_notes(metadata: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Output metadata with the cell's notes under `fuxi.notes`."""
    if not notes:
        return metadata
    fuxi = dict(metadata.get("fuxi") or {})
    fuxi["notes"] = list(notes)
    return {**metadata, "fuxi": fuxi}


@dataclass
class FinalOutputs:
    """Everything the cell leaves behind, in order: transcript segments, each followed by
    the outputs of the call it ends with; the last segment holds the session record."""

    segments: list[tuple[dict[str, Any], dict[str, Any], str | None]]
    notes: list[str] = field(default_factory=list)
    published: PublishedOutputs | None = None
    #: the record output is shown with this display id, so a later cell (`%fuxi undo`)
    #: can update it in place (None: not updatable, as in a terminal)
    display_id: str | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        """The record output's metadata (cost, usage, timings, notes)."""
        return self.segments[-1][1]

    def with_notes(self) -> FinalOutputs:
        """The notes kept in the record output's metadata."""
        data, metadata, _ = self.segments[-1]
        last = (data, with_notes(metadata, self.notes), None)
        return FinalOutputs([*self.segments[:-1], last], self.notes, self.published,
                            self.display_id)

    def record_output(self) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
        """(display id, data, metadata) of the record output as shown, or None."""
        if self.display_id is None:
            return None
        data, metadata, _ = self.segments[-1]
        return self.display_id, data, metadata


@dataclass
class FuxiRun:
    """What a `%%fuxi` cell leaves in the namespace as `_fuxi`."""

    result: ResultMessage
    record: Any
    cell_id: str
    replayed: str | None = None  # the replay mode, if the cell was replayed
    divergences: list[Any] = field(default_factory=list)

    def __repr__(self) -> str:
        how = f", replayed={self.replayed!r}" if self.replayed else ""
        return (f"FuxiRun(cell_id={self.cell_id!r}, subtype={self.result.subtype!r}, "
                f"num_turns={self.result.num_turns}{how})")

    @property
    def text(self) -> str | None:
        return self.result.result

    @property
    def structured_output(self) -> Any:
        """The answer as data when the cell asked for `--output-schema` (else None)."""
        return self.result.structured_output


@contextlib.asynccontextmanager
async def ticking() -> AsyncIterator[None]:
    """A 100 ms ticker for the duration of the block (see TICK_SECONDS)."""
    task = asyncio.get_running_loop().create_task(_tick())
    try:
        yield
    finally:
        task.cancel()


async def _tick() -> None:
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            await asyncio.sleep(TICK_SECONDS)
