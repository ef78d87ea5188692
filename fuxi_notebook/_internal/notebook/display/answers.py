"""What a person answers on an approval card, and what "Always allow" would add: shared
by the renderers (render.py) and the cards with buttons (approval_widgets.py)."""

from __future__ import annotations

from typing import Any

from ....options import ToolPermissionContext

__all__ = ["Answer", "always_adds"]

#: An approval answer: ("allow" | "always" | "deny", reason, updated_input)
Answer = tuple[str, str | None, dict[str, Any] | None]


def always_adds(context: ToolPermissionContext) -> str:
    """The rule text "Always allow" would add (from the tool's declaration), or ""."""
    return "; ".join(str(rule) for update in context.suggestions for rule in update.rules or [])
