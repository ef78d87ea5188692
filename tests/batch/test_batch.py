"""`python -m fuxi_notebook batch` (issue 37) on a local Dask cluster against the fake
Messages API on 127.0.0.1: a parameterised notebook over several inputs, each run
executed by papermill in its own folder, its record kept in metadata; the summary;
resume; bad input. Real processes: the Dask workers, the runs' papermill processes and
their kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook._internal.batch.orchestrate import BatchOptions, run_batch
from fuxi_notebook._internal.batch.params import BatchInputError, make_grid
from fuxi_notebook._internal.sessions.cell_record import cell_record
from fuxi_notebook.testing import FakeMessagesServer, Turn, text

pytestmark = pytest.mark.timeout(300)
REGIONS = ["north", "south", "east", "west", "centre", "islands"]


def _notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell('region = "north"\nlimit = 3', id="params")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters,
                nbformat.v4.new_code_cell("%load_ext fuxi_notebook", id="load"),
                nbformat.v4.new_code_cell("open(f'{region}.txt', 'w').write(region * limit)",
                                          id="write"),
                nbformat.v4.new_code_cell("%%fuxi\nSummarise the region in one line.",
                                          id="ask")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = folder / "report.ipynb"
    nbformat.write(nb, path)
    (folder / "data.csv").write_text("a,b\n1,2\n")
    return path


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch):
    with FakeMessagesServer() as server:
        for name, value in {"ANTHROPIC_BASE_URL": server.url, "FUXI_BLOCK_REAL_API": "1",
                            "ANTHROPIC_API_KEY": "sk-ant-test-batch-key-0001",
                            "FUXI_MODEL": "claude-sonnet-5-5", "FUXI_STALL_TIMEOUT": "30",
                            "FUXI_PRELOAD": "0"}.items():
            monkeypatch.setenv(name, value)
        yield server


def _options(notebook: Path, out: Path, regions: list[str], **kw) -> BatchOptions:
    grid = make_grid([("region", r) for r in regions])
    return BatchOptions(notebook=notebook, out=out, grid=grid, workers=2,
                        say=lambda line: None, **kw)


def test_a_notebook_over_six_inputs_on_two_workers(api, tmp_path):
    (tmp_path / "project").mkdir()
    notebook = _notebook(tmp_path / "project")
    api.add(*[Turn([text(f"A one-line summary, {n}.")]) for n in range(6)])
    result = run_batch(_options(notebook, tmp_path / "runs", REGIONS))
    assert result.exit_code == 0, [(s.run_id, s.error) for s in result.states]
    assert len(api.requests) == 6
    summary = json.loads((tmp_path / "runs" / "summary.json").read_text())
    assert [r["params"]["region"] for r in summary["runs"]] == REGIONS
    assert summary["succeeded"] == 6 and summary["failed"] == 0
    assert summary["total_cost_usd"] > 0
    for entry in summary["runs"]:
        folder = tmp_path / "runs" / entry["run_id"]
        region = entry["params"]["region"]
        assert entry["status"] == "succeeded" and entry["turns"] == 1
        assert entry["cost_usd"] > 0 and entry["duration_s"] > 0
        assert (folder / f"{region}.txt").read_text() == region * 3  # what it wrote
        assert not (folder / "data.csv").exists()  # unchanged inputs do not come back
        out = nbformat.read(tmp_path / "runs" / entry["notebook"], as_version=4)
        injected = [c for c in out.cells if "injected-parameters" in c.metadata.get("tags", [])]
        assert f'region = "{region}"' in injected[0].source
        ask = next(c for c in out.cells if c.source.startswith("%%fuxi"))
        assert cell_record(ask).where == "metadata"  # kept where Clear Outputs leaves it
    table = (tmp_path / "runs" / "summary.md").read_text()
    assert "6 succeeded, 0 failed" in table and "| islands" not in table.split("\n")[0]


def test_the_same_command_again_keeps_what_succeeded(api, tmp_path):
    """Through the public API (`fuxi_notebook.batch.run`)."""
    from fuxi_notebook import batch

    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    first = batch.run(notebook, out=tmp_path / "runs", grid={"region": ["north", "south"]},
                      workers=2, say=lambda _: None)
    assert first.exit_code == 0, [(s.run_id, s.error) for s in first.states]
    api.add(Turn([text("ok")]))
    again = batch.run(notebook, out=tmp_path / "runs", workers=2, say=lambda _: None,
                      grid={"region": ["north", "south", "east"]})
    assert again.exit_code == 0, [(s.run_id, s.error) for s in again.states]
    assert len(api.requests) == 3  # north and south were not run again
    assert [s.attempts for s in again.states] == [1, 1, 1]


def test_a_bad_parameter_name_is_one_line_and_nothing_runs(api, tmp_path):
    notebook = _notebook(tmp_path)
    with pytest.raises(BatchInputError, match=r"has no parameter regoin \(its parameters "
                                               r"cell sets: limit, region\)"):
        run_batch(BatchOptions(notebook=notebook, out=tmp_path / "runs",
                               grid=make_grid([("regoin", "north")]), say=lambda _: None))
    assert not (tmp_path / "runs").exists() and api.requests == []
    command = subprocess.run(
        [sys.executable, "-m", "fuxi_notebook", "batch", str(notebook), "-p", "regoin",
         "north", "--out", str(tmp_path / "runs")], capture_output=True, text=True,
        env=os.environ, timeout=120)
    assert command.returncode == 2 and command.stdout == ""
    assert command.stderr.count("\n") == 1 and "has no parameter regoin" in command.stderr


def test_replay_of_a_finished_batch_needs_no_key_and_sends_nothing(api, tmp_path, monkeypatch):
    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    first = run_batch(_options(notebook, tmp_path / "runs", ["north", "south"]))
    assert first.exit_code == 0, [(s.run_id, s.error) for s in first.states]
    sent = len(api.requests)
    for written in (tmp_path / "runs").glob("*/*.txt"):
        written.unlink()  # the replay's tools write them again
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run_batch(BatchOptions(notebook=notebook, out=tmp_path / "runs", replay=True,
                                      workers=2, say=lambda _: None))
    assert replayed.exit_code == 0, [(s.run_id, s.error) for s in replayed.states]
    assert len(api.requests) == sent  # zero model requests
    summary = json.loads((tmp_path / "runs" / "replay-summary.json").read_text())
    assert summary["succeeded"] == 2 and summary["total_cost_usd"] == 0
    for entry in summary["runs"]:
        region = entry["params"]["region"]
        replay = tmp_path / "runs" / entry["run_id"] / "replay"
        assert (replay / f"{region}.txt").read_text() == region * 3  # tools ran again
        assert (replay / "report.ipynb").exists()


def test_a_replay_that_diverges_fails_that_run(api, tmp_path, monkeypatch):
    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    first = run_batch(_options(notebook, tmp_path / "runs", ["north", "south"]))
    assert first.exit_code == 0, [(s.run_id, s.error) for s in first.states]
    south = next((tmp_path / "runs").glob("south-*"))
    output = nbformat.read(south / "report.ipynb", as_version=4)
    ask = next(c for c in output.cells if c.source.startswith("%%fuxi"))
    ask.source = "%%fuxi\nSomething else entirely."  # the record no longer matches the cell
    nbformat.write(output, south / "report.ipynb")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run_batch(BatchOptions(notebook=notebook, out=tmp_path / "runs", replay=True,
                                      workers=2, say=lambda _: None))
    statuses = {s.params["region"]: s.status for s in replayed.states}
    assert statuses == {"north": "succeeded", "south": "failed"}
    assert replayed.exit_code == 1
    failed = next(s for s in replayed.states if s.status == "failed")
    assert failed.error and "\n" not in failed.error


def test_a_worker_killed_mid_run_has_its_run_retried_on_another(api, tmp_path):
    """The run's kernel kills the Dask worker running it, once (a marker file says it did):
    the run is tried again on another worker and succeeds; nothing of the first attempt is
    left running."""
    notebook = _notebook(tmp_path)
    nb = nbformat.read(notebook, as_version=4)
    marker = tmp_path / "killed-once"
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "import os, pathlib, signal\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if region == 'south' and not marker.exists():\n"
        "    runner = os.getppid()\n"
        "    worker = int(open(f'/proc/{runner}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "    marker.write_text(f'{runner} {worker}')\n"
        "    os.kill(worker, signal.SIGKILL)\n"
        "    import time; time.sleep(60)\n", id="kill"))
    nbformat.write(nb, notebook)
    api.add(*[Turn([text("ok")]) for _ in range(3)])
    result = run_batch(_options(notebook, tmp_path / "runs", ["north", "south", "east"]))
    assert result.exit_code == 0, [(s.run_id, s.error) for s in result.states]
    runner, worker = (int(x) for x in marker.read_text().split())
    for pid in (runner, worker):
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(
            f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_run_whose_worker_dies_twice_fails_with_the_reason(api, tmp_path):
    """South's kernel kills the worker running it on every try: after the second death the
    run is failed with that reason; the other runs finish, and the batch ends (exit 1)."""
    notebook = _notebook(tmp_path)
    nb = nbformat.read(notebook, as_version=4)
    kills = tmp_path / "kills"
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "import os, pathlib, signal\n"
        "if region == 'south':\n"
        "    runner = os.getppid()\n"
        "    worker = int(open(f'/proc/{runner}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        f"    with open({str(kills)!r}, 'a') as kills:\n"
        "        kills.write(f'{worker}\\n')\n"
        "    os.kill(worker, signal.SIGKILL)\n"
        "    import time; time.sleep(60)\n", id="kill"))
    nbformat.write(nb, notebook)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    result = run_batch(_options(notebook, tmp_path / "runs", ["north", "south", "east"]))
    assert [s.status for s in result.states] == ["succeeded", "failed", "succeeded"]
    assert result.states[1].error == "the worker running it died, and again on a second worker"
    assert result.exit_code == 1 and len(api.requests) == 2
    workers = kills.read_text().split()
    assert len(workers) == 2 and workers[0] != workers[1]  # tried on another worker
    summary = (tmp_path / "runs" / "summary.md").read_text()
    assert "died, and again on a second worker" in summary


def test_a_cell_error_fails_its_run_not_the_batch(api, tmp_path):
    notebook = _notebook(tmp_path)
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "if region == 'south':\n    raise ValueError('no data for\\nsouth')", id="check"))
    nbformat.write(nb, notebook)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    result = run_batch(_options(notebook, tmp_path / "runs", ["north", "south", "east"]))
    assert [s.status for s in result.states] == ["succeeded", "failed", "succeeded"]
    assert result.exit_code == 1 and len(api.requests) == 2  # south stopped before asking
    # [4] in the output notebook: papermill added the injected parameters cell
    assert result.states[1].error == "cell 4: ValueError: no data for south"
    assert result.states[1].attempts == 1  # a cell's error is the run's answer: no retry
    summary = json.loads((tmp_path / "runs" / "summary.json").read_text())
    assert (summary["succeeded"], summary["failed"]) == (2, 1)
    assert "| failed | 0 | 0.0000 |" in (tmp_path / "runs" / "summary.md").read_text()


#: a kernel that fails to start while `fails` says so (a port taken by another kernel
#: starting at the same moment, seen once under CI load, fails the same way); each start
#: is a line in `starts`
FLAKY_KERNEL = """
import os, sys
folder = sys.argv[2]
with open(os.path.join(folder, "starts"), "a") as starts:
    starts.write("start\\n")
