"""A real part of the test stack that is missing (the browser, node, acpx, jupyter-ai's
environment, Notebook 7): skipped with the reason on a developer's machine, a failure
under `CI=true`, where `scripts/test.sh` installs every part, so a broken install can never
pass as a run with fewer tests."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["in_ci", "missing_part", "skip_or_fail"]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing_part(reason: str) -> pytest.MarkDecorator:
    """The mark for tests that need a part that is missing here (see `skip_or_fail`)."""
    return pytest.mark.missing_part(reason)


def skip_or_fail(reason: str) -> NoReturn:
    """Skip (a developer's machine) or fail (CI) the running test: `reason` is missing."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing part is a failure, not a skip)",
                    pytrace=False)
    pytest.skip(reason)
