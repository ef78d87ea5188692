"""Screenshots for the docs, from the real browser (no playwright import: the test modules
that use it still collect where the browser stack is missing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def docs_screenshot(page: Any, name: str) -> None:
    """A screenshot for the docs (docs/screenshots/), taken only when FUXI_SCREENSHOTS
    names the folder to leave it in: the docs show the real browser, never a mock-up."""
    folder = os.environ.get("FUXI_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), animations="disabled")
