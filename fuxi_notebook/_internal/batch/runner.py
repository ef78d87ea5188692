"""One run of a batch, in a process of its own: `python -m ...batch.runner SPEC.json`.

papermill executes the notebook with the run's parameters in the run's folder (its kernel
inherits this process's environment: `FUXI_NOTEBOOK` names the output notebook, so each
`%%fuxi` cell knows its record's file); then each `%%fuxi` cell's record is copied into
its metadata (`sessions keep`), so the output notebook replays offline even once its
outputs are cleared. The outcome goes to the spec's `result` file as JSON. A kernel that
does not start is started once more (see `run`).

Its own process, so that a run's kernel never outlives it: a terminate signal stops the
execution the way an interrupt does (papermill shuts its kernel down), and if whoever
started it dies (a Dask worker killed mid-run), it stops too; the kernel, which watches
this process (`JPY_PARENT_PID`), follows.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "run"]


def _watch_parent(parent: int) -> None:
    """Exit when the process that started this one is gone."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _nothing_ran(output: Path, since: datetime.datetime) -> bool:
    """Whether no cell of the output notebook started in the attempt that began `since`:
    papermill stamps the notebook's start once its kernel answered (clearing every
    cell's count and stamp) and each cell as it starts. Before that stamp the file is
    what papermill wrote of its input, whose cells may carry counts and stamps of their
    own (a replay's input is a finished run): those say nothing of this attempt. True
    if papermill wrote no notebook at all."""
    if not output.exists():
        return True
    from ..sessions.notebook_file import read_document

    try:
        document = read_document(output)
    except Exception:
        return False  # unreadable: not known to be safe to run again
    stamped = ((document.get("metadata") or {}).get("papermill") or {}).get("start_time")
    try:
        began = datetime.datetime.fromisoformat(str(stamped)) if stamped else None
    except ValueError:
        return False
    if began is None or began.tzinfo is None or began < since:
        return True  # this attempt's cells never began
    return not any(((cell.get("metadata") or {}).get("papermill") or {}).get("start_time")
                   for cell in document.get("cells", []) if cell.get("cell_type") == "code")


def _one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())}"[:500]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Execute one notebook (see the module docstring); the outcome as a dict.

    A kernel that does not start (it died before answering, or did not answer in time: a
    port taken by another kernel starting at the same moment, a machine too busy) is
    started once more, since no cell ran and nothing was spent; a kernel that dies once
    cells ran is not, as what they did (model requests, files) would be done twice."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from ..common.atomic_file import write_atomically
    from ..sessions.keep import keep_records

    output = Path(spec["output"])
    started = time.monotonic()
    notes: list[str] = []
    for attempt in (1, 2):
        outcome: dict[str, Any] = {"status": "succeeded", "error": None}
        since = datetime.datetime.now(datetime.UTC)
        try:
            papermill.execute_notebook(
                spec["input"], str(output), parameters=spec.get("params") or {},
                cwd=spec["cwd"], progress_bar=False, log_output=False,
                kernel_name=spec.get("kernel"), request_save_on_cell_execute=False)
        except PapermillExecutionError as error:
            outcome = {"status": "failed",
                       "error": f"cell {error.exec_count}: {error.ename}: "
                                f"{' '.join(str(error.evalue).split())}"[:500]}
        except KeyboardInterrupt:
            outcome = {"status": "failed", "error": "stopped before it finished"}
        except (RuntimeError, TimeoutError) as error:  # the kernel, at its start or later
            outcome = {"status": "failed", "error": _one_line(error)}
            if attempt == 1 and _nothing_ran(output, since):
                notes.append(f"the kernel did not start ({_one_line(error)}); started again")
                continue
        except Exception as error:  # a kernel unknown, a notebook papermill refused
            outcome = {"status": "failed", "error": _one_line(error)}
        break
    if output.exists():
        try:
            kept = keep_records(output, from_outputs=True)
            if kept.text is not None:
                write_atomically(output, kept.text.encode())
        except Exception as error:  # the run stands; its records stay in the outputs
            notes.append(f"records not kept in metadata: {error}")
    if notes:
        outcome["notes"] = notes
    outcome["duration_s"] = round(time.monotonic() - started, 3)
    return outcome


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec_path = Path(args[0])
    spec = json.loads(spec_path.read_text())
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    signal.signal(signal.SIGTERM, _interrupt)
    outcome = run(spec)
    Path(spec["result"]).write_text(json.dumps(outcome))
    return 0 if outcome["status"] == "succeeded" else 1


if __name__ == "__main__":
    raise SystemExit(main())
