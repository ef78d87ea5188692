"""Which permission modes approve more than others: one table, read by the permission
engine, the project-settings gate (a mode a project may set without trust) and the
subagents (a definition's mode may narrow its parent's, never widen it)."""

from __future__ import annotations

from ...options import PERMISSION_MODES

__all__ = ["NARROW_MODES", "widens"]

#: For each mode, the modes that approve nothing it would not (each approves no call
#: without asking that the key's mode would ask about or deny). `plan` and `dontAsk` are
#: within `default`; `acceptEdits` and `auto` each approve what the other asks about.
_WITHIN: dict[str, frozenset[str]] = {
    "default": frozenset({"default", "plan", "dontAsk"}),
    "plan": frozenset({"plan"}),
    "dontAsk": frozenset({"dontAsk"}),
    "acceptEdits": frozenset({"acceptEdits", "default", "plan", "dontAsk"}),
    "auto": frozenset({"auto", "default", "plan", "dontAsk"}),
    "bypassPermissions": frozenset(PERMISSION_MODES),
}

#: The modes that approve no more than `default` does: a project may set them without
#: trust, and a subagent's definition may choose one under such a parent.
NARROW_MODES = _WITHIN["default"]


def widens(mode: str, than: str) -> bool:
    """Whether `mode` would approve a call without asking that `than` would not (a
    subagent's own mode may narrow its parent's, never widen it)."""
    return mode not in _WITHIN.get(than, frozenset({than}))
