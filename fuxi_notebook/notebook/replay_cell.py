"""When a `%%fuxi` cell replays its record, and what the user is asked before it does.

The replay mode comes from the cell (`--replay`), then `%fuxi config --replay`, then
`FUXI_REPLAY` (all three count as asking for replay explicitly), else it is automatic:
`lenient` when no API key is configured, `off` when one is. `off` calls the model; `lenient`
replays and reports divergences in the cell; `strict` fails the cell at the first one.

A record's tool calls are code. In a frontend that can ask, the first replay in a notebook
shows what will be re-executed and waits for Replay / Cancel; a headless run re-executes
only when replay was asked for explicitly. Under replay nothing calls a model.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..sessions.record import SessionRecord
from ..sessions.replay import Divergence, first_divergence, recorded_calls
from ..sessions.transcript import input_summary
from ..types import ToolResultBlock, UserMessage
from .magic_args import REPLAY_MODES

__all__ = ["DivergenceWatch", "ReplayMode", "has_api_key", "replay_mode", "replay_summary"]

_TRUTHY = {"1", "true", "yes", "on"}
_FALSY = {"0", "false", "no"}
_LISTED_CALLS = 25
_FULL_CHARS = 2000


@dataclass(frozen=True)
class ReplayMode:
    """`mode` (off | lenient | strict) and whether someone asked for it explicitly."""

    mode: str
    explicit: bool

    @property
    def replays(self) -> bool:
        return self.mode != "off"


def has_api_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def replay_mode(cell: str | None, default: str | None) -> ReplayMode:
    """The mode for this cell. Raises ValueError for an unusable `FUXI_REPLAY`."""
    for value in (cell, default):
        if value is not None:
            return ReplayMode(value, True)
    env = os.environ.get("FUXI_REPLAY", "").strip().lower()
    if env:
        if env in REPLAY_MODES:
            return ReplayMode(env, True)
        if env in _TRUTHY:
            return ReplayMode("lenient", True)
        if env in _FALSY:
            return ReplayMode("off", True)
        raise ValueError(f"FUXI_REPLAY={env!r} is not one of off, lenient, strict")
    return ReplayMode("off" if has_api_key() else "lenient", False)


def replay_summary(records: Iterable[SessionRecord]) -> tuple[int, str]:
    """(number of tool calls, markdown) of what replaying `records` re-executes."""
    kinds: Counter[str] = Counter()
    lines = []
    for record in records:
        for call in recorded_calls(record).values():
            name = str(call.get("name", "?"))
            kinds[name] += 1
            # the tools' own declarations, as recorded: only `read` calls go unlisted
            if len(lines) < _LISTED_CALLS and record.kinds.get(name) != "read":
                lines.append(_listed(record.cell_id, name, call.get("input") or {}))
    total = sum(kinds.values())
    counts = ", ".join(f"{name} {n}" for name, n in kinds.most_common())
    text = (f"**Replay the recorded agent runs?** Their model turns come from the notebook "
            f"(no API calls), and their {total} tool call(s) run again for real in this "
            f"kernel: {counts or 'none'}.")
    if lines:
        text += "\n\nWhat runs or changes something:\n" + "\n".join(lines)
        more = sum(kinds.values()) - len(lines)
        if more > 0:
            text += f"\n- … and {more} more (read-only calls not listed)"
    text += ("\n\nDeny rules and the working-directory boundary apply as in a live run; "
             "recorded approvals are re-applied.")
    return total, text


def _listed(cell_id: str, name: str, tool_input: dict[str, Any]) -> str:
    """One call of the consent card; code or commands longer than a line in full (folded)."""
    summary = input_summary(name, tool_input).replace("`", "'")
    line = f"- cell {cell_id}: **{name}** `{summary}`"
    whole = next((tool_input[k] for k in ("code", "command", "content")
                  if isinstance(tool_input.get(k), str)), None)
    if whole is None or ("\n" not in whole.strip() and len(whole) <= 120):
        return line
    shown = whole if len(whole) <= _FULL_CHARS else whole[:_FULL_CHARS] + "\n…"
    fence = "`" * max(3, max((len(run) for run in re.findall("`+", shown)), default=0) + 1)
    return (f"{line}\n  <details><summary>the whole input</summary>\n\n  {fence}\n"
            + "\n".join(f"  {row}" for row in shown.splitlines()) + f"\n  {fence}\n\n"
            "  </details>")


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
