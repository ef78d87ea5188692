"""What a kernel imports for `%%fuxi` (issue 36): a replay never imports the API client;
the background preload imports what the first cell will need (the client's own modules,
not the SDK's type index, when it will call the model) and stops once a cell starts.
Behaviour, in real kernels; no timing is asserted here (benchmarks/bench_first_cell.py and
bench_replay.py measure it)."""

from __future__ import annotations

import os
import threading

import nbformat
import pytest

from fuxi_notebook.testing import Turn, text
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_kernel

#: waits for the whole preload, then prints which of the client's modules are loaded
#: and whether the `anthropic` package's own `__init__` (the whole SDK) ran
PROBE = """\
(lambda magics: (magics._preload.join() if magics._preload is not None else None, print(
    sorted(name for name in ("anthropic", "httpx2", "trio",
                             "fuxi_notebook._internal.models.anthropic")
           if name in __import__("sys").modules),
    "AsyncAnthropic" in vars(__import__("sys").modules.get("anthropic", __import__("sys")))
)))(get_ipython().magics_manager.registry["FuxiMagics"])
"""


def test_a_replayed_notebook_never_imports_the_api_client(copy_dir):
    path = copy_dir / "quickstart.ipynb"
    notebook = nbformat.read(path, as_version=4)
    env = {"FUXI_NOTEBOOK": str(path), "MPLBACKEND": "Agg", "FUXI_BLOCK_REAL_API": "1",
           "FUXI_REPLAY": "strict", "ANTHROPIC_API_KEY": "", "FUXI_PRELOAD": "1"}
    with NotebookFrontend(cwd=str(copy_dir), env=env, cell_ids=False) as frontend:
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert frontend.execute(cell) == "ok", cell.outputs
        probe = nbformat.v4.new_code_cell(PROBE)
        frontend.execute(probe, counted=False)
    said = "".join(o.get("text", "") for o in probe.outputs)
    assert said.strip() == "[] False", said  # nor httpx2, nor our model module


def test_the_preload_loads_the_client_without_the_sdks_type_index(api, tmp_path):
    api.reset([Turn([text("ok")])])
    kernel = loaded_kernel(api, tmp_path, FUXI_PRELOAD="1")
    try:
        before = kernel.run(PROBE)
        assert before.stdout.strip() == (
            "['anthropic', 'fuxi_notebook._internal.models.anthropic', 'httpx2'] False"), (
            before.stdout, before.stderr)
        cell = kernel.run("%%fuxi --new\nsay ok")
        assert cell.status == "ok", cell.messages
        assert kernel.run("print(_fuxi.result.subtype)").stdout.strip() == "success"
        after = kernel.run(PROBE).stdout.strip()
        assert after.endswith("False"), after  # the cell's request did not need it either
    finally:
        kernel.close()


def test_a_cell_stops_the_preload_at_the_next_module(monkeypatch):
    from fuxi_notebook._internal.notebook.cell import magic

    ran: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def slow() -> None:
        ran.append("slow")
        inside.set()
        release.wait(10)

    def steps(self: magic.Preload):
        yield slow
        yield lambda: ran.append("after")

    monkeypatch.setattr(magic.Preload, "_steps", steps)
    preload = magic.Preload(clicks=False)
    preload.start()
    assert inside.wait(10)
    finishing = threading.Thread(target=preload.finish)
    finishing.start()  # a cell starts while a module is being imported
    finishing.join(0.2)
    assert finishing.is_alive()  # it waits for that module (the seal comes next) ...
    release.set()
    finishing.join(10)
    assert not finishing.is_alive()
    assert ran == ["slow"]  # ... and nothing after it is imported


@pytest.mark.parametrize(("key", "replay", "expected"), [
    ("", None, "replay"), ("sk-test", None, "live"), ("sk-test", "strict", "replay"),
])
def test_the_preload_follows_how_the_first_cell_will_run(monkeypatch, key, replay, expected):
    from fuxi_notebook._internal.common import switches
    from fuxi_notebook._internal.notebook.cell import magic

    monkeypatch.setitem(os.environ, "ANTHROPIC_API_KEY", key)
    monkeypatch.setitem(switches.VALUES, "FUXI_REPLAY", replay)
    names = [getattr(step, "args", [getattr(step, "__name__", "")])[0]
             for step in magic._model_side()]
    if expected == "replay":
        assert names == list(magic.PRELOAD_REPLAY)
    else:
        assert names == ["fuxi_notebook._internal.models.anthropic", "_client"]
