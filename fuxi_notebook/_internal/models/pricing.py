"""Per-model prices and the cost of a response's usage.

Source: the public per-model pricing (USD per million tokens) as collected on 2026-10-31
(official pricing page and model pages; Haiku 5.5 bands from third-party trackers of
October 2026). Columns: input, 5-minute cache write, 1-hour cache write, cache read,
output. Costs are client-side estimates, not billing data. A model the table does not
know has no price (`cost_usd` returns None, shown as "price unknown"): a guess from
another family's price would read like a bill.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .names import base_model_id

__all__ = ["FIRST_PARTY", "PRICES", "PRICES_SOURCE_DATE", "PRICE_UNKNOWN",
           "REGIONAL_PREMIUM", "WEB_SEARCH_USD", "Endpoint", "Price", "check_budget",
           "cost_usd", "endpoint_of", "format_cost", "is_known_model", "model_family",
           "models_table", "price_for"]

PRICES_SOURCE_DATE = "2026-10-31"

#: What a cost is shown as when a model's price is not in the table.
PRICE_UNKNOWN = "price unknown"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    write_5m: float
    write_1h: float
    read: float
    output: float


@dataclass(frozen=True)
class Endpoint:
    """Where responses are served, as far as their price depends on it.

    The table holds the Anthropic API's prices, which are also those of Amazon Bedrock's
    and Google Vertex AI's global endpoints. Their regional endpoints (a Bedrock
    geographic or in-region id, a Vertex region other than `global`) cost
    `REGIONAL_PREMIUM` more for the models from Claude Sonnet 4.5 and Haiku 4.5 on
    (Anthropic's pricing page); the models before them cost the same everywhere. An
    endpoint whose price the table cannot give (Microsoft Foundry's, a Bedrock ARN whose
    profile could be either) has `priced` False: its cost is unknown, never a guess.
    """

    provider: str = "anthropic"
    regional: bool = False
    priced: bool = True


#: the Anthropic API itself
FIRST_PARTY = Endpoint()
#: what a regional endpoint of Bedrock or Vertex adds to the global price
REGIONAL_PREMIUM = 0.10


def endpoint_of(model: object) -> Endpoint:
    """The endpoint a `Model` is served from (`FIRST_PARTY` unless it says otherwise)."""
    endpoint = getattr(model, "endpoint", None)
    return endpoint if isinstance(endpoint, Endpoint) else FIRST_PARTY


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
#: the families released before the regional premium: the same price on every endpoint
_SAME_EVERYWHERE = frozenset({"claude-opus-4", "claude-opus-4-1", "claude-sonnet-4"})
_HAIKU_5_5 = "claude-haiku-5-5"
_HAIKU_5_5_LARGE = Price(0.50, 0.625, 1.00, 0.05, 2.50)
_HAIKU_5_5_BAND = 100_000
#: What may follow a family prefix: nothing, a date or suffix (`-20251001`), or a
#: Vertex-style version (`@20250805`); `claude-opus-45` is not `claude-opus-4`.
_SUFFIX_STARTS = ("-", "@")


def model_family(model: str, families: Iterable[str]) -> str | None:
    """The longest of `families` (model id prefixes) that `model` belongs to: the id
    itself, or it followed by a date or suffix. Shared by every per-model table."""
    model = base_model_id(model)
    matches = [prefix for prefix in families if model == prefix
               or (model.startswith(prefix) and model[len(prefix)] in _SUFFIX_STARTS)]
    return max(matches, key=len) if matches else None


@lru_cache(maxsize=256)  # every response is priced, twice while it streams
def _family(model: str) -> str | None:
    return model_family(model, PRICES)


def is_known_model(model: str, endpoint: Endpoint = FIRST_PARTY) -> bool:
    """Whether `model` (an id or its dated form) has a price on `endpoint`."""
    return price_for(model, endpoint=endpoint) is not None


def check_budget(max_budget_usd: float | None, model: str,
                 endpoint: Endpoint = FIRST_PARTY) -> None:
    """A budget is kept by pricing each response: with a model whose price is unknown it
    could never stop the run, so it is refused up front instead of silently ignored."""
    if max_budget_usd is not None and not is_known_model(model, endpoint):
        from ...errors import ConfigurationError

        where = "" if endpoint.priced else f" on {endpoint.provider}'s endpoint"
        raise ConfigurationError(
            f"max_budget_usd cannot be kept with model {model!r}{where}: its price is "
            "unknown, so the cost of a run cannot be counted (use a model from the price "
            "table, or no budget)")


def price_for(model: str, prompt_tokens: int = 0,
              endpoint: Endpoint = FIRST_PARTY) -> Price | None:
    """The price of `model` on `endpoint`, None if unknown; Haiku 5.5 prompts over 100k
    tokens use the upper band."""
    family = _family(model)
    if family is None or not endpoint.priced:
        return None
    if family == _HAIKU_5_5 and prompt_tokens > _HAIKU_5_5_BAND:
        price = _HAIKU_5_5_LARGE
    else:
        price = PRICES[family]
    if endpoint.regional and family not in _SAME_EVERYWHERE:
        return _regional(price)
    return price


@lru_cache(maxsize=64)
def _regional(price: Price) -> Price:
    factor = 1 + REGIONAL_PREMIUM
    return Price(*(round(value * factor, 6) for value in (
        price.input, price.write_5m, price.write_1h, price.read, price.output)))


#: USD per server-side web search (`usage.server_tool_use.web_search_requests`): the
#: public $10 per 1,000 searches. Not in the reference price collection of 2026-10-31:
#: the long-standing list price, to be checked against the pricing page when it moves.
WEB_SEARCH_USD = 10 / 1_000


def cost_usd(model: str, usage: dict[str, Any],
             endpoint: Endpoint = FIRST_PARTY) -> float | None:
    """The estimated cost of one response's usage; None when `model` has no known price
    on `endpoint`.

    Cache writes are split by TTL when the API reports `cache_creation`; otherwise all of
    `cache_creation_input_tokens` is priced at the 5-minute rate. Web searches the
    response ran are priced per search (`WEB_SEARCH_USD`).
    """
    fresh = usage.get("input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    read = usage.get("cache_read_input_tokens") or 0
    output = usage.get("output_tokens") or 0
    split = usage.get("cache_creation") or {}
    written_1h = split.get("ephemeral_1h_input_tokens") or 0
    written_5m = split.get("ephemeral_5m_input_tokens", written - written_1h) or 0
    price = price_for(model, prompt_tokens=fresh + written + read, endpoint=endpoint)
    if price is None:
        return None
    total = (
        fresh * price.input
        + written_5m * price.write_5m
        + written_1h * price.write_1h
        + read * price.read
        + output * price.output
    )
    server = usage.get("server_tool_use") or {}
    searches = server.get("web_search_requests") or 0 if isinstance(server, dict) else 0
    return total / 1_000_000 + searches * WEB_SEARCH_USD


def format_cost(cost: float | None, *, estimate: bool = False) -> str:
    """`$0.0123` (`$0.0123 (estimate)`: computed from the price table, not billed), or
    "price unknown" when the cost is None (never a made-up `$0`)."""
    if cost is None:
        return PRICE_UNKNOWN
    return f"${cost:.4f} (estimate)" if estimate else f"${cost:.4f}"


def _dollars(per_million: float) -> str:
    return f"${per_million:.2f}" if round(per_million, 2) == per_million else f"${per_million:g}"


def _default_mark(family: str, default_model: str) -> str:
    if default_model == family:
        return "yes"
    return f"yes (as `{default_model}`)" if _family(default_model) == family else ""


def models_table(default_model: str) -> str:
    """The known models and their prices as a markdown table (also readable as plain
    text), marking `default_model`; notes say how unknown models are shown."""
    rows = ["| model | input | output | cache read | cache write 5m | cache write 1h | default |",
            "|---|---|---|---|---|---|---|"]
    for model, price in PRICES.items():
        cells = [_dollars(v) for v in (price.input, price.output, price.read, price.write_5m,
                                       price.write_1h)]
        rows.append(f"| {model} | {' | '.join(cells)} | {_default_mark(model, default_model)} |")
    large = _HAIKU_5_5_LARGE
    notes = [f"USD per million tokens, as of {PRICES_SOURCE_DATE}; dated ids (e.g. "
             "`claude-haiku-4-5-20251001`) use their family's price. Estimates, not billing.",
             f"{_HAIKU_5_5}: prompts over {_HAIKU_5_5_BAND:,} tokens cost {_dollars(large.input)}"
             f" input / {_dollars(large.output)} output / {_dollars(large.read)} cache read / "
             f"{_dollars(large.write_5m)} and {_dollars(large.write_1h)} cache writes.",
             f"Other models run, but their cost shows as \"{PRICE_UNKNOWN}\" (tokens only)."]
    if not is_known_model(default_model):
        notes.insert(0, f"The default model `{default_model}` is not in this table: its cost "
                        f"shows as \"{PRICE_UNKNOWN}\".")
    return "\n".join(rows) + "\n\n" + "\n\n".join(notes)
