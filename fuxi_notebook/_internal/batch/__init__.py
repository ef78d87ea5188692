"""Batches of agent notebooks fanned out on Dask, each run executed by papermill.

`params.py` (what runs: papermill's parameters, a grid of them, checked against the
notebook's `parameters` cell), `runs.py` (a run's id, folder and its state on disk, for
resume), `bundle.py` (the notebook's folder packed to travel to a worker, and what a run
wrote packed back), `runner.py` (one run in a process of its own: papermill, then the
records kept in metadata), `worker.py` (the task a Dask worker runs), `summary.py`
(`summary.json` and `summary.md`), `orchestrate.py` (the batch: the cluster, one budget,
progress, resume, interrupts). Dask and papermill are imported only here, only when a
batch runs: `import fuxi_notebook` and `%load_ext` stay as light as without them.
"""
