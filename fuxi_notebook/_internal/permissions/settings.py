"""Permission rules from `options.settings`: a settings file path or inline JSON.

Shape: `{"permissions": {"allow": [...], "deny": [...], "ask": [...],
"defaultMode": "...", "additionalDirectories": [...]}}`. Rules written `/path` in a
settings file are relative to its project root: the folder holding `.fuxi/`, else the
file's folder. Inline JSON and options rules use the session cwd.

`permissions_from` reads one `permissions` section; `load_settings` uses it strictly
(an unknown key is an error), the settings sources of `fuxi_notebook._internal.settings` leniently
(an unknown key is a warning: files written for the comparable tool have more keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..common.config_folder import PROJECT_FOLDER

__all__ = ["PERMISSION_KEYS", "PermissionSettings", "load_settings", "permissions_from"]

#: the keys of a `permissions` section this package reads
PERMISSION_KEYS = frozenset({"allow", "deny", "ask", "defaultMode", "additionalDirectories"})


@dataclass
class PermissionSettings:
    """The `permissions` section of a settings source and the root its rules anchor to."""

    root: Path
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    default_mode: str | None = None
    directories: list[str] = field(default_factory=list)
    #: where the rules come from, as `%fuxi permissions` names it (a file's path)
    origin: str = ""


def _read(source: str, cwd: Path) -> tuple[dict[str, Any], Path]:
    from ..common.reading import parse_json, read_json_file

    text = source.strip()
    if text.startswith("{"):
        return parse_json(text, "settings (inline JSON)"), cwd
    path = Path(source).expanduser()
    path = path if path.is_absolute() else cwd / path
    data = read_json_file(path, f"settings file {str(path)!r}")
    root = path.parent.parent if path.parent.name == PROJECT_FOLDER else path.parent
    return data, root


def _strings(section: dict[str, Any], key: str, where: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{where}: permissions.{key} must be a list of strings")
    return list(value)


def permissions_from(section: object, *, root: Path, where: str,
                     strict: bool = True) -> tuple[PermissionSettings, list[str]]:
    """The `permissions` section `section` (None = none) of a source read from `where`,
    and warnings. `strict`: an unknown key is a ConfigurationError; else it is ignored
    with a warning. A wrong type is always a ConfigurationError naming `where` and the key.
    """
    if section is None:
        return PermissionSettings(root=root), []
    if not isinstance(section, dict):
        raise ConfigurationError(f"{where}: 'permissions' must be an object")
    unknown = sorted(set(section) - PERMISSION_KEYS)
    warnings: list[str] = []
    if unknown and strict:
        raise ConfigurationError(f"{where}: unknown permissions key(s) {', '.join(unknown)}; "
                                 f"expected {', '.join(sorted(PERMISSION_KEYS))}")
    if unknown:
        warnings.append(f"{where}: permissions key(s) {', '.join(unknown)} are not supported "
                        "here and were ignored")
    mode = section.get("defaultMode")
    if mode is not None and not isinstance(mode, str):
        raise ConfigurationError(f"{where}: permissions.defaultMode must be a string")
    return PermissionSettings(
        root=root, allow=_strings(section, "allow", where), deny=_strings(section, "deny", where),
        ask=_strings(section, "ask", where), default_mode=mode,
        directories=_strings(section, "additionalDirectories", where)), warnings


def load_settings(source: str | None, cwd: Path) -> PermissionSettings:
    """Read the permissions of `source` (None = no settings)."""
    if source is None:
        return PermissionSettings(root=cwd)
    data, root = _read(source, cwd)
    where = "settings"
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where}: expected a JSON object")
    settings, _ = permissions_from(data.get("permissions", {}), root=root, where=where)
    shown = source.strip()
    settings.origin = ("options.settings (inline JSON)" if shown.startswith("{")
                       else f"options.settings {shown}")
    return settings
