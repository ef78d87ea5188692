"""A batch of runs of one notebook on Dask (see the package docstring).

The runs go to a Dask cluster: a `LocalCluster` sized to the cores (one thread a worker:
a run is a kernel of its own), or the scheduler at `--scheduler`. The notebook's folder is
packed once and sent to the workers with each run; each run's files come back into
`OUT/<run-id>/`. At most as many runs are in flight as the cluster has threads, so one
budget holds for the whole batch: a run starts only if what finished runs spent (their
records) plus what the running ones may still spend (their caps) leaves room for it, at
least what a model response has cost so far (a run checks its budget before each request,
so its first one is spent whatever its cap); it is given its share (`max_budget_usd`,
else the total over the runs) or what is left (it is then "cut"), as
`FUXI_MAX_BUDGET_USD` for its kernel. A worker that dies mid-run has the run tried once
more on another (`distributed.scheduler.allowed-failures`), then the run is failed with
the reason. An interrupt cancels what runs (the workers go, their runs'
processes and kernels with them) and keeps what finished. The same command again keeps
the runs that succeeded with the same parameters and notebook and runs the others.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .params import BatchInputError, check_names, declared_parameters
from .runs import Run, RunState, make_runs, notebook_digest, read_state, write_state

__all__ = ["REPLAY_FOLDER", "BatchOptions", "BatchResult", "Progress", "run_batch"]

_TINY = 1e-9
#: where `--replay` puts a run's replayed notebook and files, inside the run's folder
REPLAY_FOLDER = "replay"


@dataclass
class BatchOptions:
    """What `run_batch` runs (see `python -m fuxi_notebook batch --help`)."""

    notebook: Path
    out: Path
    grid: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    workers: int | None = None
    scheduler: str | None = None
    max_budget_usd: float | None = None  # each run's share
    max_budget_usd_total: float | None = None  # the whole batch's
    replay: bool = False
    kernel: str | None = None
    say: Callable[[str], None] = print
    #: called as runs start and end (a terminal's progress bar); None: only `say`'s lines
    on_progress: Callable[[Progress], None] | None = None


@dataclass(frozen=True)
class Progress:
    """Where a batch is: its runs done, running and failed, and what it spent so far."""

    done: int
    total: int
    running: int
    failed: int
    spent_usd: float


@dataclass
class BatchResult:
    """How a batch ended: every run's state, the summary written, the exit status."""

    states: list[RunState]
    summary: dict[str, Any]

    @property
    def ok(self) -> bool:
        return all(state.status == "succeeded" for state in self.states)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def _check(options: BatchOptions) -> str:
    """The notebook's digest; bad input is one line (nothing runs)."""
    import importlib.util

    from ..common.reading import read_bounded
    from ..sessions.notebook_file import read_document

    missing = [name for name in ("distributed", "papermill", "yaml")
               if importlib.util.find_spec(name) is None]
    if missing:
        raise BatchInputError(f"a batch needs {', '.join(missing)}: pip install "
                              "'fuxi-notebook[batch]'")
    notebook = options.notebook
    if notebook.suffix != ".ipynb":
        raise BatchInputError(f"{notebook} is not a notebook (.ipynb)")
    for name, value in (("--max-budget-usd", options.max_budget_usd),
                        ("--max-budget-usd-total", options.max_budget_usd_total),
                        ("--workers", options.workers)):
        if value is not None and not value > 0:
            raise BatchInputError(f"{name} must be more than 0 (got {value})")
    data = read_bounded(notebook, limit=100_000_000, where=f"cannot read {notebook}")
    if data is None:
        raise BatchInputError(f"cannot read {notebook}: No such file or directory")
    document = read_document(notebook)
    if not options.replay:
        names = {name for params in options.grid for name in params}
        check_names(names, declared_parameters(document), notebook.name)
    return notebook_digest(data)


