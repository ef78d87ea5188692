"""What the cloud providers' fakes share: model ids, `anthropic_version`, body checks.

Kept apart from each fake so that the three stay small and agree on the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

__all__ = [
    "SDK_API_VERSION",
    "anthropic_name",
    "version_problem",
    "without_provider_keys",
]

#: the `anthropic_version` the installed `anthropic` 2.x provider clients put in the body
#: (`anthropic._constants.ANTHROPIC_API_VERSION`); the providers' own dated values
#: (`bedrock-2023-05-31`, `vertex-2023-10-16`) are accepted too
SDK_API_VERSION = "2026-10-21"

_GEO = re.compile(r"^(?:us|eu|apac|au|jp|ca|global|us-gov)\.(?=anthropic\.)")
_BEDROCK_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")


def anthropic_name(provider_id: str) -> str:
    """The model name a provider's response carries for its own id: Bedrock's
    `[us.]anthropic.claude-x-v1:0` and Vertex's `claude-x@20260101` become `claude-x` and
    `claude-x-20260101`; anything else (an ARN, a first-party name) is kept."""
    name = _GEO.sub("", provider_id)
    if name.startswith("anthropic.claude-"):
        return _BEDROCK_SUFFIX.sub("", name.removeprefix("anthropic."))
    if name.startswith("claude-") and "@" in name:
        base, _, date = name.partition("@")
        return f"{base}-{date}" if date else base
    return name


def version_problem(body: dict[str, Any], accepted: Collection[str]) -> str | None:
    """Why `anthropic_version` is refused ("missing" or "invalid"), or None."""
    version = body.get("anthropic_version")
    if version is None:
        return "missing"
    return None if version in accepted else "invalid"


def without_provider_keys(body: dict[str, Any]) -> dict[str, Any]:
    """The body less what only the provider reads (its version and beta list)."""
    return {k: v for k, v in body.items() if k not in ("anthropic_version", "anthropic_beta")}
