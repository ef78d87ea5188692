"""The wheel carries the prebuilt frontend extension, and installing it needs no node.

The wheel build runs npm (through hatch-jupyter-builder) only when labextension/ is newer
than the extension built into fuxi_notebook/labextension/, so after `pip install -e .`
(which builds it) this test builds the wheel in seconds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "fuxi-notebook"
SHARE = f"share/jupyter/labextensions/{NAME}"
# The extension is our code plus the module federation runtime; nothing of JupyterLab's
# (those packages are shared with the page, never bundled). Far below this bound.
MAX_EXTENSION_BYTES = 64 * 1024

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _without_node(path: str) -> dict[str, str]:
    """An environment whose PATH is only `path` (checked to hold no node and no npm)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NODE_PATH")}
    env["PATH"] = path
    for tool in ("node", "nodejs", "npm", "npx", "yarn", "jlpm"):
        assert shutil.which(tool, path=path) is None, f"{tool} is on {path}"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npm") is None and not (ROOT / "fuxi_notebook/labextension").is_dir():
        pytest.fail("building the wheel here needs npm (node): the extension is not built yet")
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
         "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=840)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = out.glob("fuxi_notebook-*.whl")
    return found


def test_the_wheel_carries_the_built_extension(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        data = next(n.split("/data/")[0] for n in names if ".data/data/" in n)
        shared = {n.removeprefix(f"{data}/data/{SHARE}/") for n in names
                  if n.startswith(f"{data}/data/{SHARE}/")}
        assert {"package.json", "install.json"} <= shared
        package = json.loads(archive.read(f"{data}/data/{SHARE}/package.json"))
        install = json.loads(archive.read(f"{data}/data/{SHARE}/install.json"))
        size = sum(archive.getinfo(f"{data}/data/{SHARE}/{n}").file_size for n in shared
                   if n.startswith("static/"))
    entries = [n for n in shared if re.fullmatch(r"static/remoteEntry\.[0-9a-f]+\.js", n)]
    assert len(entries) == 1, shared
    assert package["name"] == NAME
    assert package["jupyterlab"]["_build"]["load"] == entries[0]  # the page loads this file
    assert package["jupyterlab"]["_build"]["style"] == "./style" and "static/style.js" in shared
    assert install == {"packageManager": "python", "packageName": NAME,
                       "uninstallInstructions": install["uninstallInstructions"]}
    assert size < MAX_EXTENSION_BYTES, f"the built extension grew to {size} bytes"
    # built output is shared data only: not also package data, and no sources or npm state
    assert not [n for n in names if n.startswith("fuxi_notebook/labextension")]
    assert not [n for n in names if "node_modules" in n or n.endswith((".ts", ".map"))]


def test_installing_the_wheel_needs_no_node(wheel: Path, tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    env = _without_node(str(venv / "bin"))
    # the venv has no pip of its own: the test environment's pip installs into it
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, env=env, timeout=300)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    target = venv / SHARE
    assert (target / "package.json").is_file() and (target / "install.json").is_file()
    load = json.loads((target / "package.json").read_text())["jupyterlab"]["_build"]["load"]
    assert (target / load).is_file()

    # JupyterLab (of the test environment, no node either) finds it there, enabled and OK
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter"), "labextension", "list"],
        capture_output=True, text=True, timeout=120,
        env={**env, "JUPYTER_PATH": str(venv / "share" / "jupyter"),
             "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
             "JUPYTER_DATA_DIR": str(tmp_path / "data")})
    assert listed.returncode == 0, listed.stderr
    output = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    # the lines under the fresh venv's folder, up to the next folder the list shows
    lines = output.splitlines()
    start = lines.index(str(venv / "share" / "jupyter" / "labextensions"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("/")),
               len(lines))
    ours = [line for line in lines[start + 1:end] if line.strip().startswith(f"{NAME} ")]
    assert len(ours) == 1 and re.search(r"enabled\s+OK", ours[0]), output
