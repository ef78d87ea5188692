"""Run a notebook over many parameters on Dask, each run recorded and replayable.

    from fuxi_notebook import batch

    result = batch.run("report.ipynb", out="runs", grid={"region": ["north", "south"]},
                       max_budget_usd_total=5.0)
    result.summary["total_cost_usd"], result.exit_code

The same as `python -m fuxi_notebook batch report.ipynb -p region north -p region south
--out runs --max-budget-usd-total 5` (docs/batch.md): each run executed by papermill in
its own folder under `out`, on a local Dask cluster (`workers`) or an existing one
(`scheduler`), within one budget; `replay=True` re-runs a finished batch from its own
output notebooks without an API key. Needs the `batch` extra
(`pip install 'fuxi-notebook[batch]'`: Dask distributed and papermill).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._internal.batch.orchestrate import BatchOptions, BatchResult, run_batch
from ._internal.batch.params import BatchInputError

__all__ = ["BatchInputError", "BatchResult", "run"]


def run(notebook: str | Path, *, out: str | Path,
        parameters: Mapping[str, Any] | None = None,
        grid: Mapping[str, Sequence[Any]] | None = None, workers: int | None = None,
        scheduler: str | None = None, max_budget_usd: float | None = None,
        max_budget_usd_total: float | None = None, replay: bool = False,
        kernel: str | None = None, say: Callable[[str], None] = print) -> BatchResult:
    """Run the batch and return how it ended (`exit_code` 0 when every run succeeded).

    `parameters` are given to every run; `grid` maps a name to its values, one run per
    combination of every name's values. Bad input raises `BatchInputError` (one line)
    before anything runs."""
    fixed = dict(parameters or {})
    varying = {name: list(values) for name, values in (grid or {}).items()}
    for name, values in varying.items():
        if isinstance(values, str | bytes) or not values:
            raise BatchInputError(f"grid[{name!r}] must be a non-empty list of values")
    names = list(varying)
    runs = [{**fixed, **dict(zip(names, values, strict=True))}
            for values in itertools.product(*(varying[n] for n in names))]
    return run_batch(BatchOptions(
        notebook=Path(notebook).expanduser(), out=Path(out).expanduser(), grid=runs,
        workers=workers, scheduler=scheduler, max_budget_usd=max_budget_usd,
        max_budget_usd_total=max_budget_usd_total, replay=replay, kernel=kernel, say=say))


