"""One table of bad files driven through every reader of files the product did not write
(issue 35, finding 9 and its class): a link to /dev/zero (whose size reads 0), a FIFO, a
200 MB file, JSON nested 100,000 deep, bytes that are not UTF-8, a folder with the name.

Each must end in one line that names the file (an error, a note, a warning; on the
command line exit status 2), never a traceback, a hang or a full memory. Each case runs
in a process of its own with a bounded address space and a bounded wait, so a reader
that would hang or fill memory fails the case instead of the machine. The readers are
the rows of `bad_file_readers.ROWS`: a new reader is one more row.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from .bad_file_readers import KINDS, ROWS

ROOT = Path(__file__).resolve().parents[2]
#: what a case may take: far more than any reader needs, far less than the machine has
_MEMORY = 3 << 30
_SECONDS = 120


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))


def _run(argv: list[str], tmp_path: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if k not in ("FUXI_NOTEBOOK",)},
           "HOME": str(tmp_path / "home"), "FUXI_CONFIG_DIR": str(folder / "user"),
           "PYTHONPATH": str(ROOT), "FUXI_BLOCK_REAL_API": "1"}
    return subprocess.run([sys.executable, *argv], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=_SECONDS, preexec_fn=_bounded)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("row", ROWS)
def test_a_bad_file_is_one_line_wherever_it_is_read(tmp_path, row, kind):
    reader = ROWS[row]
    folder = tmp_path / "project"
    (folder / "user").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    if reader.setup is not None:
        reader.setup(folder)
    bad = reader.path(folder)
    bad.parent.mkdir(parents=True, exist_ok=True)
    KINDS[kind](bad)
    if reader.command:
        done = _run(["-m", "fuxi_notebook", *(str(bad) if a == "{path}" else a
                                              for a in reader.command)], tmp_path, folder)
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        said = done.stderr.splitlines()
        assert len(said) == 1, done.stderr
    else:
        done = _run(["-m", "tests.settings.bad_file_readers", row, str(folder)], tmp_path,
                    folder)
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout.splitlines()[-1])
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    naming = [line for line in said if bad.name in line]
    if kind not in reader.quiet:
        assert naming, said
    for line in naming:
        assert "\n" not in line.strip(), line
