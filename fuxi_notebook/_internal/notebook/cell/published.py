"""What a `%%fuxi` cell showed besides its own view: figures and displays of its tools.

While a cell runs, the shell's display publisher is wrapped so every output a tool shows
(a figure drawn by the Python tool, a `display(df)`) is also noted, with the tool call that
showed it (`agent.progress.current_call`). The notes serve three ends: the record refers
to a figure the cell shows instead of storing it twice; a renderer is told before an
output of a call reaches the cell (`on_output`), so it can end its display there and the
output sits right after that call's card; and a live cell can end with exactly the
outputs a replay produces (transcript segments with each call's outputs after its card,
no approval-card leftovers), which is what nbval compares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ...sessions.history import images_in_outputs
from ...tools.progress import current_call

__all__ = ["PublishedOutputs"]


@dataclass
class PublishedOutputs:
    """Context manager noting the outputs published through `shell.display_pub`."""

    shell: Any
    hold: bool = False  # keep tool outputs back until the final outputs (headless runs)
    #: called with the showing call's id just before one of its outputs reaches the cell
    on_output: Callable[[str | None], None] | None = None
    #: each noted output: {"data", "metadata", "call": tool_use_id or None}
    outputs: list[dict[str, Any]] = field(default_factory=list)
    _real: Any = None

    def __enter__(self) -> PublishedOutputs:
        self._real = self.shell.display_pub
        self.shell.display_pub = _Noting(self._real, self)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(self.shell.display_pub, _Noting):
            self.shell.display_pub = self._real

    def note(self, data: dict[str, Any], metadata: dict[str, Any] | None,
             transient: dict[str, Any] | None, update: bool) -> bool:
        """Note an output; False for our own displays (live view, cards) and updates."""
        if update or (transient or {}).get("display_id"):
            return False
        self.outputs.append({"data": dict(data), "metadata": dict(metadata or {}),
                             "call": current_call()})
        return True

    def image_digests(self) -> set[str]:
        """`image_digest`s of the images shown (see `sessions.record.build_record`)."""
        return set(images_in_outputs(self.outputs))

    def counts(self) -> dict[str, int]:
        """tool_use id -> how many outputs that call showed (the record's `shown_outputs`)."""
        found: dict[str, int] = {}
        for output in self.outputs:
            if output["call"] is not None:
                found[output["call"]] = found.get(output["call"], 0) + 1
        return found

    def of(self, call: str | None) -> list[dict[str, Any]]:
        """The outputs a call showed, in order (None: those shown outside any call)."""
        return [output for output in self.outputs if output["call"] == call]

    def publish(self, outputs: list[dict[str, Any]]) -> None:
        """Show noted outputs again (after the cell's outputs were cleared)."""
        for output in outputs:
            self.show(output["data"], output["metadata"])

    def show(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """Show an output of the cell's own (a transcript segment) without noting it."""
        publisher = self.shell.display_pub
        real = self._real if isinstance(publisher, _Noting) else publisher
        real.publish(data=data, metadata=metadata)


class _Noting:
    """Forwards to the real publisher and notes each output."""

    def __init__(self, real: Any, log: PublishedOutputs) -> None:
        self._real = real
        self._log = log

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None,
                source: Any = None, *, transient: dict[str, Any] | None = None,
                update: bool = False, **kwargs: Any) -> None:
        noted = self._log.note(data, metadata, transient, update)
        if noted and self._log.hold:
            return
        if noted and self._log.on_output is not None:
            self._log.on_output(self._log.outputs[-1]["call"])
        extra = {"transient": transient} if transient else {}
        self._real.publish(data=data, metadata=metadata, update=update, **extra, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
