"""Every configuration file or JSON string the user or a project gives is read through one
helper: whatever is wrong with it (nested 100,000 deep, parsed but deep enough to break the
code that walks it, not UTF-8, unreadable) is one line naming the file, never a traceback
(issue 18, finding 10). Agent, command, skill and style files are skipped with a warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions
from fuxi_notebook._internal.mcp_servers.config import parse_mcp_servers
from fuxi_notebook._internal.permissions.settings import load_settings
from fuxi_notebook._internal.settings.project import load_project_settings
from fuxi_notebook._internal.settings.trust import lookup_trust, trust_store_path
from fuxi_notebook.errors import ConfigurationError

from .helpers import user_dir, write_json

#: the C parser gives up on it with a RecursionError
DEEP = "[" * 100_000
#: parses, but deep enough that repr(), json.dumps() or pydantic of it could hit the
#: recursion limit in a deeper stack (a kernel's): refused as well, before anything walks it
DEEP_VALID = "[" * 500 + "]" * 500
BAD: dict[str, str | bytes] = {
    "deep": DEEP,
    "deep inside": '{"permissions": {"allow": ' + DEEP_VALID + "}, "
                   '"mcpServers": {"s": {"command": ' + DEEP_VALID + "}}}",
    "not UTF-8": b'{"model": "\xff"}',
}


def _one_line_naming(error: BaseException, name: str, *, deep: bool = False) -> None:
    message = str(error)
    assert name in message and "\n" not in message, message
    assert "Recursion" not in message and "Traceback" not in message, message
    assert len(message) < 500, message
    assert not deep or "nested too deeply" in message, message


def _settings(source: str, name: str) -> Callable[[Path], Path]:
    def place(root: Path) -> Path:
        return (user_dir() if source == "user" else root / ".fuxi") / name
    return place


#: where a file goes (from the project folder), and what reads it
JSON_READERS: dict[str, tuple[Callable[[Path], Path], Callable[[Path, Path], Any]]] = {
    "project settings": (_settings("project", "settings.json"),
                         lambda root, _: load_project_settings(["project"], root)),
    "local settings": (_settings("local", "settings.local.json"),
                       lambda root, _: load_project_settings(["local"], root)),
    "user settings": (_settings("user", "settings.json"),
                      lambda root, _: load_project_settings(["user"], root)),
    ".mcp.json": (lambda root: root / ".mcp.json",
                  lambda root, _: load_project_settings(["project"], root)),
    "--mcp-config file": (lambda root: root / "servers.json",
                          lambda _, path: parse_mcp_servers(path)),
    "options.settings file": (lambda root: root / "perms.json",
                              lambda root, path: load_settings(str(path), root)),
}


@pytest.mark.parametrize("content", BAD.values(), ids=BAD.keys())
@pytest.mark.parametrize("reader", JSON_READERS.values(), ids=JSON_READERS.keys())
def test_a_json_file_that_cannot_be_used_is_one_line_naming_it(tmp_path, reader, content):
    place, read = reader
    path = place(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigurationError) as caught:
        read(tmp_path, path)
    _one_line_naming(caught.value, path.name, deep=content != BAD["not UTF-8"])


@pytest.mark.parametrize("text", [DEEP, '{"s": {"command": ' + DEEP_VALID + "}}",
                                  '{"s": {"command": "x", "env": {"A": ' + DEEP_VALID + "}}}"])
def test_mcp_servers_as_a_json_string_is_one_line(text):
    with pytest.raises(ConfigurationError) as caught:
        parse_mcp_servers(text)
    _one_line_naming(caught.value, "mcp_servers", deep=True)


def test_a_deep_python_value_for_mcp_servers_is_one_line():
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ConfigurationError) as caught:
        parse_mcp_servers({"s": {"command": deep}})
    _one_line_naming(caught.value, "mcp_servers", deep=True)


@pytest.mark.parametrize("text", ['{"permissions": ' + DEEP,
                                  '{"permissions": {"allow": ' + DEEP_VALID + "}}"])
def test_options_settings_as_inline_json_is_one_line(tmp_path, text):
    with pytest.raises(ConfigurationError) as caught:
        load_settings(text, tmp_path)
    _one_line_naming(caught.value, "settings", deep=True)


def test_a_settings_file_that_is_a_folder_is_one_line(tmp_path):
    (tmp_path / "perms.json").mkdir()
    with pytest.raises(ConfigurationError) as caught:
        load_settings(str(tmp_path / "perms.json"), tmp_path)
    _one_line_naming(caught.value, "perms.json")


@pytest.mark.parametrize("content", [
    DEEP.encode(), b'{"folders": {"/x": {"fingerprint": "f", "items": ' + DEEP_VALID.encode()
    + b"}}}", BAD["not UTF-8"]], ids=BAD.keys())
def test_a_trust_store_that_cannot_be_used_reads_as_empty_with_one_line(content):
    store = trust_store_path()
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(content)
    record, problem = lookup_trust("/x")
    assert record is None and problem is not None
    _one_line_naming(Exception(problem), store.name)
    assert "treated as empty" in problem


def test_a_plugin_manifest_that_cannot_be_used_is_one_line(tmp_path):
    from fuxi_notebook._internal.agent.extensions.plugins import load_plugins

    for name, content in BAD.items():
        root = tmp_path / name.replace(" ", "-")
        write_json(root / ".fuxi-plugin" / "plugin.json", "")
        (root / ".fuxi-plugin" / "plugin.json").write_bytes(
            content if isinstance(content, bytes) else content.encode())
        plugins = load_plugins(FuxiAgentOptions(plugins=[{"type": "local", "path": str(root)}]),
                               tmp_path)
        assert not plugins.found
        _one_line_naming(Exception(plugins.errors[0]["error"]), "plugin.json")


# -- files that are skipped with a warning -------------------------------------------------------

def _agent(root: Path) -> Path:
    return write_json(root / ".fuxi" / "agents" / "a.md", "---\ndescription: d\n---\nP\n")


def _command(root: Path) -> Path:
    return write_json(root / ".fuxi" / "commands" / "c.md", "Do it.\n")


def _skill(root: Path) -> Path:
    return write_json(root / ".fuxi" / "skills" / "s" / "SKILL.md",
                      "---\nname: s\ndescription: d\n---\nDo it.\n")


def _load(kind: str, root: Path) -> list[str]:
    """What loading the files of `kind` warned (and it must not raise)."""
    from fuxi_notebook._internal.agent.extensions.commands import load_commands
    from fuxi_notebook._internal.agent.extensions.skill_files import load_skills
    from fuxi_notebook._internal.agent.subagents.files import load_file_agents
    from fuxi_notebook._internal.settings.output_styles import load_output_styles

    options = FuxiAgentOptions(cwd=root, setting_sources=["project"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if kind == "agent":
            assert load_file_agents(options, root) == {}
        elif kind == "command":
            assert load_commands(options, root) == {}
        elif kind == "skill":
            assert load_skills(options, root) == {}
        else:
            styles, said = load_output_styles(["project"], root)
            assert "s" not in styles
            return said
    return [str(w.message) for w in caught]


FILES = {"agent": _agent, "command": _command, "skill": _skill,
         "style": lambda root: write_json(root / ".fuxi" / "output-styles" / "s.md",
                                          "---\nname: s\n---\nBe brief.\n")}


@pytest.mark.parametrize("failure", [RecursionError, MemoryError, ValueError, OSError])
@pytest.mark.parametrize("kind", FILES)
def test_a_markdown_settings_file_that_cannot_be_read_is_skipped_with_one_line(
        tmp_path, monkeypatch, kind, failure):
    """Front matter is read without recursion, but whatever reading it raises (a huge file
    and MemoryError, say), the file is skipped with one line naming it."""
    import fuxi_notebook._internal.settings.front_matter as front_matter

    def broken(text: str) -> Any:
        raise failure("boom")

    for module in ("subagents.files", "extensions.commands", "extensions.skill_files"):
        monkeypatch.setattr(f"fuxi_notebook._internal.agent.{module}.split_front_matter", broken)
    monkeypatch.setattr(front_matter, "split_front_matter", broken)
    path = FILES[kind](tmp_path)
    said = [line for line in _load(kind, tmp_path) if str(path) in line]
    assert len(said) == 1 and said[0].startswith("skipped the "), said
    _one_line_naming(Exception(said[0]), path.name)


@pytest.mark.parametrize("kind", FILES)
def test_a_markdown_settings_file_that_is_not_utf8_is_skipped_with_one_line(tmp_path, kind):
    path = FILES[kind](tmp_path)
    path.write_bytes(b"---\nname: s\ndescription: \xff\n---\nx\n")
    said = [line for line in _load(kind, tmp_path) if str(path) in line]
    assert len(said) == 1 and said[0].startswith("skipped the "), said
    _one_line_naming(Exception(said[0]), path.name)


def test_a_command_folder_nested_too_deeply_is_skipped_with_one_line(tmp_path):
    """`rglob` recurses once per folder level: a checkout can hold a tree deep enough."""
    folders = [tmp_path / ".fuxi" / "commands"]
    folders[0].mkdir(parents=True)
    for _ in range(1000):  # one by one: os.makedirs (and rmtree) recurse per level too
        folders.append(folders[-1] / "a")
        folders[-1].mkdir()
    (folders[-1] / "c.md").write_text("Do it.\n")
    try:
        said = _load("command", tmp_path)
    finally:
        (folders[-1] / "c.md").unlink()
        for folder in reversed(folders):
            folder.rmdir()
    assert len(said) == 1 and said[0].startswith(f"skipped the command folder {folders[0]}: ")
    _one_line_naming(Exception(said[0]), "commands", deep=True)
