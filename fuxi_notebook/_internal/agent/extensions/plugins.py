"""Local plugins: the folders `options.plugins = [{"type": "local", "path": ...}]` names.

A plugin folder holds `agents/`, `commands/` (and `skills/`) like a project's `.fuxi/`;
its name is the folder's name, or `name` in `.fuxi-plugin/plugin.json` (which may also give
a `version`). Plugins load whatever `setting_sources` says: the user named them in code.

A plugin that cannot be used (no such folder, a bad `plugin.json`, an entry that is not a
local plugin) is reported, never raised: the init message lists it under
`plugin_errors`, and the rest of the session works without it. A relative path is taken
from `cwd`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ....options import FuxiAgentOptions
from ...common.config_folder import project_folder

__all__ = ["MANIFEST", "FolderSource", "Plugin", "Plugins", "load_plugins", "setting_folders"]

#: where a setting file comes from: a plugin, ~/.fuxi ("user") or the project's .fuxi
FolderSource = Literal["plugin", "user", "project"]

#: where a plugin's manifest lives, below its folder
MANIFEST = Path(".fuxi-plugin") / "plugin.json"
#: a plugin's name: it prefixes its commands (`<plugin>:<command>`)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")  # `$` would let "x\n" pass


@dataclass(frozen=True)
class Plugin:
    """A plugin folder that loaded."""

    name: str
    root: Path
    version: str | None = None

    def listed(self) -> dict[str, str]:
        """As the init message lists it."""
        entry = {"name": self.name, "path": str(self.root)}
        return entry | ({"version": self.version} if self.version else {})


@dataclass
class Plugins:
    """The plugins of a session, in the order given, and those that failed (with why)."""

    found: list[Plugin] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)


def load_plugins(options: FuxiAgentOptions, cwd: Path) -> Plugins:
    """The session's plugins (see the module docstring)."""
    plugins = Plugins()
    for entry in options.plugins or []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or entry.get("type") != "local" or not isinstance(
                path, str | Path) or not str(path):
            plugins.errors.append({"path": str(path or entry), "error": (
                "not a local plugin: expected {'type': 'local', 'path': ...}")})
            continue
        root = Path(path).expanduser()
        root = root if root.is_absolute() else cwd / root
        try:
            plugins.found.append(_plugin(root))
        except _PluginError as error:
            plugins.errors.append({"path": str(root), "error": str(error)})
    return plugins


class _PluginError(ValueError):
    """Why a plugin folder cannot be used."""


def _plugin(root: Path) -> Plugin:
    if not root.is_dir():
        raise _PluginError("the plugin folder does not exist")
    manifest = _manifest(root / MANIFEST)
    name = manifest.get("name", root.name)
    if not isinstance(name, str) or not _NAME.match(name):
        raise _PluginError(f"plugin name {name!r} is not a valid name (letters, digits, "
                           "'.', '_', '-')")
    version = manifest.get("version")
    return Plugin(name=name, root=root, version=version if isinstance(version, str) else None)


def _manifest(path: Path) -> dict[str, Any]:
    """The plugin.json object ({} when the plugin has none)."""
    from ....errors import ConfigurationError
    from ...common.reading import read_json_file

    if not path.exists():
        return {}
    try:
        data = read_json_file(path, f"{MANIFEST} cannot be read")
    except ConfigurationError as error:
        raise _PluginError(str(error)) from None
    if not isinstance(data, dict):
        raise _PluginError(f"{MANIFEST} must hold a JSON object")
    return data


#: the most of a command, skill or agent file that is read
MAX_SETTING_FILE_CHARS = 200_000


def read_setting_file(path: Path, source: str, folder: Path) -> str:
    """The text of a command, skill or agent file found in `folder`. A project's file
    comes with a repository: it must resolve inside `folder` (`cmd.md -> ~/.ssh/id_rsa`
    would put a private key into the prompt), be a regular file and not be huge. Raises
    OSError or UnicodeDecodeError saying why it was not read."""
    from ...common.reading import Outside, read_inside

    try:
        read = read_inside(path, folder if source == "project" else None,
                           MAX_SETTING_FILE_CHARS)
    except Outside as why:
        raise OSError(str(why)) from None
    if read is None:
        raise OSError(f"{path} does not exist")
    if read.truncated:
        raise OSError(f"{path} is larger than {MAX_SETTING_FILE_CHARS} characters")
    return read.text


def setting_folders(kind: str, sources: list[str], plugins: Plugins, cwd: Path,
                    env: dict[str, str] | None = None
                    ) -> list[tuple[FolderSource, Plugin | None, Path]]:
    """Where files of `kind` ("agents", "commands", "skills") load from, as (source,
    plugin, folder), in loading order (a later name overrides an earlier one): each
    plugin's `<kind>/`, then `~/.fuxi/<kind>` ("user" in `sources`), then
    `<cwd>/.fuxi/<kind>` ("project"). `env`: the session's, which may name another user
    folder (FUXI_CONFIG_DIR)."""
    folders: list[tuple[FolderSource, Plugin | None, Path]] = [
        ("plugin", plugin, plugin.root / kind) for plugin in plugins.found]
    if "user" in sources:
        from ...common.switches import config_dir, config_dir_of  # ~/.fuxi, or FUXI_CONFIG_DIR

        with config_dir_of(env):
            folders.append(("user", None, config_dir() / kind))
    if "project" in sources:
        folders.append(("project", None, project_folder(cwd) / kind))
    return folders
