"""A session's project settings (settings/): read once, applied to its options.

`setting_sources` None means every source, as in the comparable SDK ("user", "project",
"local"); `[]` means none. What the sources hold reaches a session in three ways:
- `with_project` gives the options the session runs under: the settings' `env` under the
  options' own, their hook commands after the options' hooks, their `model` when the
  options name none;
- the permission engine takes their rules, directories and mode (`engine_settings`);
- the owner of the MCP servers (a query, a client, a kernel) adds `.mcp.json`'s servers
  (`project_servers`), unless `strict_mcp_config`.
Whatever needs trust and was not trusted is held back by settings/project.py; the first
run says what (`held_back_note`), and `trust_project_settings` is how Python code trusts a
folder (the notebook shows a card instead).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ...options import FuxiAgentOptions
from ..settings.project import ProjectSettings, load_project_settings, trust_project

__all__ = ["DEFAULT_SOURCES", "held_back_note", "load_project", "project_servers",
           "setting_sources", "trust_project_settings", "with_project"]

DEFAULT_SOURCES = ("user", "project", "local")


def setting_sources(options: FuxiAgentOptions) -> list[str]:
    """The sources a session reads (None = all of them)."""
    if options.setting_sources is None:
        return list(DEFAULT_SOURCES)
    return list(options.setting_sources)


def _cwd(options: FuxiAgentOptions) -> Path:
    return (Path(options.cwd).expanduser() if options.cwd is not None else Path.cwd()).resolve()


def load_project(options: FuxiAgentOptions, *, trusted: bool | None = None) -> ProjectSettings:
    """The project settings of a session with `options` (its `cwd`, and the user folder
    its `env` names)."""
    from ..common.switches import config_dir_of

    with config_dir_of(options.env):
        return load_project_settings(setting_sources(options), _cwd(options), trusted=trusted)


def with_project(options: FuxiAgentOptions, project: ProjectSettings) -> FuxiAgentOptions:
    """The options a session runs under: the settings under the options' own."""
    hooks: dict[str, list[Any]] = {event: list(matchers)
                                   for event, matchers in (options.hooks or {}).items()}
    for event, matchers in project.hooks.items():
        hooks.setdefault(event, []).extend(matchers)
    model = options.model
    if model is None and project.model and not options.env.get("ANTHROPIC_MODEL"):
        model = project.model
    return dataclasses.replace(options, env={**project.env, **options.env},
                               hooks=hooks or options.hooks, model=model)


def project_servers(options: FuxiAgentOptions, project: ProjectSettings | None) -> Any:
    """`options.mcp_servers` plus `.mcp.json`'s trusted servers (the options' own win a
    name; `strict_mcp_config` = the options' only)."""
    own = options.mcp_servers
    if project is None or not project.mcp_servers or options.strict_mcp_config:
        return own
    if not isinstance(own, dict):  # a file or JSON string: read it, then add to it
        from ..mcp_servers import parse_mcp_servers

        own = parse_mcp_servers(own, base=_cwd(options))
    return {**project.mcp_servers, **own}


def held_back_note(project: ProjectSettings) -> str | None:
    """What the session runs without, and how to trust the folder (None: nothing)."""
    if not project.needs_trust:
        return None
    return (f"{project.describe()}\nTo apply them, trust the folder once: "
            f"fuxi_notebook.trust_project_settings({str(project.root)!r}) in Python, or the "
            "card a %%fuxi cell shows.")


def trust_project_settings(cwd: str | Path = ".", *,
                           setting_sources: list[str] | None = None) -> str:
    """Trust the project in `cwd` with what its settings hold now: hook commands, MCP
    servers, allow rules, modes, directories and env then apply to later sessions there,
    until they change (a changed file is held back again until trusted again). Returns
    what was trusted, the text a user should have read first."""
    sources = list(DEFAULT_SOURCES if setting_sources is None else setting_sources)
    project = load_project_settings(sources, Path(cwd).expanduser().resolve())
    text = project.describe() if project.needs_trust else (
        f"Nothing in {project.root} needed trust.")
    trust_project(project)
    return text
