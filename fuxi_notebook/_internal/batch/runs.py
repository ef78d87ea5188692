"""A run of a batch: its id, its folder under the batch's, and its state on disk.

A run's id is made from its parameters (a readable part and a digest), so the same command
run again finds the same folders: a run whose `run.json` says it succeeded with the same
parameters and the same notebook (its digest) is kept, not run again (resume); a failed
or missing one runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RUN_FILE", "Run", "RunState", "make_runs", "notebook_digest", "read_state",
           "write_state"]

#: the state of a run, in its folder
RUN_FILE = "run.json"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def _canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


@dataclass(frozen=True)
class Run:
    """One notebook execution with its parameters."""

    run_id: str
    params: dict[str, Any]


def make_runs(grid: list[dict[str, Any]]) -> list[Run]:
    """A run per parameter set, ids unique and stable: the values, readable, then a
    digest of the whole set."""
    runs = []
    for params in grid:
        digest = hashlib.sha256(_canonical(params).encode()).hexdigest()[:8]
        readable = "-".join(_SLUG.sub("_", str(value))[:24] for value in params.values())
        runs.append(Run(f"{readable[:60]}-{digest}" if readable else f"run-{digest}", params))
    return runs


def notebook_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass
class RunState:
    """What a run's `run.json` says (and `summary.json` lists)."""

    run_id: str
    params: dict[str, Any]
    notebook_digest: str
    status: str = "pending"  # pending | running | succeeded | failed | skipped
    notebook: str | None = None  # the output notebook, relative to the batch's folder
    turns: int = 0
    cost_usd: float | None = 0.0
    duration_s: float = 0.0
    error: str | None = None
    attempts: int = 0
    budget_usd: float | None = None  # the most this run was allowed to spend
    cut: bool = False  # it ran on less than its share: the batch's budget was nearly spent
    cells: list[dict[str, Any]] = field(default_factory=list)  # its %%fuxi cells
    notes: list[str] = field(default_factory=list)  # what happened on the way (a retry)

    def same_run(self, other: RunState) -> bool:
        return (self.params == other.params
                and self.notebook_digest == other.notebook_digest)


def read_state(folder: Path) -> RunState | None:
    """A run folder's `run.json`, None if missing or not ours."""
    from ..common.reading import read_bounded

    try:
        data = read_bounded(folder / RUN_FILE, limit=5_000_000, where="run state")
        loaded = json.loads(data) if data is not None else None
        return RunState(**loaded) if isinstance(loaded, dict) else None
    except Exception:  # unreadable, not JSON, not a run state: not ours, run it again
        return None


def write_state(folder: Path, state: RunState) -> None:
    from ..common.atomic_file import write_atomically

    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(asdict(state), indent=1, sort_keys=True, default=str) + "\n"
    write_atomically(folder / RUN_FILE, text.encode())
