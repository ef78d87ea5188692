"""The git branch a transcript records, read through the bounded reader: a worktree's
`.git` file is followed to its HEAD, a detached HEAD is no branch. (Bad files there, a
FIFO, a device, a huge or non-UTF-8 file, are rows of tests/settings/bad_file_readers.py:
no branch, never a hang.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, ScriptedModel, query
from fuxi_notebook._internal.common.reading import forget_all
from fuxi_notebook._internal.sessions.store import FileSessionStore, project_key_for_directory
from fuxi_notebook.testing import text


async def _branches(folder: Path) -> set[str | None]:
    forget_all()
    options = FuxiAgentOptions(model=ScriptedModel([[text("ok")]]), cwd=folder)
    messages = [m async for m in query(prompt="hi", options=options)]
    entries = FileSessionStore().read({"project_key": project_key_for_directory(folder),
                                       "session_id": messages[-1].session_id})
    return {e.get("gitBranch") for e in entries or []}


@pytest.mark.parametrize(("head", "branch"), [("ref: refs/heads/wt-branch\n", "wt-branch"),
                                              ("0123456789abcdef0123456789abcdef01234567\n",
                                               None)])
async def test_a_worktree_names_the_branch_its_gitdir_holds(tmp_path, head, branch):
    gitdir = tmp_path / "main" / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text(head)
    worktree = tmp_path / "wt"
    (worktree / "sub").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    assert await _branches(worktree / "sub") == {branch}
