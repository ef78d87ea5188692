"""Model layer: the `Model` protocol, `AnthropicModel`, `ScriptedModel`, and model resolution.

Importing this package never imports `anthropic`; `AnthropicModel` does that on first use.
"""

from __future__ import annotations

import os

from .anthropic import AnthropicModel
from .base import BlockDone, Model, ModelRequest, ModelResponse, ModelStreamItem, RawEvent
from .known import known_models, model_refusal, unknown_model_warning
from .retry import RetryPolicy
from .scripted import ScriptedModel

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_ALIASES",
    "AnthropicModel",
    "BlockDone",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelStreamItem",
    "RawEvent",
    "RetryPolicy",
    "ScriptedModel",
    "known_models",
    "model_name",
    "model_refusal",
    "resolve_model",
    "unknown_model_warning",
]

#: The model used when neither the options nor `FUXI_MODEL` name one. A current model
#: (see pricing.PRICES_SOURCE_DATE); the API warns about retired ones.
DEFAULT_MODEL = "claude-sonnet-5-5"


#: The short names the comparable SDK takes for a model (`model="haiku"`), as current ids.
MODEL_ALIASES: dict[str, str] = {"sonnet": "claude-sonnet-5-5", "opus": "claude-opus-5-5",
                                 "haiku": "claude-haiku-5-5"}


def model_name(spec: str | None = None) -> str:
    """The model id `spec` stands for: itself (an alias such as "haiku" made an id), else
    `FUXI_MODEL`, else `DEFAULT_MODEL`."""
    chosen = spec or os.environ.get("FUXI_MODEL") or DEFAULT_MODEL
    return MODEL_ALIASES.get(chosen, chosen)


def resolve_model(spec: str | Model | None) -> Model:
    """The model for `options.model`: an instance as is, else an id (`model_name`) served
    by the Anthropic API."""
    if spec is not None and not isinstance(spec, str):
        return spec
    return AnthropicModel(model_name(spec))