def _cluster(options: BatchOptions) -> tuple[Any, Any]:
    """(client, the cluster we started or None)."""
    import importlib

    import dask

    distributed: Any = importlib.import_module("distributed")  # untyped calls: Any
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    # a worker that dies mid-run: its run is tried once more, then failed (KilledWorker)
    dask.config.set({"distributed.scheduler.allowed-failures": 1})
    if options.scheduler:
        return Client(options.scheduler, timeout="30s"), None
    workers = options.workers or max(1, os.cpu_count() or 1)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


class _Batch:
    """One batch as it runs (see the module docstring)."""

    def __init__(self, options: BatchOptions, digest: str) -> None:
        self.options = options
        self.digest = digest
        self.out = options.out
        self.states: dict[str, RunState] = {}
        self.running: dict[Any, tuple[Run, float | None]] = {}
        self.started: dict[str, float] = {}

    # -- the plan -------------------------------------------------------------------------

    def plan(self) -> list[Run]:
        """The runs still to do (`states` holds every run: kept, or pending)."""
        if self.options.replay:
            return self.plan_replay()
        todo = []
        for run in make_runs(self.options.grid):
            fresh = RunState(run.run_id, run.params, self.digest)
            kept = read_state(self.out / run.run_id)
            if kept is not None and kept.status == "succeeded" and kept.same_run(fresh):
                self.states[run.run_id] = kept
                continue
            self.states[run.run_id] = fresh
            todo.append(run)
        return todo

    def plan_replay(self) -> list[Run]:
        """`--replay`: every run of the batch that succeeded, from its output notebook."""
        todo = []
        for folder in sorted(p for p in self.out.iterdir() if p.is_dir()) if self.out.is_dir() \
                else []:
            kept = read_state(folder)
            if kept is None or kept.status != "succeeded" or not kept.notebook:
                continue
            run = Run(kept.run_id, kept.params)
            self.states[run.run_id] = RunState(run.run_id, run.params, kept.notebook_digest,
                                               notebook=kept.notebook)
            todo.append(run)
        if not todo:
            raise BatchInputError(f"{self.out} holds no finished run to replay (run the batch "
                                  "first, with the same --out)")
        return todo

    def folder(self, run: Run) -> Path:
        """Where a run's files go: its folder, or for a replay its `replay` folder."""
        folder = self.out / run.run_id
        return folder / REPLAY_FOLDER if self.options.replay else folder

    def spent(self) -> float:
        return sum(s.cost_usd or 0.0 for s in self.states.values()
                   if s.status in ("succeeded", "failed"))

    def response_cost(self) -> float:
        """What one model response has cost in this batch so far, on average (0: none
        yet): a run given less than that would spend it anyway on its first request."""
        ended = [s for s in self.states.values() if s.turns and s.cost_usd]
        turns = sum(s.turns for s in ended)
        return sum(s.cost_usd or 0.0 for s in ended) / turns if turns else 0.0

    def room(self, share: float | None) -> tuple[float | None, bool] | None:
        """(the cap of the next run, whether it is cut), or None: no room now."""
        total = self.options.max_budget_usd_total
        if total is None:
            return share, False
        reserved = sum(cap or 0.0 for _, cap in self.running.values())
        left = total - self.spent() - reserved
        if left <= _TINY or left < self.response_cost():
            return None  # a run checks its budget before each request, not during one
        if share is None or share > left:
            return left, share is not None
        return share, False

    # -- running --------------------------------------------------------------------------

    def task(self, run: Run, cap: float | None) -> dict[str, Any]:
        env = {"FUXI_MAX_BUDGET_USD": f"{cap:.6f}"} if cap is not None else {}
        unset: tuple[str, ...] = ()
        if self.options.replay:
            env["FUXI_REPLAY"] = "strict"
            unset = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
        return {"run_id": run.run_id, "notebook": self.notebook_name(run),
                "params": {} if self.options.replay else run.params, "env": env,
                "unset": unset, "kernel": self.options.kernel}

    def notebook_name(self, run: Run) -> str:
        state = self.states[run.run_id]
        if self.options.replay and state.notebook:
            return Path(state.notebook).name
        return self.options.notebook.name

    def bundle(self, run: Run | None) -> bytes:
        """The folder a run starts from: the notebook's (one for all runs), or for a
        replay the run's own folder (its output notebook and what it wrote)."""
        from .bundle import pack

        if self.options.replay and run is not None:
            folder = self.out / run.run_id
            return pack(folder, leave_out=(folder / REPLAY_FOLDER,))
        return pack(self.options.notebook.resolve().parent, leave_out=(self.out,))

    def finished(self, run: Run, cap: float | None, outcome: dict[str, Any] | None,
                 error: str | None) -> RunState:
        from .bundle import unpack
        from .summary import read_cells, spent

        state = self.states[run.run_id]
        folder = self.folder(run)
        state.attempts += 1
        state.budget_usd = cap
        state.duration_s = round(time.monotonic() - self.started.get(run.run_id, 0), 3)
        if outcome is None:
            state.status, state.error = "failed", error
        else:
            unpack(outcome["files"], folder)
            state.status = outcome.get("status", "failed")
            state.error = outcome.get("error")
            state.notes = [str(note) for note in outcome.get("notes") or []]
            notebook = folder / self.notebook_name(run)
            if notebook.exists():
                state.notebook = notebook.relative_to(self.out).as_posix()
                try:
                    state.cells = read_cells(notebook)
                except Exception as problem:  # the run stands; what it cost is unknown
                    state.cells, state.error = [], state.error or f"records: {problem}"
                state.turns = sum(cell["turns"] for cell in state.cells)
                # a strict replay without a key calls no model: its cells show what the
                # recorded run cost, which this one did not spend
                state.cost_usd = 0.0 if self.options.replay else spent(state.cells)
        write_state(folder, state)
        return state