try:
    os.remove(os.path.join(folder, "fails-once"))  # only one start takes it
    sys.exit(1)
except FileNotFoundError:
    pass
if os.path.exists(os.path.join(folder, "fails-always")):
    sys.exit(1)
os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", sys.argv[1]])
"""


def _flaky_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: str) -> Path:
    folder = tmp_path / "kernel-state"
    folder.mkdir()
    (folder / fails).write_text("")
    (folder / "flaky.py").write_text(FLAKY_KERNEL)
    spec = tmp_path / "jupyter" / "kernels" / "flaky"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, str(folder / "flaky.py"), "{connection_file}", str(folder)],
        "display_name": "flaky", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return folder


def test_a_kernel_that_did_not_start_is_started_once_more(api, tmp_path, monkeypatch):
    notebook = _notebook(tmp_path)
    state = _flaky_kernel(tmp_path, monkeypatch, "fails-once")
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    result = run_batch(_options(notebook, tmp_path / "runs", ["north", "south"],
                                kernel="flaky"))
    assert result.exit_code == 0, [(s.run_id, s.error) for s in result.states]
    assert len(api.requests) == 2
    assert (state / "starts").read_text().count("start") == 3
    noted = [s for s in result.states if s.notes]
    assert len(noted) == 1 and noted[0].notes == [
        "the kernel did not start (RuntimeError: Kernel died before replying to "
        "kernel_info); started again"]
    assert "note: the kernel did not start" in (tmp_path / "runs" / "summary.md").read_text()


def test_a_kernel_that_never_starts_fails_its_run_in_one_line(api, tmp_path, monkeypatch):
    notebook = _notebook(tmp_path)
    state = _flaky_kernel(tmp_path, monkeypatch, "fails-always")
    result = run_batch(_options(notebook, tmp_path / "runs", ["north"], kernel="flaky"))
    assert result.exit_code == 1 and api.requests == []
    assert result.states[0].error == ("RuntimeError: Kernel died before replying to "
                                      "kernel_info")
    assert (state / "starts").read_text().count("start") == 2  # once more, not forever


def test_one_budget_for_the_batch_stops_it_after_the_first_runs(api, tmp_path):
    """Each run's one response costs about $0.0114 (the fake's usage, sonnet prices): with
    $0.02 a run and $0.03 in all, on one worker, the first run gets its share, the second
    what is left (cut), and no run starts once less than a response's cost is left."""
    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(4)])
    result = run_batch(BatchOptions(
        notebook=notebook, out=tmp_path / "runs", workers=1, say=lambda _: None,
        grid=make_grid([("region", r) for r in REGIONS[:4]]), max_budget_usd=0.02,
        max_budget_usd_total=0.03))
    statuses = [(s.status, s.cut) for s in result.states]
    assert statuses == [("succeeded", False), ("succeeded", True), ("skipped", False),
                        ("skipped", False)], [(s.status, s.cost_usd, s.error)
                                              for s in result.states]
    assert len(api.requests) == 2 and result.exit_code == 1
    summary = json.loads((tmp_path / "runs" / "summary.json").read_text())
    assert summary["total_cost_usd"] <= 0.03 and summary["skipped"] == 2
    assert [r["budget_usd"] for r in summary["runs"][:2]] == [0.02, pytest.approx(
        0.03 - summary["runs"][0]["cost_usd"])]
    assert "budget ($0.03) was spent" in summary["runs"][2]["error"]
    assert "(cut: budget)" in (tmp_path / "runs" / "summary.md").read_text()


