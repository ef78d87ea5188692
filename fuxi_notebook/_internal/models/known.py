"""The models this version knows, and the one line each unknown one is worth.

A model id this version does not know still runs (the API may well serve it), but nothing
says so otherwise: its cost shows as "price unknown" at the end, and a typo
(`claude-sonet-5-5`) costs a request the API refuses. So a run on an unknown model is told
in one line before it starts (`unknown_model_warning`), and the API's refusal of a model it
does not have is one line too (`anthropic.model_refusal`).

Known means: in the price table (`pricing.PRICES`), as an id or its dated form.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from .names import model_name, printable_name
from .pricing import PRICES, is_known_model

if TYPE_CHECKING:
    from .base import Model

__all__ = ["known_models", "unknown_model_warning"]


def known_models() -> list[str]:
    """The model ids this version knows (their dated forms are known too)."""
    return list(PRICES)


def _api_name(spec: str | Model | None) -> str | None:
    """The id the API would be asked for (None: the model is not the Anthropic API's)."""
    from .anthropic import AnthropicModel

    if spec is None or isinstance(spec, str):
        return model_name(spec)
    return spec.name if isinstance(spec, AnthropicModel) else None


def unknown_model_warning(spec: str | Model | None) -> str | None:
    """One line to show before a run on a model this version does not know; None if it
    knows it.

    `spec` is what the options name: an id or an alias (`haiku`), None for the default
    (`FUXI_MODEL`, else `DEFAULT_MODEL`), or a model object (only an `AnthropicModel` is
    checked: another kind of model is not served by the API).
    """
    name = _api_name(spec)
    if name is None or is_known_model(name):
        return None
    close = difflib.get_close_matches(name, PRICES, n=1, cutoff=0.8)
    hint = f"did you mean {close[0]}? " if close else ""
    return (f"fuxi: {printable_name(name)} is not a model this version knows ({hint}known: "
            f"{', '.join(PRICES)}); its cost is not estimated")