def run_batch(options: BatchOptions) -> BatchResult:
    """Run the batch (see the module docstring); bad input raises `BatchInputError`."""
    from .summary import write_summary

    options.out = options.out.resolve()
    digest = _check(options)
    batch = _Batch(options, digest)
    todo = batch.plan()
    share = options.max_budget_usd
    if share is None and options.max_budget_usd_total is not None and todo:
        share = options.max_budget_usd_total / len(todo)
    kept = len(batch.states) - len(todo)
    options.say(f"fuxi batch: {len(batch.states)} runs of {options.notebook.name}"
                + (f", {kept} kept from before" if kept else "") + f" → {options.out}")
    order = todo if options.replay else make_runs(options.grid)
    name = "replay-summary" if options.replay else "summary"
    if todo:
        try:
            _run_all(batch, todo, share)
        except KeyboardInterrupt:  # what finished is kept, and said so
            write_summary(options.out, [batch.states[run.run_id] for run in order],
                          budget=options.max_budget_usd_total, name=name)
            raise
    states = [batch.states[run.run_id] for run in order]
    summary = write_summary(options.out, states, budget=options.max_budget_usd_total,
                            name=name)
    options.say(f"fuxi batch: {summary['succeeded']} succeeded, {summary['failed']} failed, "
                f"{summary['skipped']} not started; spent ${summary['total_cost_usd']:.4f}; "
                f"{options.out / 'summary.md'}")
    return BatchResult(states, summary)


def _run_all(batch: _Batch, todo: list[Run], share: float | None) -> None:
    options = batch.options
    bundle = None if options.replay else batch.bundle(None)
    options.out.mkdir(parents=True, exist_ok=True)
    client, cluster = _cluster(options)
    flight = _Flight(batch, client, share, list(todo))
    try:
        flight.run(bundle)
    except KeyboardInterrupt:
        flight.interrupted()
        raise
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=10)
        if cluster is not None:  # its workers go, and their runs' processes and kernels
            with contextlib.suppress(Exception):
                cluster.close(timeout=20)


