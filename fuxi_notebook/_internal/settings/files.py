"""The settings files of the three sources, read and checked one by one.

- "user": `~/.fuxi/settings.json` (`FUXI_CONFIG_DIR` if set), the user's own;
- "project": `<root>/.fuxi/settings.json`, the repository's, shared through git;
- "local": `<root>/.fuxi/settings.local.json`, the repository's, not meant to be shared
  (but a checkout can hold one all the same, so it is no more trusted than "project").

Keys read: `permissions` (see `permissions/settings.py`), `model`, `env`, `outputStyle`,
`hooks` (`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
"...", "timeout": 60}]}]}`), `disableAllHooks` and `apiKeyHelper` (a shell command that
prints the API key: `key_helper_setting.py`). Files written for the comparable tool
have many more keys: an unknown key, a hook event or hook type this package does not run,
is ignored with a warning, never an error. Invalid JSON, or a wrong type for a key that is
read, is a `ConfigurationError` naming the file and the key. Nothing here decides what
applies: that is `project.py`, after trust.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...hooks import HOOK_EVENTS, HookMatcher, HookRunner
from ...options import PERMISSION_MODES
from ..common.config_folder import project_folder
from ..common.reading import Outside, parse_json, read_config
from ..permissions.settings import PermissionSettings, permissions_from
from .command_hooks import CommandSpec

__all__ = ["SETTINGS_KEYS", "SOURCES", "SourceSettings", "check_sources", "read_source",
           "settings_path", "user_folder"]

#: the setting sources, from the least to the most specific (a later one wins a scalar)
SOURCES: tuple[str, ...] = ("user", "project", "local")
#: the keys of a settings file this package reads
SETTINGS_KEYS = frozenset({"permissions", "model", "env", "outputStyle", "hooks",
                           "disableAllHooks", "apiKeyHelper"})
_QUIET_KEYS = frozenset({"$schema"})
_HOOK_KEYS = frozenset({"type", "command", "timeout"})
#: a settings file larger than this is refused (no real one comes close)
MAX_SETTINGS_CHARS = 1 << 20


def user_folder() -> Path:
    """The user's settings folder: `FUXI_CONFIG_DIR`, else `~/.fuxi` (pinned at `%load_ext`
    in a kernel, else read on each call: `switches.config_dir`)."""
    from ..common.switches import config_dir

    return config_dir()


def check_sources(sources: object) -> tuple[str, ...]:
    """The sources named, in precedence order (user, project, local), checked."""
    if isinstance(sources, str) or not isinstance(sources, list | tuple | set | frozenset):
        raise ConfigurationError(f"setting_sources must be a list of {', '.join(SOURCES)}; "
                                 f"not {sources!r}")
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise ConfigurationError(f"unknown setting source {unknown[0]!r}; expected one of "
                                 f"{', '.join(SOURCES)}")
    return tuple(s for s in SOURCES if s in sources)


def settings_path(source: str, root: Path) -> Path:
    """Where `source`'s settings file is, for a project in `root`."""
    if source == "user":
        return user_folder() / "settings.json"
    name = "settings.json" if source == "project" else "settings.local.json"
    return project_folder(root) / name


@dataclass
class SourceSettings:
    """What one settings file says, checked; `root` anchors its `/path` rules and relative
    `additionalDirectories` (the user folder for "user", the project folder otherwise)."""

    source: str
    path: Path
    root: Path
    permissions: PermissionSettings
    model: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    output_style: str | None = None
    hooks: list[CommandSpec] = field(default_factory=list)
    disable_all_hooks: bool = False
    warnings: list[str] = field(default_factory=list)
    api_key_helper: str | None = None


def read_source(source: str, root: Path) -> SourceSettings | None:
    """The settings file of `source` (None when it has none). A project's file must stay
    inside `root` (a symlink out of it is skipped with a warning)."""
    path = settings_path(source, root)
    anchor = user_folder() if source == "user" else root
    try:
        text = read_config(path, None if source == "user" else root, MAX_SETTINGS_CHARS,
                           "settings file")
    except Outside as why:
        return SourceSettings(source, path, anchor, PermissionSettings(root=anchor),
                              warnings=[f"skipped the settings file: {why}"])
    if text is None:
        return None
    return parse_settings(text, source=source, path=path, root=anchor)


