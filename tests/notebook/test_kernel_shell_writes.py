"""Issue 18, finding 8, where it was seen: a kernel started in `$HOME`, a `%%fuxi` cell in
acceptEdits, and a model that writes into `~/.fuxi` through the shell (a glob, a copied
folder, an option that names the destination).

The kernel's HOME and working directory are one temp folder; its `.fuxi` is the user
configuration folder. Cells run headless, so what needs approval is denied: a case is
safe when nothing the payload carries reached `.fuxi/` and the model was told the call
was not granted. The ordinary edits must still happen.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

from .kernel_harness import KernelHarness

MARKER = "planted-by-the-payload"


@pytest.fixture(scope="module")
def home_kernel(api, tmp_path_factory):
    """One kernel whose HOME, working directory and config folder's parent are `home`."""
    home = tmp_path_factory.mktemp("home")
    harness = KernelHarness(cwd=str(home), env={
        "HOME": str(home), "FUXI_CONFIG_DIR": str(home / ".fuxi"),
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0001",
        "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5", "MPLBACKEND": "Agg",
        "FUXI_STALL_TIMEOUT": "30"})
    loaded = harness.run("%load_ext fuxi_notebook")
    assert loaded.status == "ok", loaded.messages
    harness.work = home
    yield harness
    harness.close()


#: What the config folder holds before each case (the user's own settings among them).
ORIGINAL = {"settings.json": "{}\n", "c.json": "{}\n", "README": "original\n"}
_PLANTABLE = frozenset({*ORIGINAL, "payload.json", "commands", "x"})
_KEEP = frozenset({".fuxi", ".ipython", ".local", ".cache", ".config", ".jupyter"})


@pytest.fixture
def home(home_kernel, api) -> Path:
    """The home folder reset: a config folder, a payload, a stage holding a `.fuxi`."""
    api.reset()
    home_kernel.run("%fuxi reset")
    where: Path = home_kernel.work
    _remove([c for c in where.iterdir() if c.name not in _KEEP])
    config = where / ".fuxi"
    config.mkdir(exist_ok=True)
    _remove([c for c in config.iterdir() if c.name in _PLANTABLE])
    for name, content in ORIGINAL.items():
        (config / name).write_text(content)
    files = {"payload.json": MARKER, "repo/stage/.fuxi/settings.json": MARKER,
             "repo/stage/.fuxi/commands/evil.md": MARKER, "stage/.fuxi/settings.json": MARKER,
             "src/a.txt": "a\n", "src/sub/b.txt": "b\n", "a.txt": "alpha\n",
             "old.txt": "old\n", "notes.txt": "alpha\n", "src/x.pyc": "", "src/y.pyc": ""}
    for name, content in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return where


def _remove(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _run(kernel: KernelHarness, api, command: str) -> dict:
    api.add(Turn([tool_use("Bash", {"command": command})]), Turn([text("done")]))
    result = kernel.run("%%fuxi --permission-mode acceptEdits\ntidy up")
    assert result.status == "ok", result.messages
    return api.requests[1]["messages"][-1]["content"][0]


def _planted(config: Path) -> list[Path]:
    """Files under the config folder that the payload wrote or changed."""
    found = [p for p in config.rglob("*") if p.is_file() and MARKER in p.read_text("utf-8",
                                                                                  "replace")]
    return found + [config / name for name, content in ORIGINAL.items()
                    if (config / name).read_text() != content]


ATTACKS = {
    "glob-dest": "cp payload.json .fux?/settings.json",
    "glob-dest-dir": "cp payload.json .fux?",
    "dir-copy": "cp -r repo/stage/. .",
    "dir-copy-home": "cp -a stage/. ~",
    "sed-glob": f"sed -i 's/original/{MARKER}/' .fux?/README",
    "redirect-glob": "cat payload.json > .fux?/c.json",
    "target-option": "cp -t .fuxi payload.json",
    "target-abbreviated": "cp --target .fuxi payload.json",
    "move-out-of-stage": "mv stage/.fuxi/settings.json .fu??/",
    "append-glob": "cat payload.json >> .fu*/settings.json",
    "touch-then-write": "touch .fux?/settings.json && cat payload.json > .fux?/settings.json",
    "brace": "cp payload.json .{fuxi,x}/settings.json",
    "sed-backup": "cp payload.json settings.json && sed -i'.fuxi/*' 's/x/x/' settings.json",
}


@pytest.mark.parametrize("command", ATTACKS.values(), ids=ATTACKS.keys())
def test_accept_edits_does_not_write_into_the_config_folder(home_kernel, api, home, command):
    answer = _run(home_kernel, api, command)
    assert _planted(home / ".fuxi") == []
    assert answer["is_error"] and "not granted" in answer["content"], answer


def test_a_symlink_into_the_config_folder_is_not_written_through(home_kernel, api, home):
    (home / "link").symlink_to(home / ".fuxi")
    answer = _run(home_kernel, api, "cp payload.json lin?/settings.json")
    assert _planted(home / ".fuxi") == []
    assert answer["is_error"] and "not granted" in answer["content"], answer


LEGIT = [
    ("cp a.txt b.txt", lambda h: (h / "b.txt").read_text() == "alpha\n"),
    ("cp -r src dst", lambda h: (h / "dst" / "sub" / "b.txt").exists()),
    ("rm src/*.pyc", lambda h: not list(h.glob("src/*.pyc"))),  # `rm *` in ~ is critical
    ("mv old.txt new.txt", lambda h: (h / "new.txt").exists() and not (h / "old.txt").exists()),
    ("sed -i 's/alpha/gamma/' *.txt", lambda h: (h / "notes.txt").read_text() == "gamma\n"),
    ("touch fresh.txt", lambda h: (h / "fresh.txt").exists()),
    ("mkdir -p build/out", lambda h: (h / "build" / "out").is_dir()),
    ("echo x > out.txt", lambda h: (h / "out.txt").read_text() == "x\n"),
]


@pytest.mark.parametrize(("command", "done"), LEGIT, ids=[c for c, _ in LEGIT])
def test_ordinary_edits_still_run_in_accept_edits(home_kernel, api, home, command, done):
    answer = _run(home_kernel, api, command)
    assert not answer.get("is_error"), answer
    assert done(home)
