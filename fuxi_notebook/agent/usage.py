"""Token usage and cost, accumulated per model across the responses of a session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..pricing import cost_usd

__all__ = ["UsageTotals"]

_TOKEN_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _empty() -> dict[str, int]:
    return dict.fromkeys(_TOKEN_KEYS, 0)


@dataclass
class UsageTotals:
    """Running token counts and cost.

    Attributes:
        tokens: summed token counts over every response.
        by_model: per model id, token counts plus `costUSD`.
        cost_usd: the estimated total cost.
    """

    tokens: dict[str, int] = field(default_factory=_empty)
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    cost_usd: float = 0.0

    def add(self, model: str, usage: dict[str, Any]) -> float:
        """Add one response's usage; returns its cost."""
        cost = cost_usd(model, usage)
        entry = self.by_model.setdefault(model, {**_empty(), "costUSD": 0.0})
        for key in _TOKEN_KEYS:
            count = int(usage.get(key) or 0)
            self.tokens[key] += count
            entry[key] += count
        entry["costUSD"] += cost
        self.cost_usd += cost
        return cost

    def since(self, earlier: UsageTotals) -> dict[str, int]:
        """Token counts added after the snapshot `earlier`."""
        return {key: self.tokens[key] - earlier.tokens[key] for key in _TOKEN_KEYS}

    def snapshot(self) -> UsageTotals:
        """A copy to diff against later."""
        return UsageTotals(
            tokens=dict(self.tokens),
            by_model={model: dict(entry) for model, entry in self.by_model.items()},
            cost_usd=self.cost_usd,
        )

    def model_usage(self) -> dict[str, dict[str, Any]]:
        """Per-model usage in the comparable SDK's camelCase shape."""
        return {
            model: {
                "inputTokens": entry["input_tokens"],
                "outputTokens": entry["output_tokens"],
                "cacheCreationInputTokens": entry["cache_creation_input_tokens"],
                "cacheReadInputTokens": entry["cache_read_input_tokens"],
                "costUSD": entry["costUSD"],
            }
            for model, entry in self.by_model.items()
        }