def _gone(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_ctrl_c_keeps_finished_runs_and_leaves_no_kernel_running(api, tmp_path):
    """Ctrl-C in a terminal: one line (no worker's traceback), exit 130, the finished run
    kept, the running one failed, its kernel gone."""
    import signal
    import time

    notebook = _notebook(tmp_path)
    nb = nbformat.read(notebook, as_version=4)
    pidfile, release = tmp_path / "south-kernel.pid", tmp_path / "release"
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "import os, pathlib, time\n"
        f"if region == 'south' and not pathlib.Path({str(release)!r}).exists():\n"
        f"    pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid()))\n"
        "    deadline = time.monotonic() + 120\n"
        "    while time.monotonic() < deadline:\n"
        "        time.sleep(0.1)\n", id="wait"))
    nbformat.write(nb, notebook)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    command = subprocess.Popen(  # a group of its own, as a terminal's foreground job
        [sys.executable, "-m", "fuxi_notebook", "batch", str(notebook), "-p", "region",
         "north", "-p", "region", "south", "--out", str(tmp_path / "runs"), "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ,
        start_new_session=True)
    deadline = time.monotonic() + 180
    while not pidfile.exists() and time.monotonic() < deadline and command.poll() is None:
        time.sleep(0.1)  # evidence: south's kernel is running (north finished before it)
    assert pidfile.exists(), command.communicate(timeout=30)
    kernel = int(pidfile.read_text())
    os.killpg(command.pid, signal.SIGINT)  # Ctrl-C: the whole group, workers included
    _, err = command.communicate(timeout=120)
    assert command.returncode == 130, err
    assert "interrupted; finished runs are kept" in err and "Traceback" not in err
    while not _gone(kernel) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(kernel)  # no orphaned kernel
    summary = json.loads((tmp_path / "runs" / "summary.json").read_text())
    assert [(r["params"]["region"], r["status"]) for r in summary["runs"]] == [
        ("north", "succeeded"), ("south", "failed")]
    assert "interrupt" in summary["runs"][1]["error"]
    # the same command again: north is kept (no request for it), south runs
    release.write_text("")
    sent = len(api.requests)
    again = run_batch(_options(notebook, tmp_path / "runs", ["north", "south"]))
    assert again.exit_code == 0 and len(api.requests) == sent + 1


def test_a_terminal_shows_a_progress_bar_and_lines_above_it(api, tmp_path):
    import pexpect

    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    child = pexpect.spawn(sys.executable, ["-m", "fuxi_notebook", "batch", str(notebook),
                                           "-p", "region", "north", "-p", "region", "south",
                                           "--out", str(tmp_path / "runs"), "--workers", "1"],
                          env=dict(os.environ), encoding="utf-8", timeout=240,
                          dimensions=(24, 160))
    child.expect(r"\[1/2\] north-\w+: succeeded")
    child.expect(r"2/2 .*0 running, 0 failed, \$0\.\d+ spent")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "")


