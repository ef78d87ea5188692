"""Record the example notebooks in `notebooks/` from their specs in `scripts/notebooks/`.

    .venv/bin/python scripts/record_notebooks.py [NAME ...] [--check]

Each notebook is built from its spec (markdown, code and `%%fuxi` cells with fixed cell
ids), then run cell by cell in a real kernel by a minimal JupyterLab-like frontend
(`fuxi_notebook.testing.frontend`): cells carry their ids, approval cards are answered by
clicking the buttons the spec names, display updates are applied, a `restart()` marker
saves the notebook and restarts the kernel. The outputs are written back with nbformat.

A spec with `HEADLESS = True` is run the way a scheduler or CI runs a notebook instead:
with `nbclient`, which sends no cell ids, so nothing can be clicked and the permission
policy decides every call (no `clicks`, no `restart()`). `FOLDER = "batch"` puts a
notebook into that subfolder of `notebooks/` (its kernel runs there).

Without ANTHROPIC_API_KEY the model turns come from the spec, served over real HTTP by
`FakeMessagesServer` (the real `anthropic` client talks to it). Each record is also kept in
its cell's metadata, as fuxi's frontend extension keeps it; recording twice gives
byte-identical notebooks (timings are left out of their metadata and last lines). With
ANTHROPIC_API_KEY set the real API answers instead, and the spec's turns are not used.

`--provider bedrock|vertex|foundry` serves the turns from that cloud provider's fake
instead, the kernel reaching it with only the variables `docs/getting-started.md` sets.

`--check` records again in place and compares with the committed notebooks (which it
puts back afterwards). Records hold the folder they ran in, so a check must run in the
same folder; `--out DIR` records into another folder (with a copy of notebooks/' files).
"""

from __future__ import annotations

import argparse
import filecmp
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECS = Path(__file__).resolve().parent / "notebooks"
NOTEBOOKS = ROOT / "notebooks"
# monthly_report (notebooks/batch/) comes before ci_and_batch, which replays it
ORDER = ("quickstart", "code_work", "sessions", "monthly_report", "ci_and_batch")
_VOLATILE = ("duration_ms", "duration_api_ms", "finished_at")
_TAGS_RAISES = ["raises-exception"]


def _spec(name: str) -> Any:
    sys.path[:0] = [str(SPECS), str(ROOT)]
    try:
        return importlib.import_module(name)
    finally:
        del sys.path[:2]


