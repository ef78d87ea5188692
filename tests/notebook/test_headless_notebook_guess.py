"""Which notebook a headless kernel runs, when nobody told it (issue 35, findings 8, 9).

`jupyter execute` and papermill run notebooks through nbclient: the kernel starts in the
notebook's folder and is told neither the notebook's path nor any cell id. The kernel
guesses the notebook from the cells it runs; a notebook planted beside it must never be
taken for it, and a bad file beside it (a link to /dev/zero, a FIFO, ...) is skipped.
Driven by nbclient itself, as those tools drive it, in kernels whose address space is
bounded (a reader that would fill memory fails the test, not the machine).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from ..settings.bad_file_readers import KINDS
from .kernel_harness import loaded_notebook

ROOT = Path(__file__).resolve().parents[2]
#: a kernel's address space: far more than it needs, far less than the machine has
_MEMORY = 4 << 30
BOUNDED_KERNEL = [sys.executable, "-c",
                  "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
                  f"({_MEMORY}, {_MEMORY})); from ipykernel import kernelapp; "
                  "kernelapp.launch_new_instance()", "-f", "{connection_file}"]
FIRST, SECOND = "%%fuxi --new\nlist the folder", "%%fuxi\nnow say goodbye"
PLANTED = tool_use("Bash", {"command": "echo pwned > planted.txt"})


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _recorded(folder: Path, api: FakeMessagesServer, *turns: Turn) -> Path:
    """FIRST and SECOND recorded live, as JupyterLab records them (cell ids c1, c2)."""
    folder.mkdir()
    api.reset(list(turns))
    path, nb = loaded_notebook(folder, FIRST, SECOND)
    env = {"FUXI_NOTEBOOK": str(path), "ANTHROPIC_BASE_URL": api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0035",
           "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT), "FUXI_REPLAY": ""}
    with NotebookFrontend(cwd=str(folder), env=env) as frontend:
        for cell in nb.cells:
            assert frontend.execute(cell, decide=lambda card: ("Allow", None)) == "ok", \
                cell.outputs
    nbformat.write(nb, path)
    return path


def _genuine(tmp_path: Path, api: FakeMessagesServer) -> Path:
    return _recorded(tmp_path / "genuine", api, Turn([text("Two files.")]),
                     Turn([text("Goodbye.")]))


def _planted(tmp_path: Path, api: FakeMessagesServer, genuine: Path) -> Path:
    """The same cells: the first one copied from the genuine notebook, record and all;
    the second one's record writes planted.txt (recorded in a folder of its own)."""
    path = _recorded(tmp_path / "planted", api, Turn([text("Two files.")]),
                     Turn([PLANTED]), Turn([text("Bye.")]))
    assert (path.parent / "planted.txt").exists()
    planted = nbformat.read(path, as_version=4)
    planted.cells[1] = nbformat.read(genuine, as_version=4).cells[1]
    nbformat.write(planted, path)
    return path


