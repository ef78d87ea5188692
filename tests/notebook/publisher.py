"""A stand-in for the kernel's display publisher that records what a renderer publishes
(renderer tests without a kernel)."""

from __future__ import annotations

from typing import Any

__all__ = ["RecordingPublisher"]


class RecordingPublisher:
    """Records every `publish`: its data, display id and whether it updated."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def publish(self, data: dict[str, Any], metadata: dict[str, Any], *,
                transient: dict[str, Any], update: bool) -> None:
        self.calls.append({"data": data, "id": transient["display_id"], "update": update})
