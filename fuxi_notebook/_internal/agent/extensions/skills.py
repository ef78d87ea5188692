"""The Skill tool: the model loads a skill's instructions when a task calls for them.

A skill (`skill_files.py`) is a folder with `SKILL.md`. The tool's description lists only
each skill's name and description, so the prompt stays small however many skills exist;
a call returns the instructions, the folder's path and the other files in it, which the
model then reads with Read as the instructions say. The tool is offered when a skill is
available (or `options.tools` names it).

Kind `read`, reaching the skill's `SKILL.md`: Read deny and ask rules apply to it, and a
project skill is a read inside the working directory, approved as such (a SKILL.md that
leads out of it, by a symlink, asks). Skills from the user's own sources, `~/.fuxi/skills`
and the plugins passed in `options.plugins`, are the user's choice, not the model's: the
session allows each of them with a rule `Skill(<name>)` (as the comparable SDK's `skills=`
option adds one), so they need no approval although they lie outside. `Skill(<name>)`
rules of the user's decide per skill (deny, ask, allow); "Always allow" adds one.

A skill's `allowed-tools` are never applied (see `skill_files.py`): its files may come
with a repository nobody has trusted yet.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...permissions.rules import parse_rules
from ...tools.base import DeclaredTool, Reach, ToolContext, ToolError, ToolOutput
from ...tools.registry import ToolRegistry
from .skill_files import SKILL_FILE, SkillFile, SkillFileError, load_skills, read_instructions

if TYPE_CHECKING:
    from ...permissions.engine import PermissionEngine

__all__ = ["SKILL_TOOL", "SkillTool", "grant_skills", "skill_names", "skill_tools"]

SKILL_TOOL = "Skill"
#: how many of a skill's other files an answer lists
MAX_FILES = 50
#: how much of a description the listing shows
_MAX_DESCRIPTION = 1024
#: folders a listing does not descend into
_SKIPPED = frozenset({".git", "__pycache__", "node_modules", ".venv"})

_ABOUT = """\
Load a skill: a folder of instructions (sometimes with scripts or reference files) for one \
kind of task. When the task at hand matches a skill's description below, call this tool \
with the skill's name first, then follow the instructions it returns; they name the \
skill's folder and its other files, which you read with Read when the instructions need \
them. `args` passes optional arguments to the skill. Do not load a skill that is already \
loaded in this conversation.

Available skills:
"""


def skill_tools(session: Any, extra_tools: list[Any]) -> list[SkillTool]:
    """The Skill tool for this session, or nothing: it is offered when a skill is
    available or `options.tools` names it (a subagent gets its parent's, in
    `extra_tools`)."""
    if any(getattr(tool, "name", None) == SKILL_TOOL for tool in extra_tools):
        return []
    options = session.options
    skills = load_skills(options, session.cwd, session.plugins)
    named = isinstance(options.tools, list) and SKILL_TOOL in options.tools
    return [SkillTool(skills)] if skills or named else []


def grant_skills(permissions: PermissionEngine, tools: list[Any]) -> None:
    """Allow the skills of the user's own sources (user, plugins) with `Skill(<name>)`
    rules: reading them needs no approval (see the module docstring)."""
    tool = next((t for t in tools if isinstance(t, SkillTool)), None)
    if tool is None:
        return
    granted = [f"{SKILL_TOOL}({name})" for name, skill in tool.skills.items()
               if skill.source != "project"]
    permissions.rules["allow"].extend(parse_rules(granted, "allow", cwd=permissions.cwd))


def skill_names(registry: ToolRegistry) -> list[str]:
    """The skills the session's Skill tool offers (for the init message)."""
    tool = registry.get(SKILL_TOOL)
    return list(tool.skills) if isinstance(tool, SkillTool) else []


def _listing(skills: dict[str, SkillFile]) -> str:
    if not skills:
        return "(none: no skills are available in this session)"
    lines = []
    for name, skill in skills.items():
        description = skill.description
        if len(description) > _MAX_DESCRIPTION:
            description = description[:_MAX_DESCRIPTION - 1] + "…"
        lines.append(f"- {name}: {description}")
    return "\n".join(lines)


def _other_files(folder: Path, ctx: ToolContext) -> list[str]:
    """The folder's files besides SKILL.md, relative, sorted; symlinked folders are not
    followed, and files a Read deny rule covers are left out (as Glob does)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        for name in files:
            path = Path(root) / name
            if path == folder / SKILL_FILE:
                continue
            if ctx.read_denied is not None and ctx.read_denied(path, SKILL_TOOL):
                continue
            found.append(path.relative_to(folder).as_posix())
    return sorted(found)


def _answer(skill: SkillFile, instructions: str, files: list[str], args: str | None) -> str:
    lines = [f'Skill "{skill.name}" loaded. Its folder: {skill.folder}']
    if files:
        lines.append("Its other files (relative to that folder; read them with Read when "
                     "the instructions need them):")
        lines.extend(f"- {name}" for name in files[:MAX_FILES])
        if len(files) > MAX_FILES:
            lines.append(f"(and {len(files) - MAX_FILES} more; list the folder to see them)")
    else:
        lines.append("It holds no other files.")
    if args and "$ARGUMENTS" in instructions:
        instructions = instructions.replace("$ARGUMENTS", args)
    elif args:
        lines.append(f"Arguments: {args}")
    return "\n".join([*lines, "", instructions])


class SkillTool(DeclaredTool):
    """Loads a skill's instructions for the model (see the module docstring)."""

    name = SKILL_TOOL
    kind = "read"

    def __init__(self, skills: dict[str, SkillFile]) -> None:
        self.skills = skills
        self.description = _ABOUT + _listing(skills)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The skill's name (listed above)"},
                "args": {"type": "string", "description": "Arguments for the skill "
                                                          "(optional)"},
            },
            "required": ["skill"],
        }

    def reach(self, input: dict[str, Any]) -> Reach:
        """The skill's SKILL.md (an unknown skill: nothing, the call only fails)."""
        skill = self.skills.get(input.get("skill", ""))
        return Reach(reads=(str(skill.path),)) if skill is not None else Reach()

    def always_allow(self, input: dict[str, Any]) -> str:
        """This skill, not every skill."""
        name = input.get("skill")
        return f"{SKILL_TOOL}({name})" if name in self.skills else SKILL_TOOL

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """The skill's instructions, with its folder and other files."""
        name = input["skill"]
        skill = self.skills.get(name)
        if skill is None:
            available = ", ".join(self.skills) or "none"
            raise ToolError(f"Unknown skill {name!r}. Available skills: {available}.")
        try:
            instructions = read_instructions(skill)
        except SkillFileError as error:
            raise ToolError(f"The skill {name!r} cannot be used now: {error}") from None
        return ToolOutput(_answer(skill, instructions, _other_files(skill.folder, ctx),
                                  input.get("args")))
