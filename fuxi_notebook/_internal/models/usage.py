"""Token usage and cost, accumulated per model across the responses of a session.

A response from a model without a known price (see `pricing.is_known_model`) adds its
tokens but no cost: the session's total cost is then unknown (`total_cost_usd` is None)
rather than a guess.

A response counts while it streams: the loop reports its usage so far (`streaming`) and,
when it ends, replaces that with the final count (`settle`), so the totals rise during the
response and still count each response exactly once.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .pricing import FIRST_PARTY, Endpoint, cost_usd

__all__ = ["UsageTotals", "tokens_in"]

_TOKEN_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def tokens_in(counts: Mapping[str, Any]) -> int:
    """All the input a model read: fresh, from the cache, and written to the cache."""
    return sum(int(counts.get(key) or 0) for key in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))


def _empty() -> dict[str, int]:
    return dict.fromkeys(_TOKEN_KEYS, 0)


def _plus(total: float | None, cost: float | None) -> float | None:
    """A sum that stays unknown once one part is unknown."""
    return None if total is None or cost is None else total + cost


@dataclass
class UsageTotals:
    """Running token counts and cost.

    Attributes:
        tokens: summed token counts over every response.
        by_model: per model id, token counts plus `costUSD` (None for a model without a
            known price).
        cost_usd: the estimated cost of the responses with a known price: what a budget can
            count. It is the whole cost only while `unpriced_responses` is 0; see
            `total_cost_usd`.
        unpriced_responses: how many responses came from a model without a known price.

    All four include the responses still streaming (see `streaming`).
    """

    tokens: dict[str, int] = field(default_factory=_empty)
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    cost_usd: float = 0.0
    unpriced_responses: int = 0
    #: where the responses are served (their price depends on it: pricing.Endpoint)
    endpoint: Endpoint = FIRST_PARTY
    #: while responses stream: the totals without them (the fields above add them on top)
    _settled: UsageTotals | None = field(default=None, repr=False, compare=False)
    #: per streaming response: (model, usage so far)
    _streaming: dict[Hashable, tuple[str, dict[str, Any]]] = field(
        default_factory=dict, repr=False, compare=False)

    @property
    def total_cost_usd(self) -> float | None:
        """The estimated total cost; None once any response's price is unknown, so that a
        partial sum is never shown as the cost."""
        return None if self.unpriced_responses else self.cost_usd

    @property
    def unpriced_models(self) -> list[str]:
        """The model ids that answered but have no known price."""
        return [model for model, entry in self.by_model.items() if entry["costUSD"] is None]

    def add(self, model: str, usage: Mapping[str, Any]) -> float | None:
        """Add one response's usage; returns its cost (None if the price is unknown)."""
        if self._settled is None:
            return self._add(model, usage)
        cost = self._settled._add(model, usage)
        self._refresh()
        return cost

    def streaming(self, key: Hashable, model: str, usage: Mapping[str, Any]) -> None:
        """The response `key` is still streaming and has used `usage` so far (cumulative
        counts, as `message_start` and `message_delta` report them): the totals show it,
        replacing what was reported for `key` before, until `settle(key)`."""
        if self._settled is None:
            self._settled = self.snapshot()
        self._streaming[key] = (model, dict(usage))
        self._refresh()

    def settle(self, key: Hashable, model: str | None = None,
               usage: Mapping[str, Any] | None = None) -> float | None:
        """The response `key` ended: its streamed usage is replaced by `usage` (its final
        count, added once) or, when None, dropped. Returns the cost of `usage`."""
        streamed = self._streaming.pop(key, None)
        cost = None
        if usage is not None:
            cost = self.add(model or (streamed[0] if streamed else ""), usage)
        elif streamed is not None:
            self._refresh()
        if not self._streaming and self._settled is not None:
            self._settled = None  # the fields hold exactly the settled sums again
        return cost

    def _refresh(self) -> None:
        """The fields := the settled totals plus every streaming response's usage so far.
        Updated in place (a view may hold `tokens`); sums are rebuilt, never subtracted,
        so no rounding is left behind when a streaming count is replaced."""
        assert self._settled is not None
        live = self._settled.snapshot()
        for model, usage in self._streaming.values():
            live._add(model, usage)
        self.tokens.update(live.tokens)  # same keys: a reader never sees an empty dict
        self.by_model.update(live.by_model)
        for model in set(self.by_model) - set(live.by_model):  # only streamed, then dropped
            del self.by_model[model]
        self.cost_usd, self.unpriced_responses = live.cost_usd, live.unpriced_responses

    def _add(self, model: str, usage: Mapping[str, Any]) -> float | None:
        cost = cost_usd(model, dict(usage), self.endpoint)
        entry = self.by_model.setdefault(model, {**_empty(), "costUSD": 0.0})
        for key in _TOKEN_KEYS:
            count = int(usage.get(key) or 0)
            self.tokens[key] += count
            entry[key] += count
        entry["costUSD"] = _plus(entry["costUSD"], cost)
        if cost is None:
            self.unpriced_responses += 1
        else:
            self.cost_usd += cost
        return cost

    def since(self, earlier: UsageTotals) -> dict[str, int]:
        """Token counts added after the snapshot `earlier`."""
        return {key: self.tokens[key] - earlier.tokens[key] for key in _TOKEN_KEYS}

    def cost_since(self, earlier: UsageTotals) -> float | None:
        """The cost added after the snapshot `earlier`; None if a response since then has
        no known price."""
        if self.unpriced_responses > earlier.unpriced_responses:
            return None
        return self.cost_usd - earlier.cost_usd

    def snapshot(self) -> UsageTotals:
        """A copy to diff against later."""
        return UsageTotals(
            tokens=dict(self.tokens),
            by_model={model: dict(entry) for model, entry in self.by_model.items()},
            cost_usd=self.cost_usd,
            unpriced_responses=self.unpriced_responses,
            endpoint=self.endpoint,
        )

    def model_usage(self) -> dict[str, dict[str, Any]]:
        """Per-model usage in the comparable SDK's camelCase shape (`costUSD` is None for a
        model without a known price)."""
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
