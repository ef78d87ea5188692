"""Per-model prices and the cost of a response's usage.

Source: the public per-model pricing (USD per million tokens) as collected on 2026-10-31
(official pricing page and model pages; Haiku 5.5 bands from third-party trackers of
October 2026). Columns: input, 5-minute cache write, 1-hour cache write, cache read,
output. Costs are client-side estimates, not billing data. Unknown models are priced as
the default model family and flagged by `is_known_model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PRICES", "PRICES_SOURCE_DATE", "Price", "cost_usd", "is_known_model", "price_for"]

PRICES_SOURCE_DATE = "2026-10-31"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    write_5m: float
    write_1h: float
    read: float
    output: float


_OPUS = Price(5, 6.25, 10, 0.50, 25)
_SONNET_5 = Price(2, 2.50, 4, 0.20, 10)
_SONNET_4 = Price(3, 3.75, 6, 0.30, 15)

#: Model id prefix -> price. The longest matching prefix wins, so dated ids
#: (e.g. `claude-haiku-4-5-20251001`) find their family.
PRICES: dict[str, Price] = {
    "claude-fable-5-2": Price(10, 12.50, 20, 0.25, 50),
    "claude-mythos-5-2": Price(10, 12.50, 20, 0.25, 50),
    "claude-fable-5-1": Price(10, 12.50, 20, 0.25, 50),
    "claude-mythos-5-1": Price(10, 12.50, 20, 0.25, 50),
    "claude-fable-5": Price(10, 12.50, 20, 1.00, 50),
    "claude-mythos-5": Price(10, 12.50, 20, 1.00, 50),
    "claude-opus-5-5": Price(4, 5, 8, 0.20, 20),
    "claude-opus-5": _OPUS,
    "claude-opus-4-8": _OPUS,
    "claude-opus-4-7": _OPUS,
    "claude-opus-4-6": _OPUS,
    "claude-opus-4-5": _OPUS,
    "claude-opus-4-1": Price(15, 18.75, 30, 1.50, 75),
    "claude-opus-4": Price(15, 18.75, 30, 1.50, 75),
    "claude-sonnet-5-5": _SONNET_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-haiku-5-5": Price(0.10, 0.125, 0.20, 0.01, 0.50),
    "claude-haiku-4-5": Price(1, 1.25, 2, 0.10, 5),
}
_HAIKU_5_5_LARGE = Price(0.50, 0.625, 1.00, 0.05, 2.50)
_HAIKU_5_5_BAND = 100_000
_FALLBACK = _SONNET_5


def _family(model: str) -> str | None:
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return max(matches, key=len) if matches else None


def is_known_model(model: str) -> bool:
    """Whether the price table has an entry for `model`."""
    return _family(model) is not None


def price_for(model: str, prompt_tokens: int = 0) -> Price:
    """The price of `model`; Haiku 5.5 prompts over 100k tokens use the upper band."""
    family = _family(model)
    if family == "claude-haiku-5-5" and prompt_tokens > _HAIKU_5_5_BAND:
        return _HAIKU_5_5_LARGE
    return PRICES[family] if family else _FALLBACK


def cost_usd(model: str, usage: dict[str, Any]) -> float:
    """The estimated cost of one response's usage.

    Cache writes are split by TTL when the API reports `cache_creation`; otherwise all of
    `cache_creation_input_tokens` is priced at the 5-minute rate.
    """
    fresh = usage.get("input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    read = usage.get("cache_read_input_tokens") or 0
    output = usage.get("output_tokens") or 0
    split = usage.get("cache_creation") or {}
    written_1h = split.get("ephemeral_1h_input_tokens") or 0
    written_5m = split.get("ephemeral_5m_input_tokens", written - written_1h) or 0
    price = price_for(model, prompt_tokens=fresh + written + read)
    total = (
        fresh * price.input
        + written_5m * price.write_5m
        + written_1h * price.write_1h
        + read * price.read
        + output * price.output
    )
    return total / 1_000_000
