"""The notebook's comm for `%fuxi undo` in a kernel that has not heard from the frontend
extension yet: a new kernel, after a restart, undoing a cell an earlier kernel ran.

The kernel opens the `fuxi.notebook` comm at its first `%%fuxi` cell, which awaits the
extension's hello; a line magic cannot wait (the hello is read only after the line has
ended). So the cell changes undo asks for wait here: the comm is opened on the kernel's
loop, and once the extension said hello they are sent, each answered as undo's are (the
line shows them as waiting until then); if no hello comes, each is answered that the
extension is not connected. Where the comm is already connected, or known to be absent,
this is the comm itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["ConnectingCells"]

#: the answer a waiting change gets when the extension never says hello
NOT_CONNECTED = "the notebook's frontend extension did not answer"

_Then = Callable[[dict[str, Any]], None]


class ConnectingCells:
    """`change_then` on `live` (a `LiveNotebook`), connecting first if it never was."""

    def __init__(self, live: Any, path: str | None) -> None:
        self.live = live
        self.path = path
        self._queued: list[tuple[dict[str, Any], _Then]] = []
        self._task: asyncio.Task[bool] | None = None

    def change_then(self, request: dict[str, Any], then: _Then) -> bool:
        """As `LiveNotebook.change_then`; a change asked before the extension answered
        waits for its hello. False: not asked (no extension, no kernel loop)."""
        if self.live.can_edit or self.live.state not in ("unknown", "waiting"):
            return bool(self.live.change_then(request, then))
        if self._task is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # terminal IPython: no comm to open
                return False
            self._task = loop.create_task(self.live.connected(self.path))
            self._task.add_done_callback(self._connected)
        self._queued.append((request, then))
        return True

    def _connected(self, task: asyncio.Task[bool]) -> None:
        """The extension said hello, or never will: each waiting change is asked now, or
        answered that it cannot be."""
        queued, self._queued = self._queued, []
        for request, then in queued:
            if task.cancelled() or task.exception() is not None or not (
                    self.live.change_then(request, then)):
                then({"error": NOT_CONNECTED})
