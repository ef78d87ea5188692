"""Subagents defined as Markdown files: `.fuxi/agents/*.md` (project, under `cwd`),
`~/.fuxi/agents/*.md` (user) and a local plugin's `agents/*.md`.

A file is front matter between `---` lines, then the prompt::

    ---
    name: reviewer
    description: Reviews a change for bugs. Use after editing code.
    tools: Read, Grep, Glob
    model: haiku
    maxTurns: 8
    ---
    You are a careful code reviewer. ...

The front matter is the simple YAML such files use, read by front_matter.py. A file that
cannot be read is skipped with a warning, never a crash. Project and user files load only
when `setting_sources` names them (as FUXI.md does); plugins load because they were
passed (see plugins.py). Later sources override earlier ones by name: plugins, then
user, then project (and `options.agents` overrides them all).

A file lives in a folder anyone with the repository can write, so it may not widen the
policy: like a definition in code, its `permissionMode` applies only where it approves
nothing more than the parent's mode (subagent_session.py), else a warning says so.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from ....errors import ConfigurationError
from ....options import EFFORT_LEVELS, PERMISSION_MODES, AgentDefinition, FuxiAgentOptions
from ...common.reading import config_errors
from ...permissions.rules import parse_rules
from ...settings.front_matter import FrontMatterError, split_front_matter, split_list
from ..extensions.plugins import Plugins, load_plugins, read_setting_file, setting_folders
from ..project_link import setting_sources

__all__ = ["AgentFileError", "load_file_agents", "parse_agent_file"]

#: `\Z`, not `$` (which also matches before a final newline: "x\n" would pass)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")
_LISTS = frozenset({"tools", "disallowedTools", "skills", "mcpServers"})
#: front-matter spellings -> AgentDefinition fields
_FIELDS = {"disallowed-tools": "disallowedTools", "disallowed_tools": "disallowedTools",
           "max-turns": "maxTurns", "max_turns": "maxTurns",
           "permission-mode": "permissionMode", "permission_mode": "permissionMode",
           "mcp-servers": "mcpServers", "initial-prompt": "initialPrompt"}


class AgentFileError(ValueError):
    """Why an agent file was skipped."""


def parse_agent_file(text: str, *, default_name: str) -> tuple[str, AgentDefinition]:
    """The name and definition in an agent file's text; AgentFileError if malformed."""
    try:
        pairs, body = split_front_matter(text)
    except FrontMatterError as error:
        raise AgentFileError(str(error)) from None
    if pairs is None:
        raise AgentFileError("it does not start with '---' front matter")
    data = {_FIELDS.get(key, key): value for key, value in pairs.items()}
    prompt = body.strip()
    name = str(data.pop("name", "") or default_name)
    if not NAME.match(name):
        raise AgentFileError(f"name {name!r} is not a valid agent name")
    description = data.pop("description", None)
    if not isinstance(description, str) or not description.strip():
        raise AgentFileError("it has no description")
    if not prompt:
        raise AgentFileError("it has no prompt (the text after the front matter)")
    return name, AgentDefinition(description=description.strip(), prompt=prompt,
                                 **_fields(data))


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    """The optional AgentDefinition fields, checked (unknown keys, e.g. `color`, ignored)."""
    fields: dict[str, Any] = {}
    for key in _LISTS & set(data):
        value = data[key]
        fields[key] = value if isinstance(value, list) else split_list(value)
    if data.get("model"):
        fields["model"] = str(data["model"])
    if "maxTurns" in data:
        try:
            fields["maxTurns"] = int(data["maxTurns"])
        except ValueError:
            raise AgentFileError(f"maxTurns {data['maxTurns']!r} is not a number") from None
        if fields["maxTurns"] < 1:
            raise AgentFileError("maxTurns must be at least 1")
    if data.get("effort"):
        if data["effort"] not in EFFORT_LEVELS:
            raise AgentFileError(f"effort must be one of {', '.join(EFFORT_LEVELS)}")
        fields["effort"] = data["effort"]
    mode = data.get("permissionMode")
    if mode:
        if mode not in PERMISSION_MODES:
            raise AgentFileError(f"unknown permissionMode {mode!r}")
        fields["permissionMode"] = mode
    for key in ("initialPrompt", "memory"):
        if data.get(key):
            fields[key] = data[key]
    if "background" in data:
        fields["background"] = str(data["background"]).lower() == "true"
    return fields


def load_file_agents(options: FuxiAgentOptions, cwd: Path,
                     plugins: Plugins | None = None) -> dict[str, AgentDefinition]:
    """The agents defined in files for these options (see the module docstring);
    `plugins`: the session's, already loaded (None: loaded here)."""
    agents: dict[str, AgentDefinition] = {}
    plugins = plugins if plugins is not None else load_plugins(options, cwd)
    for source, _plugin, folder in setting_folders("agents", setting_sources(options),
                                                  plugins, cwd, options.env):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            try:
                with config_errors(str(path)):
                    name, definition = parse_agent_file(read_setting_file(path, source, folder),
                                                        default_name=path.stem)
                    _check_rules(definition, cwd)
            except ConfigurationError as error:  # "<path>: why"
                warnings.warn(f"skipped the agent file {error}", stacklevel=2)
                continue
            agents[name] = definition
    return agents


def _check_rules(definition: AgentDefinition, cwd: Path) -> None:
    """Its disallowedTools must be rules (AgentFileError, so the warning names the file)."""
    try:
        parse_rules(definition.disallowedTools or [], "deny", cwd=cwd)
    except ConfigurationError as error:
        raise AgentFileError(str(error)) from None
