"""Which model a name means: the default, the comparable SDK's aliases, `FUXI_MODEL`."""

from __future__ import annotations

import os

__all__ = ["DEFAULT_MODEL", "MODEL_ALIASES", "model_name", "printable_name"]

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