def parse_settings(text: str, *, source: str, path: Path, root: Path) -> SourceSettings:
    """A settings file's text, checked (see the module docstring)."""
    data = parse_json(text, f"settings file {path}") if text.strip() else {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"settings file {path}: expected a JSON object, not "
                                 f"{type(data).__name__}")
    where = f"settings file {path}"
    permissions, warnings = permissions_from(data.get("permissions"), root=root, where=where,
                                             strict=False)
    mode = permissions.default_mode
    if mode is not None and mode not in PERMISSION_MODES:
        raise ConfigurationError(f"{where}: permissions.defaultMode {mode!r} is not a mode; "
                                 f"expected one of {', '.join(PERMISSION_MODES)}")
    unknown = sorted(set(data) - SETTINGS_KEYS - _QUIET_KEYS)
    if unknown:
        warnings.append(f"{where}: key(s) {', '.join(unknown)} are not supported here and "
                        "were ignored")
    settings = SourceSettings(source, path, root, permissions,
                              model=_text(data, "model", where),
                              env=_env(data.get("env"), where),
                              output_style=_text(data, "outputStyle", where),
                              warnings=warnings,
                              api_key_helper=_text(data, "apiKeyHelper", where))
    disable = data.get("disableAllHooks", False)
    if not isinstance(disable, bool):
        raise ConfigurationError(f"{where}: disableAllHooks must be true or false")
    settings.disable_all_hooks = disable
    settings.hooks = _hooks(data.get("hooks"), where, warnings)
    return settings


def _text(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigurationError(f"{where}: {key} must be a non-empty string, not {value!r}")
    return value


def _env(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigurationError(f"{where}: env must be an object of strings")
    for name, item in value.items():
        if not name or "=" in name or "\0" in name:
            raise ConfigurationError(f"{where}: env name {name!r} is not a variable name")
        if not isinstance(item, str):
            raise ConfigurationError(f"{where}: env.{name} must be a string, not "
                                     f"{type(item).__name__}")
    return dict(value)


def _hooks(section: object, where: str, warnings: list[str]) -> list[CommandSpec]:
    if section is None:
        return []
    if not isinstance(section, dict):
        raise ConfigurationError(f"{where}: hooks must be an object of event -> list")
    specs: list[CommandSpec] = []
    for event, entries in section.items():
        if event not in HOOK_EVENTS:
            warnings.append(f"{where}: hook event {event!r} is not supported here; its hooks "
                            f"were ignored{_did_you_mean(event)}")
            continue
        key = f"hooks.{event}"
        if not isinstance(entries, list):
            raise ConfigurationError(f"{where}: {key} must be a list of "
                                     '{"matcher": ..., "hooks": [...]}')
        for index, entry in enumerate(entries):
            specs += _entry(event, entry, f"{key}[{index}]", where, warnings)
    return specs


def _entry(event: str, entry: object, key: str, where: str,
           warnings: list[str]) -> list[CommandSpec]:
    if not isinstance(entry, dict):
        raise ConfigurationError(f"{where}: {key} must be an object with 'hooks'")
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise ConfigurationError(f"{where}: {key}.matcher must be a string")
    try:
        HookRunner({event: [HookMatcher(matcher, [])]})  # the matcher must compile
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}: {key}.matcher: {error}") from None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        raise ConfigurationError(f"{where}: {key}.hooks must be a list of "
                                 '{"type": "command", "command": ...}')
    specs = []
    for index, hook in enumerate(hooks):
        here = f"{key}.hooks[{index}]"
        if not isinstance(hook, dict):
            raise ConfigurationError(f"{where}: {here} must be an object")
        kind = hook.get("type", "command" if "command" in hook else None)
        if kind != "command":
            warnings.append(f"{where}: {here} has type {kind!r}; only 'command' hooks run "
                            "here, so it was ignored")
            continue
        extra = sorted(set(hook) - _HOOK_KEYS)
        if extra:
            warnings.append(f"{where}: {here}: key(s) {', '.join(extra)} are not supported "
                            "here and were ignored")
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ConfigurationError(f"{where}: {here}.command must be a non-empty string")
        specs.append(CommandSpec(event, matcher, command, _timeout(hook, here, where)))
    return specs


def _timeout(hook: dict[str, Any], key: str, where: str) -> float | None:
    value = hook.get("timeout")
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or value <= 0):
        raise ConfigurationError(f"{where}: {key}.timeout must be a positive number of "
                                 f"seconds, not {value!r}")
    return float(value)


def _did_you_mean(event: object) -> str:
    if not isinstance(event, str):
        return ""
    lowered = {name.lower(): name for name in HOOK_EVENTS}
    close = difflib.get_close_matches(event.lower(), list(lowered), n=1, cutoff=0.75)
    return f" (did you mean {lowered[close[0]]!r}?)" if close else ""