def test_a_batch_on_an_existing_cluster_by_its_scheduler_address(api, tmp_path):
    import logging

    from distributed import LocalCluster

    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        result = run_batch(BatchOptions(notebook=notebook, out=tmp_path / "runs",
                                        grid=make_grid([("region", "north"),
                                                        ("region", "south")]),
                                        scheduler=cluster.scheduler_address,
                                        say=lambda _: None))
        assert result.exit_code == 0 and len(api.requests) == 2
        assert len(cluster.workers) == 1  # the cluster is the user's: it is left running


def test_importing_the_batch_api_loads_neither_dask_nor_papermill():
    code = ("import sys, fuxi_notebook, fuxi_notebook.batch\n"
            "print(sorted(m for m in ('dask', 'distributed', 'papermill') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_a_replay_whose_kernel_did_not_start_is_started_once_more(api, tmp_path, monkeypatch):
    """Seen once in CI: a replay's kernel died before kernel_info and the run failed. The
    replay's input is the finished run's notebook, whose cells carry their execution
    counts, so the output papermill had written said cells had run: no second start."""
    notebook = _notebook(tmp_path)
    api.add(*[Turn([text("ok")]) for _ in range(2)])
    state = _flaky_kernel(tmp_path, monkeypatch, "not-yet")
    first = run_batch(_options(notebook, tmp_path / "runs", ["north", "south"], kernel="flaky"))
    assert first.exit_code == 0, [(s.run_id, s.error) for s in first.states]
    (state / "fails-once").write_text("")  # the replay's first kernel start fails
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = run_batch(BatchOptions(notebook=notebook, out=tmp_path / "runs", replay=True,
                                      workers=2, kernel="flaky", say=lambda _: None))
    assert replayed.exit_code == 0, [(s.run_id, s.error) for s in replayed.states]
    assert [s.notes for s in replayed.states if s.notes] == [[
        "the kernel did not start (RuntimeError: Kernel died before replying to "
        "kernel_info); started again"]]
