"""FUXI.md: per source, parent folders up to the git root, nested files, caps, symlinks."""

from __future__ import annotations

from fuxi_notebook._internal.settings.memory import (
    MAX_MEMORY_CHARS,
    git_root,
    load_memory,
    nested_memory,
)
from fuxi_notebook._internal.settings.project import load_project_settings

from .helpers import user_dir


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _names(files):
    return [(m.source, m.text) for m in files]


def test_each_source_reads_its_files_in_prompt_order(tmp_path):
    _write(user_dir() / "FUXI.md", "user")
    _write(tmp_path / "FUXI.md", "project")
    _write(tmp_path / ".fuxi" / "FUXI.md", "project .fuxi")
    _write(tmp_path / "FUXI.local.md", "local")
    settings = load_project_settings(["user", "project", "local"], tmp_path)
    assert _names(settings.memory) == [("user", "user"), ("project", "project"),
                                       ("local", "local"), ("project", "project .fuxi")]
    assert settings.memory_blocks()[0] == f"Contents of {user_dir() / 'FUXI.md'}:\n\nuser"
    assert _names(load_project_settings(["project"], tmp_path).memory) == [
        ("project", "project"), ("project", "project .fuxi")]
    assert load_project_settings([], tmp_path).memory == []


def test_parents_are_read_up_to_the_git_root(tmp_path):
    repo = tmp_path / "repo"
    root = repo / "a" / "b"
    root.mkdir(parents=True)
    (repo / ".git").mkdir()
    _write(tmp_path / "FUXI.md", "above the repository")
    _write(repo / "FUXI.md", "repo")
    _write(repo / "a" / "FUXI.md", "a")
    _write(repo / "a" / "FUXI.local.md", "a local")
    _write(root / "FUXI.md", "b")
    assert git_root(root) == repo
    files, _ = load_memory(["project", "local"], root)
    assert [m.text for m in files] == ["repo", "a", "a local", "b"]


def test_a_worktree_git_file_marks_the_root_too(tmp_path):
    (tmp_path / ".git").write_text("gitdir: /elsewhere\n")
    (tmp_path / "sub").mkdir()
    assert git_root(tmp_path / "sub") == tmp_path


def test_without_git_only_the_root_is_read(tmp_path):
    root = tmp_path / "notebooks"
    root.mkdir()
    _write(tmp_path / "FUXI.md", "parent: not read")
    _write(root / "FUXI.md", "root")
    files, _ = load_memory(["project"], root)
    assert [m.text for m in files] == ["root"]


def test_a_long_file_is_cut_with_a_notice(tmp_path):
    _write(tmp_path / "FUXI.md", "x" * (MAX_MEMORY_CHARS + 500))
    (memory,) = load_project_settings(["project"], tmp_path).memory
    assert memory.truncated
    assert memory.text.startswith("x" * MAX_MEMORY_CHARS)
    assert memory.text[MAX_MEMORY_CHARS:].count("x") == 0
    assert f"only its first {MAX_MEMORY_CHARS:,} characters" in memory.text


def test_a_symlink_out_of_the_project_is_not_followed(tmp_path):
    secret = _write(tmp_path / "home" / ".ssh" / "id_rsa", "PRIVATE KEY")
    root = tmp_path / "checkout"
    root.mkdir()
    (root / "FUXI.md").symlink_to(secret)
    _write(root / "docs" / "real.md", "inside")
    (root / ".fuxi").mkdir()
    (root / ".fuxi" / "FUXI.md").symlink_to(root / "docs" / "real.md")
    settings = load_project_settings(["project"], root)
    assert [m.text for m in settings.memory] == ["inside"]  # a link inside is fine
    assert any("leads outside" in w and "FUXI.md" in w for w in settings.warnings)
    assert "PRIVATE KEY" not in "".join(settings.memory_blocks())


def test_user_memory_may_be_a_symlink(tmp_path):
    target = _write(tmp_path / "dotfiles" / "FUXI.md", "from my dotfiles")
    user_dir().mkdir(parents=True, exist_ok=True)
    (user_dir() / "FUXI.md").symlink_to(target)
    assert [m.text for m in load_project_settings(["user"], tmp_path).memory] == [
        "from my dotfiles"]


def test_nested_memory_between_root_and_the_file(tmp_path):
    _write(tmp_path / "FUXI.md", "root: already in the prompt")
    _write(tmp_path / "src" / "FUXI.md", "src")
    _write(tmp_path / "src" / "pkg" / "FUXI.md", "pkg")
    _write(tmp_path / "src" / "pkg" / "deep" / "mod.py", "")
    found = nested_memory(tmp_path / "src" / "pkg" / "deep" / "mod.py", tmp_path, [])
    assert found == [(tmp_path / "src" / "FUXI.md", "src"),
                     (tmp_path / "src" / "pkg" / "FUXI.md", "pkg")]
    again = nested_memory(tmp_path / "src" / "pkg" / "x.py", tmp_path,
                          [tmp_path / "src" / "FUXI.md"])
    assert again == [(tmp_path / "src" / "pkg" / "FUXI.md", "pkg")]
    assert nested_memory(tmp_path / "top.py", tmp_path, []) == []
    assert nested_memory(tmp_path / "src", tmp_path, []) == [(tmp_path / "src" / "FUXI.md",
                                                              "src")]


def test_nested_memory_outside_root_or_through_a_link_is_nothing(tmp_path):
    root = tmp_path / "root"
    _write(tmp_path / "other" / "FUXI.md", "other")
    _write(tmp_path / "other" / "f.py", "")
    assert nested_memory(tmp_path / "other" / "f.py", root, []) == []
    _write(tmp_path / "secret.txt", "secret")
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "FUXI.md").symlink_to(tmp_path / "secret.txt")
    assert nested_memory(root / "sub" / "f.py", root, []) == []


def test_nested_memory_is_capped(tmp_path):
    _write(tmp_path / "sub" / "FUXI.md", "y" * (MAX_MEMORY_CHARS * 2))
    ((_, text),) = nested_memory(tmp_path / "sub" / "f.py", tmp_path, [])
    assert len(text) < MAX_MEMORY_CHARS + 200 and "was cut here" in text
