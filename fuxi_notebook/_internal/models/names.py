"""Which model a name means: the default, the comparable SDK's aliases, `FUXI_MODEL`."""

from __future__ import annotations

import os
import re

__all__ = ["DEFAULT_MODEL", "MODEL_ALIASES", "base_model_id", "checked_client_app", "model_name",
           "printable_name"]

#: a cloud provider's form of a model id: Bedrock's (`anthropic.claude-…-v1:0`, with a
#: geographic inference profile's prefix `us.`, `eu.`, `global.` …, or as an ARN) and
#: Vertex's (`claude-…@20250929`, which the tables already read as a dated id)
_BEDROCK = re.compile(r"^(?:arn:aws[\w-]*:bedrock:[^/]*/)?(?:[a-z]{2,6}(?:-[a-z]+)?\.)?"
                      r"anthropic\.(?P<id>claude-[\w.-]+?)(?:-v\d+(?::\d+)?)?$")

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


def printable_name(name: str) -> str:
    """`name` as it can be printed on one line (quoted if it holds control characters)."""
    return name if name.isprintable() and name.strip() == name and name else repr(name)


def base_model_id(model: str) -> str:
    """The Anthropic id of a provider's model id (Bedrock's `us.anthropic.claude-sonnet-
    4-5-20250929-v1:0` is `claude-sonnet-4-5-20250929`); any other id as it is. The
    per-model tables (prices, context windows) read ids through it."""
    found = _BEDROCK.match(model)
    return found.group("id") if found else model


def checked_client_app(app: object) -> str | None:
    """`client_app` as a User-Agent can carry it (visible ASCII), or one line."""
    if app is None:
        return None
    if not isinstance(app, str) or not app or len(app) > 200 or any(
            not 0x21 <= ord(c) <= 0x7e for c in app):
        from ...errors import ConfigurationError

        raise ConfigurationError("client_app must be a short name of visible ASCII "
                                 f"characters (no spaces), e.g. 'my-app/1.0'; not {app!r:.80}")
    return app
