"""Test-wide guards: no real API, no ambient credentials, no host-specific settings."""

from __future__ import annotations

import os

import pytest

# Before anything imports the model layer: refuse every non-local API endpoint.
os.environ["FUXI_BLOCK_REAL_API"] = "1"

_AMBIENT = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "FUXI_MODEL",
            "IS_SANDBOX", "FUXI_MAX_RETRIES", "FUXI_STALL_TIMEOUT")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FUXI_BLOCK_REAL_API", "1")
