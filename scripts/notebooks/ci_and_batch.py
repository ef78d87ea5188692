"""CI and batch runs: what a `%%fuxi` cell does when nobody can click (nbclient, papermill,
CI), and how recorded notebooks are replayed there. Runs `batch/monthly_report.ipynb`
(recorded headless from its own spec) with nbclient in a code cell."""

from spec import code, md

TITLE = "Headless runs and CI"

LIST_CELLS = """\
from pathlib import Path

import nbformat

batch = Path("batch/monthly_report.ipynb")
for cell in nbformat.read(batch, as_version=4).cells:
    if cell.source.startswith("%%fuxi"):
        print(f"{cell.id}: {cell.source.splitlines()[0]}")"""

RUNNER = '''\
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from nbclient import NotebookClient


class ThisPython(KernelSpecManager):
    """Every kernel runs the Python of this kernel (like nbval's --nbval-current-env)."""

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"],
                          display_name="this Python", language="python")


def run_headless(path, **env):
    """Execute the notebook at `path` with nbclient, in its folder; return it with outputs.

    `env` goes to the new kernel on top of this one's environment; FUXI_NOTEBOOK tells
    it which notebook it runs (nbclient does not say)."""
    path = Path(path).resolve()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, km=KernelManager(kernel_spec_manager=ThisPython()),
                            timeout=300, resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**os.environ, "FUXI_NOTEBOOK": str(path), **env},
                   stderr=subprocess.DEVNULL)  # the kernel's own log lines
    return notebook'''

REPLAY = """\
import textwrap

RECORD = "application/vnd.fuxi.session.v1+json"

ran = run_headless(batch, FUXI_REPLAY="strict")

for cell in ran.cells:
    for output in cell.get("outputs", []):
        if RECORD in output.get("data", {}):
            result = output.data[RECORD]["result"]
            denied = [f"{a['tool_name']} (by {a['source']})"
                      for a in output.data[RECORD]["approvals"] if a["decision"] == "deny"]
            print(f"{cell.id}: replayed {output.metadata['fuxi']['replayed']}, "
                  f"{result['subtype']} in {result['num_turns']} turns, denied: {denied}")
            print("   ", textwrap.shorten(result["result"], 88))


def shown(notebook):
    return [[output.get("data") or output.get("text") for output in cell.get("outputs", [])]
            for cell in notebook.cells]


print("outputs identical to the recorded ones:", shown(ran) == shown(nbformat.read(batch, 4)))
print("the re-executed Write left:", sorted(p.name for p in Path("batch/out").iterdir()))"""

UNASKED = """\
from nbclient.exceptions import CellExecutionError

try:
    run_headless(batch, FUXI_REPLAY="", ANTHROPIC_API_KEY="")  # no key, replay not asked for
except CellExecutionError as error:
    print(f"{error.ename}: {error.evalue}")"""

CELLS = [
    md("""
# Headless runs and CI

A notebook does not always run in JupyterLab. A scheduler runs it with **papermill**, a
pipeline with **nbclient** or `jupyter execute`, CI with **`pytest --nbval`**. None of
these send cell ids, and nobody is there to click, so a `%%fuxi` cell notices it is
**headless** and:

- never waits for a click: what the cell's rules (`--allowed-tools`,
  `--disallowed-tools`) and `--permission-mode` do not allow is **denied**, and the model is
  told why and how the call could be allowed (`--allowed-tools ...`), so it can adapt;
- shows nothing live, only the final outputs: the transcript, the session record, then what
  the tools displayed, in the same order as an interactive run;
- replays a recorded cell only when asked to (`FUXI_REPLAY`), because replaying
  re-executes the recorded tool calls.

`batch/monthly_report.ipynb` is a notebook written for such runs. Its `%%fuxi` cells say
up front what the agent may do:
"""),
    code(LIST_CELLS),
    md("""
It was recorded headless (with nbclient): in the first cell the model tried to save its
report and got *"Permission to use Write was not granted (mode dontAsk); allow it with
%%fuxi --allowed-tools "Write" ..."*, in the second, where writing to
`out/` is allowed, it saved the file. Open it to read the transcripts.

## Running a notebook headless

A small helper: run a notebook with nbclient, in its own folder, in a fresh kernel. Two
details matter:

- **which Python the kernel runs.** nbclient starts the kernel named in the notebook
  (`python3`), and that kernel spec may point at another environment than this one. The
  `ThisPython` spec manager makes it this kernel's Python, which has `fuxi_notebook`
  installed (`pytest --nbval-current-env` does the same). `kernel_name=...` with a kernel
  spec of the right environment works too;
- **which notebook the kernel runs.** JupyterLab tells the kernel; nbclient and papermill
  do not. Set `FUXI_NOTEBOOK` to the notebook's path in the kernel's environment: without
  it a `%%fuxi` cell cannot find its record.
"""),
    code(RUNNER),
    md("""
## Replaying it

Without an API key a batch run can still check the notebook: with `FUXI_REPLAY=strict`
every `%%fuxi` cell replays its record. The model's turns come from the notebook (no API
call), the tools run again for real (the Python code, the denied calls are denied again,
the report is written again), and a tool result that differs from the recorded one fails
the cell, so nbclient raises. `lenient` notes differences in the cell instead of failing;
`off` calls the model (with `ANTHROPIC_API_KEY`).
"""),
    code(REPLAY),
    md("""
Without `FUXI_REPLAY` a headless run does not replay on its own, since that would
re-execute code nobody confirmed. With no API key either, the cell stops and says what to
do:
"""),
    code(UNASKED),
    md("""
## In CI

`fuxi-notebook` ships a pytest plugin (registered when the package is installed). With
nbval, every recorded `%%fuxi` cell is replayed **strictly** and every output is compared
with the saved one, so a notebook whose code, data or tools changed behaviour fails:

```bash
pip install -e . nbval
FUXI_BLOCK_REAL_API=1 pytest --nbval --nbval-current-env notebooks/
```

- `--fuxi-replay=strict` (the default: a divergence fails the cell with its diff),
  `lenient` (the cell notes divergences and goes on; nbval still reports the changed
  output) or `off` (the cells call the model: needs `ANTHROPIC_API_KEY`);
- the plugin sets `FUXI_NOTEBOOK` and `FUXI_REPLAY` for each notebook's kernel;
- `FUXI_BLOCK_REAL_API=1` makes any attempt to reach a real endpoint fail: a CI run must
  not need a key or the network.

**papermill and nbclient** run notebooks the same way as the cell above: set
`FUXI_NOTEBOOK` (the notebook being run, not the output file; absolute, or relative to the
kernel's working folder) and `FUXI_REPLAY` in the environment, e.g.

```bash
FUXI_NOTEBOOK=$PWD/notebooks/batch/monthly_report.ipynb FUXI_REPLAY=strict \\
    papermill notebooks/batch/monthly_report.ipynb /tmp/report.ipynb --cwd notebooks/batch
```

A replay checks that the notebook still does what was recorded. To produce a *new* report
(another `month`, new data), run it live: `FUXI_REPLAY=off` with `ANTHROPIC_API_KEY` set; the
rules in the cells decide what the agent may do.
"""),
]