def build(name: str, spec: Any) -> Any:
    """The notebook of `spec`, without outputs, with deterministic cell ids."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                  "language": "python"},
                   "language_info": {"name": "python"}}
    prefix = "".join(word[0] for word in name.split("_"))
    for index, cell in enumerate(c for c in spec.CELLS if c.kind != "restart"):
        cell_id = f"{prefix}-{index:02d}"
        if cell.kind == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(cell.source, id=cell_id))
        else:
            made = nbformat.v4.new_code_cell(cell.source, id=cell_id)
            if cell.raises:
                made.metadata["tags"] = list(_TAGS_RAISES)
            nb.cells.append(made)
    return nb


def notebook_path(name: str, out_dir: Path, spec: Any = None) -> Path:
    """Where the notebook of `name` lives under `out_dir` (in the spec's FOLDER, if any)."""
    spec = spec if spec is not None else _spec(name)
    return out_dir / getattr(spec, "FOLDER", "") / f"{name}.ipynb"


#: a Bedrock id for the spec's model (Bedrock serves no first-party name)
BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5-v1:0"


def _fake_api(steps: list[Any], provider: str | None, keys: Path) -> tuple[Any, dict[str, str]]:
    """The fake that serves `steps`, and the only variables the kernel gets to reach it:
    the first-party API's, or a provider's exactly as `docs/getting-started.md` sets
    them (no ANTHROPIC_API_KEY then)."""
    from fuxi_notebook.testing import (
        FakeBedrockServer,
        FakeFoundryServer,
        FakeMessagesServer,
        FakeVertexServer,
    )

    if provider is None:
        server = FakeMessagesServer(steps).start()
        return server, {"ANTHROPIC_BASE_URL": server.url,
                        "ANTHROPIC_API_KEY": "fake-recording-key"}
    none = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "ANTHROPIC_AUTH_TOKEN": "",
            "AWS_CONFIG_FILE": str(keys / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(keys / "no-aws-credentials"),
            f"FUXI_USE_{provider.upper()}": "1"}
    if provider == "bedrock":
        bedrock = FakeBedrockServer(steps).start()
        return bedrock, {**none, **bedrock.client_env(), "FUXI_MODEL": BEDROCK_MODEL}
    if provider == "vertex":  # signed in with a service account's key file
        vertex = FakeVertexServer(steps).start()
        return vertex, {**none, **vertex.credentials_env(keys)}
    foundry = FakeFoundryServer(steps).start()
    return foundry, {**none, **foundry.client_env()}


def record(name: str, out_dir: Path, *, live: bool, provider: str | None = None) -> Path:
    """Run the notebook `name` and write it (with outputs) into `out_dir`; its model
    turns served by the first-party fake, or by `provider`'s fake (bedrock, vertex,
    foundry) with only that provider's variables set."""
    import nbformat

    from fuxi_notebook.testing.frontend import NotebookFrontend

    spec = _spec(name)
    nb = build(name, spec)
    path = notebook_path(name, out_dir, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    steps = [turn for cell in spec.CELLS for turn in cell.turns]
    env = {"FUXI_NOTEBOOK": str(path), "FUXI_REPLAY": "off", "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PYTHONHASHSEED": "0", "FUXI_BLOCK_REAL_API": "0" if live else "1"}
    keys = Path(tempfile.mkdtemp(prefix="fuxi-record-"))
    server = None
    if not live:
        server, reach = _fake_api(steps, provider, keys)
        env |= reach
    try:
        if getattr(spec, "HEADLESS", False):
            _run_headless(spec, nb, path, env)
        else:
            frontend = NotebookFrontend(cwd=str(path.parent), env=env).start()
            frontend.open(nb, str(path))  # as fuxi's JupyterLab extension sees it
            try:
                _run(spec, nb, path, frontend)
            finally:
                frontend.close()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(keys, ignore_errors=True)
    if server is not None and (server.remaining or server.errors):
        raise SystemExit(f"{name}: {server.remaining} scripted turns unused, "
                         f"errors: {server.errors}")
    if not live:
        _drop_timings(nb)
    _keep_records(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def _run(spec: Any, nb: Any, path: Path, frontend: Any) -> None:
    import nbformat

    cells = iter(nb.cells)
    for item in spec.CELLS:
        if item.kind == "restart":
            nbformat.write(nb, path)  # what the restarted kernel continues from
            frontend.restart()
            continue
        cell = next(cells)
        if item.kind != "code":
            continue
        clicks = list(item.clicks)

        def decide(card: Any, clicks: list[Any] = clicks) -> tuple[str, str | None]:
            choice = clicks.pop(0) if clicks else "Allow"
            label, reason = choice if isinstance(choice, tuple) else (choice, None)
            return label, reason

        status = frontend.execute(cell, decide=decide)
        if (status == "error") != item.raises:
            errors = [o for o in cell.outputs if o.output_type == "error"]
            raise SystemExit(f"cell {cell.id} ended with {status}: {errors or cell.outputs}")
        if clicks:
            raise SystemExit(f"cell {cell.id}: approvals not asked: {clicks}")


def _run_headless(spec: Any, nb: Any, path: Path, env: dict[str, str]) -> None:
    """Execute `nb` with nbclient, as a scheduler or CI would: no cell ids, no clicks."""
    from nbclient import NotebookClient

    if any(item.kind == "restart" or item.clicks for item in spec.CELLS):
        raise SystemExit(f"{path.name}: a headless notebook has no restart() and no clicks")
    metadata = dict(nb.metadata)  # nbclient adds the kernel's language_info (its version)
    statuses: dict[str, str] = {}

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        statuses[cell.id] = execute_reply["content"]["status"]

    client = NotebookClient(nb, km=_this_python_kernel(), timeout=120, allow_errors=True,
                            record_timing=False, on_cell_executed=executed,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**os.environ, **env})
    nb.metadata = metadata
    code_items = [item for item in spec.CELLS if item.kind == "code"]
    for item, cell in zip(code_items, (c for c in nb.cells if c.cell_type == "code"),
                          strict=True):
        if (statuses.get(cell.id) == "error") != item.raises:
            raise SystemExit(f"cell {cell.id} ended with {statuses.get(cell.id)}: "
                             f"{cell.outputs}")


def _this_python_kernel() -> Any:
    """A kernel manager whose kernel runs this Python (like nbval --nbval-current-env)."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f",
                                    "{connection_file}"],
                              display_name="Python 3", language="python",
                              interrupt_mode="signal")

    return KernelManager(kernel_spec_manager=ThisPython())


def _drop_timings(nb: Any) -> None:
    """Timings left out of the metadata, and of the last line that shows them."""
    from fuxi_notebook._internal.notebook.cell.outputs import record_outputs
    from fuxi_notebook._internal.sessions.record import RECORD_MIME, load_record

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            fuxi = output.get("metadata", {}).get("fuxi")
            if isinstance(fuxi, dict):
                for key in _VOLATILE:
                    fuxi.pop(key, None)
                data = output.get("data") or {}
                if RECORD_MIME in data:
                    last = record_outputs(load_record(data), dict(fuxi))[-1][0]
                    data["text/markdown"], data["text/plain"] = (last["text/markdown"],
                                                                 last["text/plain"])


def _keep_records(nb: Any) -> None:
    """Each record also in its cell's metadata, as fuxi's extension keeps it (also for
    the headless notebooks, as `python -m fuxi_notebook sessions keep` would)."""
    from fuxi_notebook._internal.sessions.cell_record import keep_in_metadata

    for cell in nb.cells:
        if cell.cell_type == "code":
            keep_in_metadata(cell, from_outputs=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"default: {' '.join(ORDER)}")
    parser.add_argument("--check", action="store_true",
                        help="record again in place and compare with the committed notebooks")
    parser.add_argument("--out", type=Path, help="record into this folder instead")
    parser.add_argument("--provider", choices=("bedrock", "vertex", "foundry"),
                        help="serve the spec's turns from this provider's fake, the kernel "
                             "configured by its variables only")
    args = parser.parse_args(argv)
    live = (bool(os.environ.get("ANTHROPIC_API_KEY")) and not args.check
            and args.provider is None)
    names = args.names or list(ORDER)
    if args.out is not None:
        shutil.copytree(NOTEBOOKS, args.out, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.ipynb", "work"))
    target = args.out or NOTEBOOKS
    if not args.check:
        for name in names:
            made = record(name, target, live=live, provider=args.provider)
            print(f"recorded {made}{' (live API)' if live else ''}"
                  f"{f' (on the {args.provider} fake)' if args.provider else ''}")
        return 0
    different = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            committed = notebook_path(name, target)
            kept = Path(scratch) / committed.name
            shutil.copy2(committed, kept)
            try:
                if not filecmp.cmp(record(name, target, live=False), kept, shallow=False):
                    different.append(name)
            finally:
                shutil.copy2(kept, committed)
    if different:
        print(f"differ from the committed notebooks: {', '.join(different)}")
        return 1
    print(f"identical: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