def _run_headless(folder: Path, notebook: Path, api: FakeMessagesServer,
                  **env: str) -> nbformat.NotebookNode:
    """`jupyter execute notebook` in `folder`: nbclient, the kernel in the notebook's
    folder, no FUXI_NOTEBOOK, no API key, errors kept in the outputs."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    manager = KernelManager()
    manager._kernel_spec = KernelSpec(argv=BOUNDED_KERNEL, display_name="fuxi-nbclient",
                                      language="python")
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("PYTEST_CURRENT_TEST", "FUXI_NOTEBOOK", "JPY_SESSION_NAME")}
    environment.update({"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "",
                        "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT),
                        "FUXI_REPLAY": "lenient", **env})
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, km=manager, allow_errors=True, timeout=90,
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=environment)
    return nb


def _errors(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr") + \
        "".join(f"{o['ename']}: {o['evalue']}" for o in cell.outputs
                if o["output_type"] == "error")


def _record(cell: Any) -> dict[str, Any]:
    for output in cell.outputs:
        if RECORD_MIME in output.get("data", {}):
            return dict(output["data"][RECORD_MIME])
    raise AssertionError(f"no record in {cell.outputs}")


def _place(source: Path, target: Path, *, age: int = 0) -> Path:
    shutil.copyfile(source, target)
    if age:
        stamp = target.stat().st_mtime - age
        os.utime(target, (stamp, stamp))
    return target


def test_a_planted_older_notebook_whose_first_cell_matches_is_not_replayed(tmp_path, api):
    genuine = _genuine(tmp_path, api)
    planted = _planted(tmp_path, api, genuine)
    run = tmp_path / "run"
    run.mkdir()
    # older than the notebook run, and first in the folder's order
    _place(planted, run / "aa-older.ipynb", age=3600)
    notebook = _place(genuine, run / "nb.ipynb")
    api.reset()
    nb = _run_headless(run, notebook, api)
    assert not (run / "planted.txt").exists(), [_errors(c) for c in nb.cells]
    error = _errors(nb.cells[2])
    assert error.startswith("UsageError: ") and "Traceback" not in error, nb.cells[2].outputs
    assert "aa-older.ipynb" in error and "nb.ipynb" in error and "FUXI_NOTEBOOK" in error
    assert len(error.strip().splitlines()) == 1, error
    assert api.requests == []


def test_two_notebooks_that_disagree_on_the_first_cell_are_a_refusal(tmp_path, api):
    genuine = _genuine(tmp_path, api)
    other = _recorded(tmp_path / "other", api, Turn([text("Three files.")]),
                      Turn([text("Goodbye.")]))
    run = tmp_path / "run"
    run.mkdir()
    _place(other, run / "copy.ipynb")
    notebook = _place(genuine, run / "nb.ipynb")
    api.reset()
    nb = _run_headless(run, notebook, api)
    error = _errors(nb.cells[1])
    assert error.startswith("UsageError: ") and len(error.strip().splitlines()) == 1, error
    assert "copy.ipynb" in error and "nb.ipynb" in error and "FUXI_NOTEBOOK" in error
    assert RECORD_MIME not in json.dumps(nb.cells[1].outputs) and api.requests == []


def test_the_one_notebook_holding_the_cells_replays(tmp_path, api):
    genuine = _genuine(tmp_path, api)
    recorded = nbformat.read(genuine, as_version=4)
    run = tmp_path / "run"
    run.mkdir()
    (run / "unrelated.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    notebook = _place(genuine, run / "nb.ipynb")
    api.reset()
    nb = _run_headless(run, notebook, api)
    assert [_errors(c) for c in nb.cells[1:]] == [
        "fuxi: this kernel was not told its notebook; it uses nb.ipynb, the notebook in "
        f"{run} with this cell (FUXI_NOTEBOOK=path chooses another)\n", ""]
    assert [_record(c) for c in nb.cells[1:]] == [_record(c) for c in recorded.cells[1:]]
    assert api.requests == []


def test_a_copy_that_agrees_on_every_cell_is_no_ambiguity(tmp_path, api):
    """papermill's output notebook starts as a copy of its input, in the same folder."""
    genuine = _genuine(tmp_path, api)
    run = tmp_path / "run"
    run.mkdir()
    notebook = _place(genuine, run / "input.ipynb", age=60)
    _place(genuine, run / "output.ipynb")
    api.reset()
    nb = _run_headless(run, notebook, api)
    assert "UsageError" not in "".join(_errors(c) for c in nb.cells)
    assert "it uses input.ipynb" in _errors(nb.cells[1]) and api.requests == []


def test_bad_files_beside_the_notebook_are_skipped(tmp_path, api):
    """`zz.ipynb -> /dev/zero` committed beside the notebook made the run die with
    MemoryError; a FIFO would hang it. Each is skipped: the notebook replays."""
    genuine = _genuine(tmp_path, api)
    recorded = nbformat.read(genuine, as_version=4)
    run = tmp_path / "run"
    run.mkdir()
    for kind, make in KINDS.items():
        make(run / f"zz-{kind}.ipynb")
    notebook = _place(genuine, run / "nb.ipynb")
    api.reset()
    nb = _run_headless(run, notebook, api)
    assert [o["output_type"] for c in nb.cells for o in c.outputs].count("error") == 0, \
        [_errors(c) for c in nb.cells]
    assert "it uses nb.ipynb" in _errors(nb.cells[1])
    assert [_record(c) for c in nb.cells[1:]] == [_record(c) for c in recorded.cells[1:]]


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_notebook_file_is_one_line_in_the_cell(tmp_path, api, kind):
    """FUXI_NOTEBOOK names a bad file: the cell says so in one line and runs."""
    api.add(Turn([text("Ran without it.")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi\nhello")
    path.unlink()
    KINDS[kind](path)
    env = {"FUXI_NOTEBOOK": str(path), "ANTHROPIC_BASE_URL": api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0035",
           "FUXI_BLOCK_REAL_API": "1", "PYTHONPATH": str(ROOT), "FUXI_REPLAY": ""}
    frontend = NotebookFrontend(cwd=str(tmp_path), env=env, flavor="nbclient")
    frontend.km._kernel_spec.argv = BOUNDED_KERNEL
    with frontend:
        statuses = [frontend.execute(cell, timeout=90) for cell in nb.cells]
    said = _errors(nb.cells[1])
    assert statuses == ["ok", "ok"], said
    assert "Traceback" not in said and "MemoryError" not in said
    (line,) = [line for line in said.splitlines() if path.name in line]
    assert line.startswith("fuxi: cannot read the notebook") or "not valid notebook" in line
    assert _record(nb.cells[1])["cell_id"].startswith("fx-")  # its id from its text
