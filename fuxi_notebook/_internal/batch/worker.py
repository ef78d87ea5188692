"""The task a Dask worker runs for one run of a batch (`execute_run`).

It unpacks the notebook's folder in a temporary folder of its own, starts the run in a
process of its own (`runner.py`, papermill) with the run's environment, and sends back
what the run wrote (a zip of the files new or changed, the output notebook always) with
its outcome. Nothing of it stays on the worker. Whatever happens to the task, the run's
process and its kernel go with it (the runner watches this process).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .bundle import changed_files, manifest, unpack

__all__ = ["execute_run"]

#: environment variables a run never inherits from the worker (a replay runs without a key)
_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "local"


def execute_run(task: dict[str, Any]) -> dict[str, Any]:
    """One run (see the module docstring). `task`: run_id, notebook (its name in the
    folder), bundle (the folder's zip), params, env (set for the run), unset (names taken
    out of its environment), kernel (None: the notebook's own)."""
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="fuxi-run-"))
    try:
        work = scratch / "work"
        unpack(task["bundle"], work)
        before = manifest(work)
        name = task["notebook"]
        source = scratch / "input" / name
        source.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / name, source)
        output = work / name
        spec = {"input": str(source), "output": str(output), "params": task["params"],
                "cwd": str(output.parent), "kernel": task.get("kernel"),
                "result": str(scratch / "result.json")}
        (scratch / "spec.json").write_text(json.dumps(spec))
        env = {k: v for k, v in os.environ.items() if k not in task.get("unset", ())}
        env.update(task.get("env") or {})
        env["FUXI_NOTEBOOK"] = str(output)
        with open(scratch / "runner.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "fuxi_notebook._internal.batch.runner",
                 str(scratch / "spec.json")], env=env, cwd=str(output.parent),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
            try:
                process.wait()
            finally:
                if process.poll() is None:  # this task is going away: so does the run
                    process.terminate()
                    try:
                        process.wait(10)
                    except subprocess.TimeoutExpired:
                        process.kill()
        result = scratch / "result.json"
        outcome: dict[str, Any]
        if result.exists():
            outcome = dict(json.loads(result.read_text()))
        else:
            tail = (scratch / "runner.log").read_bytes()[-600:].decode("utf-8", "replace")
            outcome = {"status": "failed",
                       "error": f"the run's process ended ({process.returncode}) without an "
                                f"outcome: {' '.join(tail.split())[-300:]}"}
        outcome["files"] = changed_files(work, before, always=(name,))
        outcome["worker"] = _worker_address()
        outcome.setdefault("duration_s", round(time.monotonic() - started, 3))
        return outcome
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
