"""A warm process keeps a project's reading while its files stay as they were
(common/reading.py): every change a user can make to a file the reading used is seen on
the next load, and the reading notes every path it looks at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fuxi_notebook._internal.common import reading
from fuxi_notebook._internal.settings.project import load_project_settings

SOURCES = ["user", "project", "local"]


@pytest.fixture
def keep_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by a test are seconds old at most: keep readings however new they are
    (the racy-stamp rule has a test of its own)."""
    monkeypatch.setattr(reading, "_RACY_NS", 0)
    reading.forget_all()


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    return root / "sub"


def _kept(root: Path) -> bool:
    return any(key[0] == "project settings" and key[2] == root.resolve()
               for key in reading._KEPT)


@pytest.mark.usefixtures("keep_at_once")
def test_an_unchanged_project_is_read_once(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "FUXI.md").write_text("Be brief.")
    first = load_project_settings(SOURCES, root)
    assert _kept(root)
    second = load_project_settings(SOURCES, root)
    assert second._reading is first._reading
    assert second is not first and second.memory == first.memory


@pytest.mark.usefixtures("keep_at_once")
@pytest.mark.parametrize("change", ["edit same size", "create settings", "delete memory",
                                    "new parent memory", "new style", "symlink retargeted",
                                    "environment"])
def test_every_change_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              change: str) -> None:
    root = _project(tmp_path)
    fuxi = root / ".fuxi"
    fuxi.mkdir()
    (root / "FUXI.md").write_text("version A")
    (tmp_path / "a.md").write_text("linked A")
    (tmp_path / "b.md").write_text("linked B")
    (fuxi / "FUXI.md").symlink_to(tmp_path / "a.md")
    (root / ".mcp.json").write_text(
        '{"mcpServers": {"s": {"command": "${FUXI_MEMO_TOOL:-echo}"}}}')
    before = load_project_settings(SOURCES, root)
    assert _kept(root)

    if change == "edit same size":
        (root / "FUXI.md").write_text("version B")
    elif change == "create settings":
        (fuxi / "settings.json").write_text('{"model": "claude-opus-4-5"}')
    elif change == "delete memory":
        (root / "FUXI.md").unlink()
    elif change == "new parent memory":
        (tmp_path / "repo" / "FUXI.md").write_text("from the repository's root")
    elif change == "new style":
        (fuxi / "output-styles").mkdir()
        (fuxi / "output-styles" / "terse.md").write_text("---\nname: Terse\n---\nBe terse.")
    elif change == "symlink retargeted":
        (fuxi / "FUXI.md").unlink()
        (fuxi / "FUXI.md").symlink_to(tmp_path / "b.md")
    elif change == "environment":
        monkeypatch.setenv("FUXI_MEMO_TOOL", "cat")

    after = load_project_settings(SOURCES, root)
    reading.forget_all()
    cold = load_project_settings(SOURCES, root)  # what a fresh process reads
    assert after._reading == cold._reading
    assert after._reading != before._reading


def test_a_file_written_just_now_is_read_again(tmp_path: Path) -> None:
    """Its stamps may not move with a second write in the same clock tick."""
    reading.forget_all()
    root = _project(tmp_path)
    (root / "FUXI.md").write_text("version A")
    load_project_settings(SOURCES, root)
    assert not _kept(root)
    (root / "FUXI.md").write_text("version B")
    assert [m.text for m in load_project_settings(SOURCES, root).memory] == ["version B"]


@pytest.mark.usefixtures("keep_at_once")
def test_the_reading_notes_every_path_it_looks_at(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A path looked at but not noted would be a change the kept reading misses: every
    stat, open and listing of a cold load is of a noted path or one of its folders."""
    root = _project(tmp_path)
    fuxi = root / ".fuxi"
    (fuxi / "output-styles").mkdir(parents=True)
    (fuxi / "output-styles" / "terse.md").write_text("---\nname: Terse\n---\nBe terse.")
    (fuxi / "settings.json").write_text('{"model": "claude-opus-4-5"}')
    (root / "FUXI.md").write_text("memory")
    (root / "FUXI.local.md").write_text("local memory")
    (root / ".mcp.json").write_text('{"mcpServers": {}}')
    looked: list[str] = []
    for name in ("stat", "lstat", "open", "scandir", "listdir"):
        real = getattr(os, name)

        def spy(path: object, *args: object, _real: object = real, **kwargs: object) -> object:
            if isinstance(path, str | os.PathLike):
                looked.append(os.fspath(path))  # type: ignore[arg-type]
            return _real(path, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(os, name, spy)
    reading.forget_all()
    load_project_settings(SOURCES, root)
    monkeypatch.undo()
    noted = next(signatures for key, (signatures, _, _) in reading._KEPT.items()
                 if key[0] == "project settings")
    covered = {str(Path(p)) for p in noted}
    covered |= {str(parent) for p in noted for parent in Path(p).parents}
    missed = sorted({p for p in looked if str(Path(p)) not in covered})
    assert not missed, missed
    assert looked  # the spies saw the load


@pytest.mark.usefixtures("keep_at_once")
async def test_a_transcript_names_the_branch_checked_out_now(tmp_path: Path) -> None:
    """The git branch a transcript records is kept between queries, and a checkout of
    another branch is seen by the next one."""
    from fuxi_notebook import FuxiAgentOptions, ScriptedModel, query
    from fuxi_notebook._internal.sessions.store import (
        FileSessionStore,
        project_key_for_directory,
    )
    from fuxi_notebook.testing import text

    root = _project(tmp_path)
    head = tmp_path / "repo" / ".git" / "HEAD"
    branches = []
    for branch in ("main", "main", "feature/x"):
        head.write_text(f"ref: refs/heads/{branch}\n")
        options = FuxiAgentOptions(model=ScriptedModel([[text("ok")]]), cwd=root)
        messages = [m async for m in query(prompt="hi", options=options)]
        entries = FileSessionStore().read({"project_key": project_key_for_directory(root),
                                           "session_id": messages[-1].session_id})
        branches.append({e.get("gitBranch") for e in entries or []})
    assert branches == [{"main"}, {"main"}, {"feature/x"}]
