"""Skills as folders: `<folder>/SKILL.md` plus whatever else the folder holds (scripts,
references). Found in a local plugin's `skills/*/` (named `<plugin>:<skill>`), in
`~/.fuxi/skills/*/` (setting source "user") and `<cwd>/.fuxi/skills/*/` ("project");
later sources override earlier ones by name: plugins, then user, then project.

`SKILL.md` is front matter, then the instructions::

    ---
    name: csv-summary
    description: Summarise a CSV file. Use when asked what a CSV holds.
    ---
    1. Read the file's first lines ...

`name` defaults to the folder's name; `description` is required (it is all the model sees
until it uses the skill); a file without instructions is malformed. A malformed skill is
skipped with a warning, never a crash.

Which skills load: `options.skills` None = every skill the sources give; "all" = the same;
a list = only those names; [] = none. The sources are the session's `setting_sources`
(None = every source, as for all settings).

Trust: a skill's folder may come with a repository, so its `allowed-tools` are never
applied (they would widen what runs without asking before anyone trusted the folder), nor
is its `model`; both warn.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from ....errors import ConfigurationError
from ....options import FuxiAgentOptions
from ...common.reading import config_errors
from ...settings.front_matter import FrontMatterError, split_front_matter
from ..project_link import setting_sources
from .plugins import FolderSource, Plugins, load_plugins, read_setting_file, setting_folders

__all__ = ["SKILL_FILE", "SkillFile", "SkillFileError", "load_skills", "read_instructions"]

SKILL_FILE = "SKILL.md"
Source = FolderSource
#: a skill's own name: no spaces, parentheses, `*` or `:` (rules and plugins use those)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # `$` would let "x\n" pass
#: a name in `options.skills`: a skill's, or `<plugin>:<skill>`
_LISTED = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*:)?[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_IGNORED = ("allowed-tools", "model")


class SkillFileError(ValueError):
    """Why a skill was skipped."""


@dataclass(frozen=True)
class SkillFile:
    """A skill that loaded (its instructions are read again when it is used)."""

    name: str
    description: str
    folder: Path
    source: Source

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE


def parse_skill(text: str, *, default_name: str) -> tuple[str, str, str, dict[str, object]]:
    """Name, description, instructions and the other front-matter fields of a SKILL.md;
    SkillFileError if malformed."""
    try:
        pairs, body = split_front_matter(text)
    except FrontMatterError as error:
        raise SkillFileError(str(error)) from None
    if pairs is None:
        raise SkillFileError("it does not start with '---' front matter")
    name = str(pairs.pop("name", "") or default_name)
    if not _NAME.match(name):
        raise SkillFileError(f"name {name!r} is not a valid skill name (letters, digits, "
                             "'.', '_', '-'; at most 64)")
    description = pairs.pop("description", None)
    if not isinstance(description, str) or not description.strip():
        raise SkillFileError("it has no description")
    if not body.strip():
        raise SkillFileError("it has no instructions (the text after the front matter)")
    return name, " ".join(description.split()), body.strip(), pairs


def read_instructions(skill: SkillFile) -> str:
    """The skill's instructions as the file says now; SkillFileError if it no longer can."""
    try:
        with config_errors(str(skill.path)):
            text = read_setting_file(skill.path, skill.source, skill.folder)
            return parse_skill(text, default_name=skill.folder.name)[2]
    except ConfigurationError as error:
        raise SkillFileError(str(error)) from None


def _found(options: FuxiAgentOptions, cwd: Path, plugins: Plugins) -> dict[str, SkillFile]:
    skills: dict[str, SkillFile] = {}
    for source, plugin, root in setting_folders("skills", setting_sources(options), plugins,
                                                cwd, options.env):
        prefix = f"{plugin.name}:" if plugin is not None else ""
        if not root.is_dir():
            continue
        for path in sorted(root.glob(f"*/{SKILL_FILE}")):
            try:
                with config_errors(str(path)):
                    name, description, _body, rest = parse_skill(
                        read_setting_file(path, source, path.parent),
                        default_name=path.parent.name)
            except ConfigurationError as error:  # "<path>: why"
                warnings.warn(f"skipped the skill {error}", stacklevel=3)
                continue
            ignored = [key for key in _IGNORED if rest.get(key)]
            if ignored:
                warnings.warn(
                    f"the skill {path} sets {' and '.join(ignored)}, which are not applied: "
                    "a skill's folder may come with a repository, so it may not change which "
                    "tools run without asking, nor the model", stacklevel=3)
            skills[prefix + name] = SkillFile(prefix + name, description, path.parent,
                                              source)
    return skills


def load_skills(options: FuxiAgentOptions, cwd: Path,
                plugins: Plugins | None = None) -> dict[str, SkillFile]:
    """The skills these options make available, by name (see the module docstring);
    `plugins`: the session's, already loaded (None: loaded here)."""
    wanted = options.skills
    if wanted is not None and wanted != "all" and not isinstance(wanted, list | tuple):
        raise ConfigurationError(f"skills must be None, 'all' or a list of skill names, "
                                 f"not {wanted!r}")
    if isinstance(wanted, list | tuple):
        bad = [n for n in wanted if not isinstance(n, str) or not _LISTED.match(n)]
        if bad:
            raise ConfigurationError(f"skills: {bad[0]!r} is not a skill name (letters, "
                                     "digits, '.', '_', '-', or '<plugin>:<skill>')")
        if not wanted:
            return {}
    found = _found(options, cwd, plugins if plugins is not None else load_plugins(options, cwd))
    if not isinstance(wanted, list | tuple):
        return found
    missing = [name for name in wanted if name not in found]
    if missing:
        warnings.warn(f"skills {missing} were not found (found: {sorted(found) or 'none'})",
                      stacklevel=3)
    return {name: skill for name, skill in found.items() if name in wanted}
