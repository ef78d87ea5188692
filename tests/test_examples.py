"""The scripts in `examples/` run as a user runs them, against the fake Messages API.

Each runs as its own process with this checkout first on its path, reaching the fake
server through ANTHROPIC_BASE_URL; the assertions are on what it prints and does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fuxi_notebook.testing import Turn, text, tool_use

ROOT = Path(__file__).resolve().parents[1]


def _run(name: str, server, cwd: Path) -> str:
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key",
           "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT), "FUXI_MODEL": "claude-sonnet-5-5"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_structured_output_example(fake_api, tmp_path):
    (tmp_path / "sales.csv").write_text("region,total\nNorth,94000\nSouth,83000\n")
    fake_api.add(
        Turn([tool_use("Glob", {"pattern": "*.csv"})]),
        Turn([tool_use("StructuredOutput", {"region": "North", "total": "a lot"})]),
        Turn([text("North leads."), tool_use("StructuredOutput", {
            "region": "North", "total": 94000, "reason": "highest total in sales.csv"})]))
    out = _run("structured_output.py", fake_api, tmp_path)
    assert out.strip() == "North: 94,000 (highest total in sales.csv)"
    assert len(fake_api.requests) == 3  # the invalid answer was sent back once


def test_client_control_example(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("Write", {"file_path": "notes.txt", "content": "hello\n"})]),
        Turn([text("Wrote notes.txt.")]),
        Turn([text("A file saying hello.")]))
    out = _run("client_control.py", fake_api, tmp_path)
    assert out.splitlines() == ["model claude-sonnet-5-5, mode default",
                                "first: Wrote notes.txt.", "second: A file saying hello.",
                                "third: error_during_execution"]
    assert (tmp_path / "notes.txt").read_text() == "hello\n"  # no approval was needed
    assert [r["model"] for r in fake_api.requests] == ["claude-sonnet-5-5"] * 2 + [
        "claude-opus-5"]  # the essay never reached the model
