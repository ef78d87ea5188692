"""What a `%%fuxi` cell showed besides its own view: figures and displays of its tools.

While a cell runs, the shell's display publisher is wrapped so every output a tool shows
(a figure drawn by the Python tool, a `display(df)`) is also noted. The notes serve two
ends: the record refers to a figure the cell shows instead of storing it twice, and a live
cell can end with exactly the outputs a replay produces (its view first, then what its
tools showed, no approval-card leftovers), which is what nbval compares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ..sessions.history import images_in_outputs

__all__ = ["PublishedOutputs"]


@dataclass
class PublishedOutputs:
    """Context manager noting the outputs published through `shell.display_pub`."""

    shell: Any
    hold: bool = False  # keep tool outputs back until `republish` (headless runs)
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
        self.outputs.append({"data": dict(data), "metadata": dict(metadata or {})})
        return True

    def image_digests(self) -> set[str]:
        """`image_digest`s of the images shown (see `sessions.record.build_record`)."""
        return set(images_in_outputs(self.outputs))

    def republish(self) -> None:
        """Show the noted outputs again, in order (after the cell's outputs were cleared)."""
        for output in self.outputs:
            self.shell.display_pub.publish(data=output["data"], metadata=output["metadata"])


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
        extra = {"transient": transient} if transient else {}
        self._real.publish(data=data, metadata=metadata, update=update, **extra, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)
