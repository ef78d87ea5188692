"""Every name validator rejects a trailing newline (issue 18, finding 12): `$` matches just
before a final "\\n", so `re.match(r"^[a-z]+$", "db\\n")` passes; the validators use `\\Z` or
`fullmatch`. MCP server and tool names have their own tests in tests/mcp/test_names.py."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from fuxi_notebook import AgentDefinition, FuxiAgentOptions
from fuxi_notebook._internal.agent.extensions.commands import load_commands
from fuxi_notebook._internal.agent.extensions.plugins import Plugins, load_plugins
from fuxi_notebook._internal.agent.extensions.skill_files import (
    SkillFileError,
    load_skills,
    parse_skill,
)
from fuxi_notebook._internal.agent.subagents.agent_tool import catalog
from fuxi_notebook._internal.agent.subagents.files import AgentFileError, parse_agent_file
from fuxi_notebook._internal.models.wire_check import request_problem
from fuxi_notebook.errors import ConfigurationError


def _agent_file(name: str, _: Path) -> object:
    return parse_agent_file("---\ndescription: d\n---\nPrompt.\n", default_name=name)


def _skill_file(name: str, _: Path) -> object:
    return parse_skill("---\ndescription: d\n---\nDo it.\n", default_name=name)


def _listed_skill(name: str, cwd: Path) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "skills ['name'] were not found": none is there
        return load_skills(FuxiAgentOptions(cwd=cwd, skills=[name]), cwd)


def _options_agent(name: str, cwd: Path) -> object:
    options = FuxiAgentOptions(cwd=cwd, agents={name: AgentDefinition(description="d",
                                                                      prompt="p")})
    return catalog(SimpleNamespace(options=options, cwd=cwd, plugins=Plugins()))


def _plugin(name: str, cwd: Path) -> object:
    root = cwd / "plugin"
    (root / ".fuxi-plugin").mkdir(parents=True)
    (root / ".fuxi-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    plugins = load_plugins(FuxiAgentOptions(plugins=[{"type": "local", "path": str(root)}]), cwd)
    if plugins.errors:
        raise ValueError(plugins.errors[0]["error"])
    return plugins


def _command_file(name: str, cwd: Path) -> object:
    folder = cwd / ".fuxi" / "commands"
    folder.mkdir(parents=True)
    (folder / f"{name}.md").write_text("Do it.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        commands = load_commands(FuxiAgentOptions(cwd=cwd, setting_sources=["project"]), cwd)
    if name not in commands:
        raise ValueError(f"{name!r} was not loaded")
    return commands


def _api_tool(name: str, _: Path) -> object:
    problem = request_problem({"messages": [{"role": "user", "content": "hi"}], "tools": [
        {"name": name, "description": "d", "input_schema": {"type": "object"}}]})
    if problem:
        raise ValueError(problem[1])
    return None


#: each validator, through the function that uses it, and what it raises for a bad name
VALIDATORS: dict[str, tuple[Callable[[str, Path], object], type[Exception]]] = {
    "agent file name (agent_files.NAME)": (_agent_file, AgentFileError),
    "options.agents name (subagents, agent_files.NAME)": (_options_agent, ConfigurationError),
    "skill name (skill_files._NAME)": (_skill_file, SkillFileError),
    "options.skills entry (skill_files._LISTED)": (_listed_skill, ConfigurationError),
    "plugin name (plugins._NAME)": (_plugin, ValueError),
    "command name (commands._PART)": (_command_file, ValueError),
    "API tool name (wire_check._TOOL_NAME)": (_api_tool, ValueError),
}


@pytest.mark.parametrize("check", VALIDATORS.values(), ids=VALIDATORS.keys())
def test_a_name_with_a_trailing_newline_is_refused(tmp_path, check):
    validate, refused = check
    validate("name", tmp_path / "ok")  # the same name without it is fine
    (tmp_path / "bad").mkdir()
    with pytest.raises(refused):
        validate("name\n", tmp_path / "bad")
