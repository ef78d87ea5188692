"""Glob and Grep over real directory trees, through the real ripgrep binary."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fuxi_notebook._internal.tools.base import ToolContext, ToolError, ToolOutput
from fuxi_notebook._internal.tools.files import ripgrep
from fuxi_notebook._internal.tools.files.globmatch import compile_glob
from fuxi_notebook._internal.tools.files.search import GlobTool, GrepTool, rg_path


def make(root: Path, *names: str, text: str = "") -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def set_mtime(path: Path, seconds: int) -> None:
    os.utime(path, (seconds, seconds))


async def glob(ctx: ToolContext, pattern: str, **extra: object) -> ToolOutput:
    return await GlobTool().run({"pattern": pattern, **extra}, ctx)


async def grep(ctx: ToolContext, pattern: str, **extra: object) -> ToolOutput:
    return await GrepTool().run({"pattern": pattern, **extra}, ctx)


def relative(out: ToolOutput, root: Path) -> list[str]:
    assert isinstance(out.content, str)
    return [str(Path(line).relative_to(root)) for line in out.content.splitlines()]


# --- glob -> regex translation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "matches", "rejects"),
    [
        ("*.py", ["a.py", ".hidden.py"], ["d/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "d/a.py", "d/e/f.py"], ["a.txt", "d/a.pyc"]),
        ("src/**/*.ts", ["src/a.ts", "src/x/y/a.ts"], ["a.ts", "lib/src/a.ts"]),
        ("*.{js,ts}", ["a.js", "b.ts"], ["c.jsx", "d/a.js"]),
        ("{src,lib}/**/*.{c,h}", ["src/a.c", "lib/x/b.h"], ["test/a.c"]),
        ("file?.txt", ["file1.txt"], ["file10.txt", "file/.txt"]),
        ("[ab]*.md", ["a.md", "bz.md"], ["c.md"]),
        ("[!ab]*.md", ["c.md"], ["a.md", "/x.md"]),
        ("docs/**", ["docs/a", "docs/x/y.md"], ["doc/a"]),
        ("a+b(1).txt", ["a+b(1).txt"], ["aab(1).txt"]),
    ],
)
def test_glob_translation(pattern, matches, rejects):
    regex = compile_glob(pattern)
    for path in matches:
        assert regex.match(path), (pattern, path)
    for path in rejects:
        assert not regex.match(path), (pattern, path)


# --- Glob -------------------------------------------------------------------------------


async def test_glob_without_slash_is_top_level_only(ctx, tmp_path):
    make(tmp_path, "top.py", "pkg/inner.py", "notes.txt")
    out = await glob(ctx, "*.py")
    assert relative(out, tmp_path) == ["top.py"]


async def test_glob_double_star_is_recursive_and_absolute(ctx, tmp_path):
    make(tmp_path, "top.py", "pkg/inner.py", "pkg/deep/x.py", "notes.txt")
    out = await glob(ctx, "**/*.py")
    assert all(Path(line).is_absolute() for line in out.content.splitlines())
    assert sorted(relative(out, tmp_path)) == ["pkg/deep/x.py", "pkg/inner.py", "top.py"]


async def test_glob_braces_and_subdirectory_pattern(ctx, tmp_path):
    make(tmp_path, "src/a.js", "src/b.ts", "src/c.css", "src/x/d.ts", "lib/e.ts")
    out = await glob(ctx, "src/*.{js,ts}")
    assert sorted(relative(out, tmp_path)) == ["src/a.js", "src/b.ts"]
    out = await glob(ctx, "src/**/*.ts")
    assert sorted(relative(out, tmp_path)) == ["src/b.ts", "src/x/d.ts"]


async def test_glob_honours_gitignore_outside_git_and_skips_dot_git(ctx, tmp_path):
    make(tmp_path, "keep/a.py", "ignored/b.py", ".git/hooks/c.py", ".github/d.py")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    out = await glob(ctx, "**/*.py")
    assert sorted(relative(out, tmp_path)) == [".github/d.py", "keep/a.py"]


async def test_glob_newest_first(ctx, tmp_path):
    make(tmp_path, "old.py", "new.py", "mid.py")
    for name, seconds in (("old.py", 1_000_000), ("mid.py", 2_000_000), ("new.py", 3_000_000)):
        set_mtime(tmp_path / name, seconds)
    out = await glob(ctx, "*.py")
    assert relative(out, tmp_path) == ["new.py", "mid.py", "old.py"]


async def test_glob_caps_at_100_with_note(ctx, tmp_path):
    make(tmp_path, *(f"f{i:03}.txt" for i in range(120)))
    out = await glob(ctx, "*.txt")
    lines = out.content.splitlines()
    assert len(lines) == 101
    assert lines[-1] == (
        "(Results are truncated: showing 100 of 120 files. Use a more specific path or pattern.)"
    )


async def test_glob_path_argument_and_absolute_pattern(ctx, tmp_path):
    make(tmp_path, "sub/a.py", "sub/b.txt", "other.py")
    out = await glob(ctx, "*.py", path="sub")
    assert relative(out, tmp_path) == ["sub/a.py"]
    out = await glob(ctx, f"{tmp_path}/sub/*.txt")
    assert relative(out, tmp_path) == ["sub/b.txt"]


async def test_glob_no_match(ctx, tmp_path):
    make(tmp_path, "a.py")
    out = await glob(ctx, "**/*.rs")
    assert out.content == "No files found"
    assert (await glob(ctx, "missing_dir/*.py")).content == "No files found"


async def test_glob_bad_path(ctx, tmp_path):
    make(tmp_path, "a.py")
    with pytest.raises(ToolError, match="does not exist"):
        await glob(ctx, "*.py", path="nope")
    with pytest.raises(ToolError, match="not a directory"):
        await glob(ctx, "*.py", path="a.py")


def test_rg_path_prefers_venv_binary_and_reports_missing(tmp_path, monkeypatch):
    assert Path(rg_path()).name == "rg"
    monkeypatch.setattr(ripgrep.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match="ripgrep"):
        rg_path()


# --- Grep -------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("import os\n\ndef alpha():\n    return os.getcwd()\n")
    (tmp_path / "b.js").write_text("const Alpha = 1;\nconsole.log(Alpha);\n")
    (tmp_path / "c.txt").write_text("nothing here\n")
    set_mtime(tmp_path / "a.py", 1_000_000)
    set_mtime(tmp_path / "b.js", 2_000_000)
    return tmp_path


async def test_grep_files_with_matches_newest_first(ctx, tree):
    out = await grep(ctx, "(?i)alpha")
    first, *paths = out.content.splitlines()
    assert first == "Found 2 files"
    assert paths == [str(tree / "b.js"), str(tree / "a.py")]


async def test_grep_case_sensitivity_flag(ctx, tree):
    assert (await grep(ctx, "alpha")).content.splitlines()[1:] == [str(tree / "a.py")]
    out = await grep(ctx, "alpha", **{"-i": True})
    assert out.content.startswith("Found 2 files")


async def test_grep_content_with_and_without_line_numbers(ctx, tree):
    out = await grep(ctx, "getcwd", output_mode="content")
    assert out.content == f"{tree / 'a.py'}:4:    return os.getcwd()"
    out = await grep(ctx, "getcwd", output_mode="content", **{"-n": False})
    assert out.content == f"{tree / 'a.py'}:    return os.getcwd()"


async def test_grep_context_lines(ctx, tree):
    out = await grep(ctx, "def alpha", path="a.py", output_mode="content", **{"-A": 1})
    assert out.content.splitlines() == ["3:def alpha():", "4-    return os.getcwd()"]
    out = await grep(ctx, "def alpha", path="a.py", output_mode="content", **{"-B": 2})
    assert out.content.splitlines() == ["1-import os", "2-", "3:def alpha():"]
    out = await grep(ctx, "^$", path="a.py", output_mode="content", **{"-C": 1})
    assert out.content.splitlines() == ["1-import os", "2:", "3-def alpha():"]


async def test_grep_count_mode(ctx, tree):
    out = await grep(ctx, "Alpha|os", output_mode="count")
    assert out.content.splitlines() == [f"{tree / 'a.py'}:2", f"{tree / 'b.js'}:2"]


async def test_grep_glob_and_type_filters(ctx, tree):
    out = await grep(ctx, "(?i)alpha", glob="*.js")
    assert out.content.splitlines()[1:] == [str(tree / "b.js")]
    out = await grep(ctx, "(?i)alpha", type="py")
    assert out.content.splitlines()[1:] == [str(tree / "a.py")]


async def test_grep_head_limit(ctx, tmp_path):
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(50)))
    out = await grep(ctx, "hit", path="many.txt", output_mode="content", head_limit=3)
    lines = out.content.splitlines()
    assert lines[:3] == ["1:hit 0", "2:hit 1", "3:hit 2"]
    assert lines[3] == "[Showing the first 3 of 50 lines (head_limit).]"
    assert len(lines) == 4


async def test_grep_head_limit_on_files(ctx, tree):
    out = await grep(ctx, "(?i)alpha", head_limit=1)
    assert out.content.splitlines()[1:] == [
        str(tree / "b.js"),
        "[Showing the first 1 of 2 files (head_limit).]",
    ]


async def test_grep_multiline(ctx, tree):
    out = await grep(ctx, r"import os.*def alpha", multiline=True)
    assert out.content.splitlines()[1:] == [str(tree / "a.py")]
    with pytest.raises(ToolError):  # without multiline rg refuses literal \n
        await grep(ctx, r"import os\n")


async def test_grep_no_matches(ctx, tree):
    out = await grep(ctx, "zebra")
    assert out.content == "No matches found"
    assert not out.is_error


async def test_grep_bad_regex_is_tool_error(ctx, tree):
    with pytest.raises(ToolError, match="regex parse error"):
        await grep(ctx, "foo(")


async def test_grep_unknown_type_and_missing_path(ctx, tree):
    with pytest.raises(ToolError, match="unrecognized file type"):
        await grep(ctx, "x", type="nosuchtype")
    with pytest.raises(ToolError, match="does not exist"):
        await grep(ctx, "x", path="nope")


async def test_grep_honours_gitignore_and_skips_git(ctx, tmp_path):
    make(tmp_path, "keep.txt", "build/out.txt", ".git/config", ".env", text="needle\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    out = await grep(ctx, "needle")
    assert sorted(out.content.splitlines()[1:]) == [
        str(tmp_path / ".env"),
        str(tmp_path / "keep.txt"),
    ]


async def test_grep_leading_dash_pattern(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("--verbose\n")
    out = await grep(ctx, "--verbose", output_mode="content", path="a.txt")
    assert out.content == "1:--verbose"


async def test_grep_caps_total_output(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"match {i} {'x' * 100}\n" for i in range(2000)))
    out = await grep(ctx, "match", path="big.txt", output_mode="content")
    assert len(out.content) < 31_000
    assert out.content.startswith("1:match 0 ")
    assert re.search(r"\[Output truncated: \d+ more characters", out.content)


async def test_grep_long_lines_are_previewed(ctx, tmp_path):
    (tmp_path / "min.js").write_text("needle" + "y" * 5000 + "\n")
    out = await grep(ctx, "needle", path="min.js", output_mode="content")
    assert out.content.startswith("1:needle")
    assert len(out.content) < 1000


async def test_grep_content_lists_files_in_a_stable_order(tmp_path: Path):
    # ripgrep searches files in parallel; a replayed Grep must give the recorded text
    for number in range(60):
        (tmp_path / f"f{number:02d}.txt").write_text(f"needle {number}\nhay\n")
    tool, ctx = GrepTool(), ToolContext(cwd=tmp_path)
    runs = [(await tool.run({"pattern": "needle", "output_mode": "content"}, ctx)).content
            for _ in range(5)]
    assert len(set(runs)) == 1
    names = [line.split(":", 1)[0] for line in runs[0].splitlines()]
    assert names == sorted(names) and len(names) == 60
