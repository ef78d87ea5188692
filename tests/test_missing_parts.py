"""A missing part of the test stack is a skip on a developer's machine and a failure under
CI=true (tests/missing.py): CI can never pass by running fewer tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("ci", "outcome"), [("", "1 skipped"), ("true", "1 failed, 1 error")])
def test_a_missing_part_fails_under_ci(tmp_path, ci, outcome):
    probe = ROOT / "tests" / f"test_zz_missing_probe_{os.getpid()}_{ci or 'dev'}.py"
    probe.write_text(
        "import pytest\n"
        "from .missing import missing_part, skip_or_fail\n\n"
        "@missing_part('no chromium here')\n"
        "def test_marked():\n    pass\n\n"
        "def test_at_run_time():\n"
        "    skip_or_fail('no node here')\n" if ci else
        "from .missing import missing_part\n\n"
        "@missing_part('no chromium here')\n"
        "def test_marked():\n    pass\n")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsf",
             str(probe)], cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={**os.environ, "CI": ci})
    finally:
        probe.unlink()
    assert outcome in done.stdout, done.stdout + done.stderr
    assert ("no chromium here" in done.stdout) and (
        not ci or "a missing part is a failure, not a skip" in done.stdout)