class _Flight:
    """The runs in flight on the cluster: at most one a thread, each admitted by the
    budget (`_Batch.room`), each finished as it completes."""

    def __init__(self, batch: _Batch, client: Any, share: float | None,
                 pending: list[Run]) -> None:
        import importlib

        self.batch, self.client, self.share, self.pending = batch, client, share, pending
        self.total = len(pending)
        self.done = 0
        self.slots = max(1, sum(client.nthreads().values()))
        self.futures: Any = importlib.import_module("distributed").as_completed()
        self.shared: Any = None

    def run(self, bundle: bytes | None) -> None:
        batch = self.batch
        if bundle is not None:  # one copy on each worker for every run
            self.shared = self.client.scatter(bundle, broadcast=True)
        self.submit_what_fits()
        self.report()
        while batch.running:
            future = next(self.futures)
            run, cap = batch.running.pop(future)
            outcome, error = None, None
            try:
                outcome = future.result()
            except Exception as problem:
                error = _failure(problem)
            state = batch.finished(run, cap, outcome, error)
            self.done += 1
            batch.options.say(_progress_line(batch, state, self.done, self.total))
            self.submit_what_fits()
            self.report()
            if not batch.running and self.pending:  # no room, and nothing could free it
                self.skip(f"not started: the batch's budget "
                          f"(${batch.options.max_budget_usd_total:.2f}) was spent")

    def submit_what_fits(self) -> None:
        from .worker import execute_run

        batch = self.batch
        while self.pending and len(batch.running) < self.slots:
            room = batch.room(self.share)
            if room is None:
                return
            run = self.pending.pop(0)
            cap, cut = room
            state = batch.states[run.run_id]
            state.cut, state.status = cut, "running"
            batch.started[run.run_id] = time.monotonic()
            own = self.shared if self.shared is not None else self.client.scatter(
                batch.bundle(run))
            future = self.client.submit(_with_bundle, execute_run, batch.task(run, cap), own,
                                        key=f"fuxi-{run.run_id}-{time.time_ns()}", pure=False)
            batch.running[future] = (run, cap)
            self.futures.add(future)

    def report(self) -> None:
        report = self.batch.options.on_progress
        if report is not None:
            states = self.batch.states.values()
            report(Progress(self.done, self.total, len(self.batch.running),
                            sum(s.status == "failed" for s in states), self.batch.spent()))

    def skip(self, why: str) -> None:
        for run in self.pending:
            state = self.batch.states[run.run_id]
            state.status, state.error = "skipped", why
        self.pending.clear()

    def interrupted(self) -> None:
        """Ctrl-C: what runs is cancelled (and failed), what waits is not started."""
        for future, (run, _) in list(self.batch.running.items()):
            future.cancel()
            state = self.batch.states[run.run_id]
            state.status, state.error = "failed", "stopped by an interrupt before it finished"
        self.skip("not started: the batch was interrupted")


def _with_bundle(execute: Callable[[dict[str, Any]], dict[str, Any]], task: dict[str, Any],
                 bundle: bytes) -> dict[str, Any]:
    return execute({**task, "bundle": bundle})


def _failure(problem: BaseException) -> str:
    name = type(problem).__name__
    if name == "KilledWorker":
        return "the worker running it died, and again on a second worker"
    if name == "CancelledError":
        return "cancelled before it finished"
    return f"{name}: {' '.join(str(problem).split())}"[:500]


def _progress_line(batch: _Batch, state: RunState, done: int, todo: int) -> str:
    counts = {key: sum(s.status == key for s in batch.states.values())
              for key in ("succeeded", "failed", "running")}
    cost = "?" if state.cost_usd is None else f"${state.cost_usd:.4f}"
    what = state.status + (f" ({state.error})" if state.error else "")
    return (f"[{done}/{todo}] {state.run_id}: {what} · {state.turns} turns · {cost} · "
            f"{state.duration_s:.1f} s — {counts['succeeded']} succeeded, "
            f"{counts['failed']} failed, {counts['running']} running, "
            f"spent ${batch.spent():.4f}")
