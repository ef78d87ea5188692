"""The Binder setup in binder/: install what mybinder.org would, then replay the notebooks.

repo2docker (what mybinder.org builds with) starts from its base environment (JupyterLab 4,
Notebook 7, ipywidgets 8, in the Python that binder/runtime.txt names), then runs
`pip install -r binder/requirements.txt` with the repository root as working directory,
then `binder/postBuild` (if there is one) from the repository root. This test does the same
in a fresh virtual environment (in the Python running the tests, not necessarily the one
runtime.txt names), then runs the copied notebooks with nbval there: no API key, so every
recorded `%%fuxi` cell replays, and no model is ever called.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"

# A stand-in for repo2docker's base environment (repo2docker/buildpacks/conda/environment.yml
# there), which binder/requirements.txt is installed on top of.
BASE_ENVIRONMENT = ("jupyterlab>=4,<5", "notebook>=7,<8", "jupyter_server>=2,<3",
                    "ipywidgets>=8,<9")
# Only this test needs them, to run the notebooks; Binder's users do not.
TEST_TOOLS = ("pytest>=9,<10", "nbval>=0.11,<1")

_DROPPED_ENV = ("ANTHROPIC_", "FUXI_", "PYTEST_", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH",
                "PYTHONHOME", "PYTHONSTARTUP", "PIP_REQUIRE_VIRTUALENV", "COV_CORE_")


def _environment(venv: Path, tmp_path: Path) -> dict[str, str]:
    """The machine's environment with the venv first on PATH, no key, no outside settings."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(_DROPPED_ENV)}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", os.defpath)])
    env["VIRTUAL_ENV"] = str(venv)
    env["FUXI_BLOCK_REAL_API"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["IPYTHONDIR"] = str(tmp_path / "ipython")  # no profile or startup files of the user's
    return env


def _run(args: list[str | Path], *, cwd: Path, env: dict[str, str],
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(arg) for arg in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, (
        f"{' '.join(done.args)} exited {done.returncode}\n"
        f"--- stdout (end)\n{done.stdout[-6000:]}\n--- stderr (end)\n{done.stderr[-6000:]}")
    return done


def _base_python() -> str:
    """The interpreter the test suite's own venv was made from."""
    base = getattr(sys, "_base_executable", None) or shutil.which("python3")
    assert base, "no base Python interpreter found"
    return base


def _copy_notebooks(destination: Path) -> Path:
    """notebooks/ as a clone has it: without what runs leave behind (work/, the folders
    .gitignore names under notebooks/) and editor leftovers."""
    source = ROOT / "notebooks"
    gitignore = (ROOT / ".gitignore").read_text().splitlines()
    left_behind = {"notebooks/work"} | {line.strip().strip("/") for line in gitignore
                                        if line.strip().startswith("notebooks/")}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [name for name in names
                if name in (".ipynb_checkpoints", "__pycache__")
                or (Path(folder) / name).relative_to(ROOT).as_posix() in left_behind]

    shutil.copytree(source, destination, ignore=ignore)
    return destination


def _summary_counts(output: str) -> dict[str, int]:
    """{'passed': N, 'failed': N, ...} from pytest's closing summary line."""
    lines = [line for line in output.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    assert lines, f"no pytest summary line in:\n{output[-4000:]}"
    return {word: int(count)
            for count, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|"
                                          r"xpassed|warnings?|deselected)", lines[-1])}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_binder_environment_installs_the_package_and_replays_the_notebooks(tmp_path):
    assert (BINDER / "requirements.txt").is_file()
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.(1[1-9]|[2-9]\d)", runtime), runtime  # package: >= 3.11

    venv = tmp_path / "venv"
    _ok(subprocess.run([_base_python(), "-m", "venv", str(venv)], capture_output=True,
                       text=True, timeout=300, check=False))
    env = _environment(venv, tmp_path)
    python = venv / "bin" / "python"
    pip = [python, "-m", "pip", "install", "-q"]

    # What Binder installs: its base environment, binder/requirements.txt from the
    # repository root (so `.` in it is this checkout), then binder/postBuild.
    _ok(_run([*pip, "-U", "pip"], cwd=tmp_path, env=env))
    _ok(_run([*pip, *BASE_ENVIRONMENT], cwd=tmp_path, env=env))
    _ok(_run([*pip, "-r", "binder/requirements.txt"], cwd=ROOT, env=env))
    if (BINDER / "postBuild").exists():
        _ok(_run(["bash", "binder/postBuild"], cwd=ROOT, env=env))
    _ok(_run([*pip, *TEST_TOOLS], cwd=tmp_path, env=env))
    _ok(_run([python, "-m", "pip", "check"], cwd=tmp_path, env=env))

    # `import fuxi_notebook` in that environment is this checkout (installed from it).
    probe = _ok(_run([python, "-c", (
        "import json, fuxi_notebook\n"
        "from importlib import metadata\n"
        "dist = metadata.distribution('fuxi-notebook')\n"
        "print(json.dumps({'file': fuxi_notebook.__file__, 'version': dist.version,\n"
        "                  'direct_url': dist.read_text('direct_url.json')}))")],
        cwd=tmp_path, env=env))
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    print("fuxi_notebook.__file__ in the Binder environment:", found["file"])
    module = Path(found["file"]).resolve()
    assert module.is_relative_to(venv.resolve()) or module.is_relative_to(ROOT / "fuxi_notebook")
    assert module.name == "__init__.py" and module.parent.name == "fuxi_notebook"
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version and found["version"] == version.group(1)
    source = json.loads(found["direct_url"] or "{}").get("url", "")
    assert source.removeprefix("file://").rstrip("/") == str(ROOT), source

    lab = _ok(_run([venv / "bin" / "jupyter", "lab", "--version"], cwd=tmp_path, env=env))
    assert re.fullmatch(r"4\.\d+\.\d+\S*", lab.stdout.strip()), lab.stdout

    # The notebooks, as a Binder user's Run All without a key would run them: every recorded
    # %%fuxi cell replays (strictly here: a divergence from the record fails the cell).
    notebooks = _copy_notebooks(tmp_path / "notebooks")
    run = _run([python, "-m", "pytest", "--nbval", "--nbval-current-env", "-p",
                "no:cacheprovider", "--fuxi-replay=strict", "-rf", "."],
               cwd=notebooks, env=env, timeout=780)
    output = run.stdout + run.stderr
    print(output[-3000:])
    counts = _summary_counts(run.stdout)
    assert run.returncode == 0, f"nbval exited {run.returncode}:\n{output[-8000:]}"
    assert counts.get("passed", 0) > 0 and not counts.get("failed"), counts
    ran = set(re.findall(r"^(\S+\.ipynb) ", run.stdout, re.M))
    assert "quickstart.ipynb" in ran, sorted(ran)
