"""`python -m fuxi_notebook`: a bad argument or a bad file is one line on stderr and a
non-zero exit (2), for every subcommand: never argparse's usage wall, never a traceback
(issue 35, "bad input gets one clear line").

Each case runs the real command in a process of its own, as a user's shell does."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, query
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook.testing import text

REPO = Path(__file__).resolve().parents[2]
SESSION = "c11c11c1-0000-4000-8000-000000000035"


def _run(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "fuxi_notebook", *argv], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=120)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    said = done.stderr.splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(said) == 1, done.stderr
    assert "Traceback" not in done.stderr and not said[0].startswith("usage:"), done.stderr
    return said[0]


@pytest.mark.parametrize("argv", [
    [],
    ["--bogus"],
    ["acp", "--bogus"],
    ["acp", "--max-budget-usd", "x"],
    ["acp", "--permission-mode"],
    ["demo", "--fast"],
    ["sessions"],
    ["sessions", "list"],
    ["sessions", "list", "nb.ipynb", "extra"],
    ["sessions", "show"],
    ["sessions", "export", "nb.ipynb", "--format", "bad"],
    ["sessions", "export", "nb.ipynb"],
    ["sessions", "keep"],
    ["sessions", "cells"],
    ["sessions", "cells", SESSION],
    ["sessions", "frobnicate"],
])
def test_a_bad_argument_is_one_line_and_exit_status_2(tmp_path, argv):
    line = _one_line(_run(tmp_path, *argv))
    assert "error:" in line


@pytest.mark.parametrize("session_id", ["../../etc/passwd", "/etc/passwd", "..", "a/b",
                                        "x" * 5000, "a\nb", "a\u202eb"])
def test_sessions_cells_with_an_id_no_session_file_can_have(tmp_path, session_id):
    line = _one_line(_run(tmp_path, "sessions", "cells", session_id, "-o", "out.ipynb"))
    assert line.startswith("fuxi sessions: ")
    assert "\u202e" not in line  # what hides or reorders text is shown escaped
    assert not (tmp_path / "out.ipynb").exists()


def test_sessions_cells_that_cannot_write_its_output_is_one_line(tmp_path):
    async def save() -> None:
        options = FuxiAgentOptions(model=ScriptedModel([[text("Hi.")]]), cwd=tmp_path,
                                   session_id=SESSION)
        async for _ in query(prompt="hello", options=options):
            pass

    asyncio.run(save())
    line = _one_line(_run(tmp_path, "sessions", "cells", SESSION, "-o", "no/such/dir/x.ipynb"))
    assert line.startswith("fuxi sessions: cannot write ")
    done = _run(tmp_path, "sessions", "cells", SESSION, "-o", "out.ipynb")
    assert done.returncode == 0 and (tmp_path / "out.ipynb").is_file(), done.stderr


@pytest.mark.parametrize("argv", [["sessions", "show", "a\nb\u2028c\u202ed.ipynb"],
                                  ["sessions", "keep", "a\nb\u202ec.ipynb"]])
def test_a_file_name_with_hidden_characters_is_shown_escaped_on_one_line(tmp_path, argv):
    line = _one_line(_run(tmp_path, *argv))
    assert "\u2028" not in line and "\u202e" not in line and "\\u202e" in line
