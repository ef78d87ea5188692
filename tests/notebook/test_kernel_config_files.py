"""Configuration files that cannot be used, in a real kernel (issue 18, finding 10): a
settings or MCP file nested 100,000 deep, or deep enough to break the code that walks it,
fails the cell with one line naming the file (not a RecursionError traceback); a command
folder nested too deeply to walk is skipped with one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook.testing import Turn, text

DEEP = "[" * 100_000
#: parses; its repr() (in an error message) would recurse past the limit in a kernel
DEEP_VALID = "[" * 900 + "]" * 900


def _project(kernel, name: str) -> Path:
    folder = kernel.work / name
    (folder / ".fuxi").mkdir(parents=True, exist_ok=True)
    return folder


def _fails_with_one_line(result, name: str) -> None:
    """An error, as one line that names the file and says what is wrong with it."""
    assert result.status == "error", result.messages
    errors = [m["content"] for m in result.messages if m["msg_type"] == "error"]
    said = result.stderr + "".join(e["evalue"] for e in errors)
    assert "Traceback" not in said and "RecursionError" not in said, said
    assert not any(e["ename"] == "RecursionError" for e in errors), errors
    lines = said.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and "nested too deeply" in lines[0], said


@pytest.mark.parametrize(("file", "text"), [
    (".fuxi/settings.json", DEEP),
    (".fuxi/settings.json", '{"permissions": {"allow": ' + DEEP_VALID + "}}"),
    (".fuxi/settings.local.json", DEEP),
    (".mcp.json", DEEP),
    (".mcp.json", '{"mcpServers": {"s": {"command": ' + DEEP_VALID + "}}}"),
], ids=["settings", "settings-deep-inside", "local", "mcp", "mcp-deep-inside"])
def test_a_project_file_nested_too_deeply_fails_the_cell_with_one_line(fresh, file, text):
    folder = _project(fresh, f"deep-{file.replace('/', '-')}-{len(text)}")
    (folder / file).write_text(text)
    result = fresh.run(f"%%fuxi --cwd {folder}\nwork", cell_id="cell-deep-settings")
    _fails_with_one_line(result, Path(file).name)
    assert fresh.run("1 + 1").status == "ok"  # the kernel is fine


@pytest.mark.parametrize("text", [DEEP, '{"s": {"command": ' + DEEP_VALID + "}}"],
                         ids=["deep", "deep-inside"])
def test_an_mcp_config_file_nested_too_deeply_fails_the_cell_with_one_line(fresh, text):
    folder = _project(fresh, f"deep-mcp-config-{len(text)}")
    (folder / "servers.json").write_text(text)
    result = fresh.run(f"%%fuxi --cwd {folder} --mcp-config {folder / 'servers.json'}\nwork",
                       cell_id="cell-deep-mcp")
    _fails_with_one_line(result, "servers.json")


def test_inline_mcp_json_nested_too_deeply_fails_the_cell_with_one_line(fresh):
    folder = _project(fresh, "deep-inline")
    result = fresh.run(f"%%fuxi --cwd {folder} --mcp-config '{'[' * 5000}'\nwork",
                       cell_id="cell-deep-inline")
    _fails_with_one_line(result, "mcp_servers")


def _deep_folders(top: Path, depth: int) -> list[Path]:
    """`top/a/a/.../a` (made one by one: os.makedirs recurses per level, as rmtree does)."""
    folders = [top]
    for _ in range(depth):
        folders.append(folders[-1] / "a")
        folders[-1].mkdir()
    return folders


def test_a_command_folder_nested_too_deeply_is_skipped_with_one_line(fresh, api):
    folder = _project(fresh, "deep-commands")
    (folder / ".fuxi" / "commands").mkdir()
    folders = _deep_folders(folder / ".fuxi" / "commands", 1000)
    (folders[-1] / "plot.md").write_text("Plot it.\n")
    api.add(Turn([text("sent as written")]))
    try:
        result = fresh.run(f"%%fuxi --cwd {folder}\n/plot price", cell_id="cell-deep-commands")
    finally:
        (folders[-1] / "plot.md").unlink()
        for path in reversed(folders):
            path.rmdir()
    assert result.status == "ok", result.messages
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    said = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(said) == 1 and "the command folder" in said[0], result.stderr
    assert str(folder / ".fuxi" / "commands") in said[0]
