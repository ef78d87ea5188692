"""Every settings test runs with HOME in a temp folder, so nothing can reach the real one."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _temp_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
