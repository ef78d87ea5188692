"""Fixtures for the built-in tool tests: a ToolContext rooted in a temp directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook._internal.tools.base import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)
