"""Read, Write and Edit against real files in a temp directory."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import stat
from pathlib import Path

import pytest

from fuxi_notebook._internal.tools.base import ToolContext, ToolError, ToolOutput
from fuxi_notebook._internal.tools.files import fsutil
from fuxi_notebook._internal.tools.files.file_tools import EditTool, ReadTool, WriteTool


async def read(ctx: ToolContext, path: str | Path, **extra: object) -> ToolOutput:
    return await ReadTool().run({"file_path": str(path), **extra}, ctx)


async def write(ctx: ToolContext, path: str | Path, content: str) -> ToolOutput:
    return await WriteTool().run({"file_path": str(path), "content": content}, ctx)


async def edit(ctx: ToolContext, path: str | Path, old: str, new: str, **extra: object):
    payload = {"file_path": str(path), "old_string": old, "new_string": new, **extra}
    return await EditTool().run(payload, ctx)


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


def stray_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# --- Read: text -------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n  beta\ngamma\n")
    out = await read(ctx, "a.txt")
    assert out.content == numbered(["alpha", "  beta", "gamma"])
    assert not out.is_error


async def test_read_offset_and_limit_select_lines_and_say_so(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await read(ctx, "a.txt", offset=3, limit=2)
    body, notice = out.content.split("\n\n")
    assert body == numbered(["line 3", "line 4"], start=3)
    assert notice == "[Showing lines 3-4 of 10. Use offset and limit to read more.]"


async def test_read_defaults_to_2000_lines_with_notice(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    out = await read(ctx, "big.txt")
    lines = out.content.split("\n")
    assert lines[1999] == f"{2000:>6}\t2000"
    assert "  2001\t" not in out.content
    assert out.content.endswith(
        "[Showing lines 1-2000 of 2500. Use offset and limit to read more.]"
    )


async def test_read_counts_last_line_without_newline(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree")
    out = await read(ctx, "a.txt", offset=2, limit=1)
    assert out.content.startswith(numbered(["two"], start=2))
    assert "[Showing lines 2-2 of 3." in out.content


async def test_read_whole_file_has_no_notice(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    out = await read(ctx, "a.txt", limit=50)
    assert "Showing" not in out.content


async def test_read_cuts_long_lines_with_marker(ctx, tmp_path):
    (tmp_path / "long.txt").write_text("x" * 5000 + "\nshort\n")
    out = await read(ctx, "long.txt")
    first, second = out.content.split("\n")
    assert first.startswith("     1\t" + "x" * 2000 + "...")
    assert "x" * 2001 not in first
    assert "3000 more characters" in first
    assert second == "     2\tshort"


async def test_read_strips_carriage_returns(ctx, tmp_path):
    (tmp_path / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    out = await read(ctx, "crlf.txt")
    assert out.content == numbered(["a", "b"])


async def test_read_offset_past_end_is_a_notice(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    out = await read(ctx, "a.txt", offset=10)
    assert not out.is_error
    assert "only 2 lines" in out.content


async def test_read_empty_file(ctx, tmp_path):
    (tmp_path / "empty.txt").touch()
    out = await read(ctx, "empty.txt")
    assert "exists but is empty" in out.content


async def test_read_records_mtime(ctx, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    await read(ctx, path)
    assert ctx.read_files[str(path)] == path.stat().st_mtime_ns


async def test_read_skips_huge_line_before_offset_but_refuses_to_show_one(ctx, tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("w") as handle:
        handle.write("a" * (10 * 1024 * 1024 + 10) + "\nsmall\n")
    out = await read(ctx, path, offset=2)
    assert out.content.startswith(numbered(["small"], start=2))
    with pytest.raises(ToolError, match="longer than 10 MB"):
        await read(ctx, path)


# --- Read: errors -----------------------------------------------------------------------


async def test_read_missing_file_names_resolved_path(ctx, tmp_path):
    with pytest.raises(ToolError) as info:
        await read(ctx, "sub/nope.txt")
    assert str(tmp_path / "sub" / "nope.txt") in str(info.value)


async def test_read_directory_points_to_glob(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="Glob"):
        await read(ctx, "d")


async def test_read_refuses_binary_with_nul_bytes(ctx, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"ELF\x00\x01\x02" * 100)
    with pytest.raises(ToolError, match="binary"):
        await read(ctx, "blob.bin")
    assert str(tmp_path / "blob.bin") not in ctx.read_files


async def test_read_refuses_invalid_utf8(ctx, tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="binary"):
        await read(ctx, "latin.txt")


async def test_read_refuses_invalid_utf8_after_the_sniffed_block(ctx, tmp_path):
    (tmp_path / "late.txt").write_bytes(b"ok\n" * 5000 + b"\xff\xfe\n")
    with pytest.raises(ToolError, match="line 5001"):
        await read(ctx, "late.txt", offset=4990)


# --- Read: images and notebooks ---------------------------------------------------------


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32
GIF = b"GIF89a" + b"\x00" * 32
WEBP = b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 32


@pytest.mark.parametrize(("name", "data", "media_type"), [
    ("p.png", PNG, "image/png"), ("p.JPG", JPEG, "image/jpeg"), ("a.gif", GIF, "image/gif"),
    ("w.webp", WEBP, "image/webp"),
    ("really-a-png.jpg", PNG, "image/png"),  # the bytes decide, not the name
    ("no-extension", JPEG, "image/jpeg"),
])
async def test_read_image_returns_image_block(ctx, tmp_path, name, data, media_type):
    (tmp_path / name).write_bytes(data)
    out = await read(ctx, name)
    assert isinstance(out.content, list)
    (block,) = out.content
    assert block["type"] == "image"
    assert block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == media_type
    assert base64.b64decode(block["source"]["data"]) == data
    assert str(tmp_path / name) in ctx.read_files


async def test_a_text_file_named_like_an_image_is_read_as_text(ctx, tmp_path):
    (tmp_path / "chart.png").write_text("not really a picture\n")
    out = await read(ctx, "chart.png")
    assert isinstance(out.content, str) and "is not image/png data: read as text" in out.content
    assert "not really a picture" in out.content


async def test_read_refuses_huge_image(ctx, tmp_path):
    (tmp_path / "big.png").write_bytes(PNG + b"\x00" * (5 * 1024 * 1024 + 1))
    with pytest.raises(ToolError, match="limit"):
        await read(ctx, "big.png")


def notebook() -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "markdown",
                "id": "intro",
                "metadata": {},
                "source": ["# Title\n", "text"],
            },
            {
                "cell_type": "code",
                "id": "calc",
                "metadata": {},
                "execution_count": 1,
                "source": "print('hi')\n1 + 1",
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
                    {
                        "output_type": "execute_result",
                        "execution_count": 1,
                        "metadata": {},
                        "data": {"text/plain": ["2"]},
                    },
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]},
                    },
                    {
                        "output_type": "error",
                        "ename": "ZeroDivisionError",
                        "evalue": "division by zero",
                        "traceback": ["\x1b[31m...\x1b[0m"],
                    },
                ],
            },
            {
                "cell_type": "code",
                "id": "noisy",
                "metadata": {},
                "source": "print('y' * 10000)",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "y" * 10000}],
            },
        ],
    }


async def test_read_notebook_renders_cells_and_outputs(ctx, tmp_path):
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook()))
    out = await read(ctx, "nb.ipynb")
    text = out.content
    assert isinstance(text, str)
    assert "<cell 0 [markdown] id=intro>\n# Title\ntext" in text
    assert "<cell 1 [code] id=calc>\nprint('hi')\n1 + 1" in text
    for expected in (
        "hi",
        "2",
        "<Figure>",
        "[image/png output]",
        "ZeroDivisionError: division by zero",
    ):
        assert expected in text
    assert "iVBORw0KGgo" not in text
    assert text.index("<cell 0") < text.index("<cell 1") < text.index("<cell 2")
    assert "y" * 3000 not in text
    assert "characters truncated" in text
    assert str(tmp_path / "nb.ipynb") in ctx.read_files


@pytest.mark.parametrize("broken", [
    {"cell_type": "code", "source": "x", "outputs": 5},
    {"cell_type": "code", "source": "x", "outputs": {"a": 1}},
    {"cell_type": "code", "source": "x", "outputs": [7, {"output_type": "display_data",
                                                       "data": ["text/plain"]}]},
    ["not", "a", "cell"],
])
async def test_one_malformed_cell_does_not_hide_the_notebook(ctx, tmp_path, broken):
    data = notebook()
    data["cells"].insert(1, broken)
    (tmp_path / "nb.ipynb").write_text(json.dumps(data))
    text = (await read(ctx, "nb.ipynb")).content
    assert "<cell 0 [markdown] id=intro>" in text and "<cell 2 [code] id=calc>" in text
    assert "invalid" in text.split("<cell 1", 1)[1].split("<cell 2", 1)[0]


async def test_read_invalid_notebook_falls_back_to_text(ctx, tmp_path):
    (tmp_path / "bad.ipynb").write_text("{not json\n")
    out = await read(ctx, "bad.ipynb")
    assert out.content == numbered(["{not json"])


# --- Write ------------------------------------------------------------------------------


async def test_write_creates_file_and_parents(ctx, tmp_path):
    out = await write(ctx, "new/deep/file.txt", "hello\n")
    path = tmp_path / "new" / "deep" / "file.txt"
    assert path.read_text() == "hello\n"
    assert out.content == f"File created successfully at: {path}"
    assert ctx.read_files[str(path)] == path.stat().st_mtime_ns
    assert stray_files(path.parent) == []


async def test_write_new_file_gets_umask_default_mode(ctx, tmp_path):
    await write(ctx, "f.txt", "x")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o666 & ~umask


async def test_write_refuses_unread_existing_file(ctx, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("original")
    with pytest.raises(ToolError, match="has not been read yet"):
        await write(ctx, path, "new")
    assert path.read_text() == "original"


async def test_write_refuses_file_modified_since_read(ctx, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("original")
    await read(ctx, path)
    path.write_text("changed by user")
    stamp = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ToolError, match="modified since"):
        await write(ctx, path, "new")
    assert path.read_text() == "changed by user"


async def test_write_updates_read_file_keeps_mode_and_allows_rewrite(ctx, tmp_path):
    path = tmp_path / "a.sh"
    path.write_text("old")
    path.chmod(0o750)
    await read(ctx, path)
    out = await write(ctx, path, "new")
    assert out.content == f"The file {path} has been updated."
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    await write(ctx, path, "newer")  # no re-read needed after our own write
    assert path.read_text() == "newer"
    assert stray_files(tmp_path) == []


async def test_write_through_symlink_keeps_link(ctx, tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    await read(ctx, link)
    await write(ctx, link, "new")
    assert link.is_symlink()
    assert target.read_text() == "new"


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), asyncio.CancelledError()])
async def test_failed_write_keeps_original_and_leaves_no_temp(ctx, tmp_path, monkeypatch, exc):
    path = tmp_path / "a.txt"
    path.write_text("original")
    await read(ctx, path)

    def failing_replace(src: str, dst: object, **dir_fds: int) -> None:
        fd = os.open(src, os.O_RDONLY, dir_fd=dir_fds.get("src_dir_fd"))
        with os.fdopen(fd) as written:
            assert written.read() == "new content"  # the temp file was fully written
        raise exc

    monkeypatch.setattr(fsutil.os, "replace", failing_replace)
    expected = ToolError if isinstance(exc, OSError) else asyncio.CancelledError
    with pytest.raises(expected):
        await write(ctx, path, "new content")
    assert path.read_text() == "original"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


async def test_write_to_directory_is_refused(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await write(ctx, "d", "x")


# --- Edit -------------------------------------------------------------------------------


async def read_file(ctx: ToolContext, path: Path, text: str) -> None:
    path.write_text(text)
    await read(ctx, path)


async def test_edit_replaces_unique_string_and_shows_snippet(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    out = await edit(ctx, path, "    return 2", "    return 42")
    assert path.read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 42\n"
    assert "has been updated" in out.content
    assert "     6\t    return 42" in out.content
    assert "     3\t" in out.content  # context before the edit
    assert ctx.read_files[str(path)] == path.stat().st_mtime_ns


async def test_edit_ambiguous_match_is_refused(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "x = 1\nx = 1\n")
    with pytest.raises(ToolError, match="2 times") as info:
        await edit(ctx, path, "x = 1", "x = 2")
    assert "replace_all" in str(info.value)
    assert path.read_text() == "x = 1\nx = 1\n"


async def test_edit_absent_string_is_refused(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "    indented\n")
    with pytest.raises(ToolError, match="exactly"):
        await edit(ctx, path, "\tindented", "changed")  # tab instead of spaces
    assert path.read_text() == "    indented\n"


async def test_edit_replace_all(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "foo(1)\nfoo(2)\nbar(foo)\n")
    out = await edit(ctx, path, "foo", "baz", replace_all=True)
    assert path.read_text() == "baz(1)\nbaz(2)\nbar(baz)\n"
    assert "3 occurrences" in out.content


async def test_edit_identical_strings_refused(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "a\n")
    with pytest.raises(ToolError, match="identical"):
        await edit(ctx, path, "a", "a")


async def test_edit_requires_read(ctx, tmp_path):
    path = tmp_path / "m.py"
    path.write_text("a\n")
    with pytest.raises(ToolError, match="has not been read yet"):
        await edit(ctx, path, "a", "b")
    assert path.read_text() == "a\n"


async def test_edit_refuses_file_modified_since_read(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "a\n")
    path.write_text("a\nb\n")
    stamp = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ToolError, match="modified since"):
        await edit(ctx, path, "a", "c")


async def test_edit_missing_file(ctx, tmp_path):
    with pytest.raises(ToolError, match="does not exist"):
        await edit(ctx, "nope.py", "a", "b")


async def test_edit_with_empty_old_string_creates_file(ctx, tmp_path):
    out = await edit(ctx, "pkg/new.py", "", "print('new')\n")
    path = tmp_path / "pkg" / "new.py"
    assert path.read_text() == "print('new')\n"
    assert "created" in out.content
    await edit(ctx, path, "new", "newer")  # recorded as read
    assert path.read_text() == "print('newer')\n"


async def test_edit_with_empty_old_string_on_existing_content_is_refused(ctx, tmp_path):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "keep me\n")
    with pytest.raises(ToolError, match="already has content"):
        await edit(ctx, path, "", "x")
    assert path.read_text() == "keep me\n"


async def test_edit_matches_crlf_file_and_keeps_crlf(ctx, tmp_path):
    path = tmp_path / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await read(ctx, path)
    await edit(ctx, path, "one\ntwo", "uno\ndos")
    assert path.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_edit_failure_keeps_original(ctx, tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    await read_file(ctx, path, "a = 1\n")

    def failing_replace(src: str, dst: object, **dir_fds: int) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(fsutil.os, "replace", failing_replace)
    with pytest.raises(ToolError, match="Permission denied"):
        await edit(ctx, path, "1", "2")
    assert path.read_text() == "a = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


async def test_write_invalid_unicode_is_tool_error(ctx, tmp_path):
    with pytest.raises(ToolError, match="not valid Unicode"):
        await write(ctx, "bad.txt", "lone \ud800 surrogate")
    assert list(tmp_path.iterdir()) == []


async def test_read_refuses_fifo(ctx, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await read(ctx, "pipe")


# --- the built-in tool set --------------------------------------------------------------


def test_builtin_tools_order_and_schemas():
    import jsonschema

    from fuxi_notebook._internal.tools.base import Tool
    from fuxi_notebook._internal.tools.builtin import builtin_tools

    tools = builtin_tools()
    assert [t.name for t in tools] == ["Read", "Write", "Edit", "Glob", "Grep", "Bash",
                                       "AskUserQuestion"]
    assert [t.kind for t in tools] == ["read", "edit", "edit", "read", "read", "execute", "ask"]
    assert builtin_tools()[0] is not tools[0]
    for tool in tools:
        assert isinstance(tool, Tool)
        assert len(tool.description) > 200
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
