"""When a `%%fuxi` cell replays its record, and what the user is asked before it does.

The replay mode comes from the cell (`--replay`), then `%fuxi config --replay`, then
`FUXI_REPLAY` (all three count as asking for replay explicitly), else it is automatic:
`lenient` when no API key is configured, `off` when one is. `off` calls the model; `lenient`
replays and reports divergences in the cell; `strict` fails the cell at the first one.

A record's tool calls are code. In a frontend that can ask, a replay first shows what will
be re-executed (replay_consent.py, drawn from the records' plans: replay_plan.py) and waits
for Replay / Cancel; a headless run re-executes only when replay was asked for explicitly
(`FUXI_REPLAY` as it was at `%load_ext`). Under replay nothing calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ....types import ToolResultBlock, UserMessage
from ...common.replay_modes import REPLAY_MODES
from ...common.switches import switch
from ...sessions.record import SessionRecord
from ...sessions.replay import Divergence, first_divergence

__all__ = ["DivergenceWatch", "ReplayMode", "has_api_key", "replay_mode"]

_TRUTHY = {"1", "true", "yes", "on"}
_FALSY = {"0", "false", "no"}


@dataclass(frozen=True)
class ReplayMode:
    """`mode` (off | lenient | strict) and whether someone asked for it explicitly."""

    mode: str
    explicit: bool

    @property
    def replays(self) -> bool:
        return self.mode != "off"


def has_api_key() -> bool:
    """Whether a cell could run live (`settings/key_helper_setting.can_run_live`)."""
    from ...settings.key_helper_setting import can_run_live

    return can_run_live()


def replay_mode(cell: str | None, default: str | None) -> ReplayMode:
    """The mode for this cell. Raises ValueError for an unusable `FUXI_REPLAY`."""
    for value in (cell, default):
        if value is not None:
            return ReplayMode(value, True)
    env = (switch("FUXI_REPLAY") or "").strip().lower()  # as at load: code cannot set it
    if env:
        if env in REPLAY_MODES:
            return ReplayMode(env, True)
        if env in _TRUTHY:
            return ReplayMode("lenient", True)
        if env in _FALSY:
            return ReplayMode("off", True)
        raise ValueError(f"FUXI_REPLAY={env!r} is not one of off, lenient, strict")
    return ReplayMode("off" if has_api_key() else "lenient", False)


@dataclass
class DivergenceWatch:
    """Compares each re-executed tool result with the recorded one."""

    record: SessionRecord
    cwd: str
    secrets: tuple[str, ...] = ()
    found: list[Divergence] = field(default_factory=list)

    def check(self, message: Any) -> Divergence | None:
        """The divergence this message shows, if it is a tool result that differs."""
        if not isinstance(message, UserMessage) or not isinstance(message.content, list):
            return None
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                divergence = first_divergence(self.record, block.tool_use_id, block.content,
                                              bool(block.is_error), live_cwd=self.cwd,
                                              secrets=self.secrets)
                if divergence is not None:
                    self.found.append(divergence)
                    return divergence
        return None

    def warning(self) -> str:
        """Markdown for the cell: what diverged (lenient replay goes on regardless)."""
        first = self.found[0]
        more = len(self.found) - 1
        text = (f"**Replay diverged** ({len(self.found)} tool result(s) differ from the "
                f"record; the recorded model turns were used regardless). First: "
                f"{first.tool_name} {first.summary}\n\n```diff\n{first.diff}\n```")
        return text + (f"\n\n…and {more} more." if more else "")
