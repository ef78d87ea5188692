"""What a cell spent, in one line: tokens, cost (an estimate) and time.

Shared by the live status line and the final line of every cell, so both say it the same
way. The numbers come from a `ResultMessage` live and from the final output's metadata
afterwards (a replay shows the recorded run's numbers, so its outputs equal the saved
ones). A model without a known price makes the cost "price unknown", never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...models.pricing import format_cost
from ...models.usage import tokens_in
from ...sessions.listing import cell_cost

__all__ = ["cell_cost", "spend_words"]


def spend_words(usage: Mapping[str, Any] | None, cost_usd: float | None,
                duration_ms: int | float | None = None) -> str:
    """E.g. `1,234 in / 56 out tokens · $0.0123 (estimate) · 4.2 s` ("" without usage).
    `cost_usd` is this cell's cost, None when a model it used has no known price."""
    if not isinstance(usage, Mapping):
        return ""
    read = tokens_in({key: _int(value) for key, value in usage.items()})  # saved: may be odd
    parts = [f"{read:,} in / {_int(usage.get('output_tokens')):,} out tokens"]
    cost = cost_usd if isinstance(cost_usd, int | float) else None
    parts.append(format_cost(cost, estimate=True))
    if isinstance(duration_ms, int | float) and duration_ms >= 0:
        parts.append(f"{duration_ms / 1000:.1f} s")
    return " · ".join(parts)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0
