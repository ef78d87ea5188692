"""Slash commands: Markdown files whose text a prompt starting with `/name` stands for.

Where they come from, in the order they load (a later one overrides an earlier one of the
same name):

1. each plugin's `commands/**/*.md` (see plugins.py), named `<plugin>:<name>`;
2. `~/.fuxi/commands/**/*.md`, with `setting_sources` naming "user";
3. `<cwd>/.fuxi/commands/**/*.md`, with `setting_sources` naming "project".

The name is the path below `commands/` without `.md`, folders joined with ":"
(`frontend/component.md` is `/frontend:component`). A plugin's command also answers to its
short name (`/greet` for `demo:greet`) when no other command has that name and no other
plugin has a command of that short name. A file is optional front matter (`description`,
`argument-hint`, `model`, `allowed-tools`), then the text::

    ---
    description: Review a file
    argument-hint: <file> [focus]
    ---
    Review $1 with a focus on $2. Everything that was asked: $ARGUMENTS

A prompt `/name args` becomes the text with `$ARGUMENTS` replaced by `args`, `$1`, `$2`,
... by its words (quotes as in a shell); a text without any placeholder gets the arguments
appended after a blank line. This happens before anything else sees the prompt: the
`UserPromptSubmit` hooks, the model and the transcript all get the expanded text, so a
hook that guards prompts also guards what a command file says. A `/name` that is no
command is sent as written, with an informational message saying so.

`allowed-tools` is read and ignored, with a warning: a command file lives in a folder
anyone with the repository can write, and it must not widen what runs without asking
before the user trusted that folder. A malformed file is skipped with a warning.
"""

from __future__ import annotations

import re
import shlex
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....errors import ConfigurationError
from ....options import FuxiAgentOptions
from ...common.reading import config_errors
from ...common.reminders import REMINDER_OPEN
from ...settings.front_matter import FrontMatterError, split_front_matter, split_list
from ..project_link import setting_sources
from .plugins import Plugins, load_plugins, read_setting_file, setting_folders

__all__ = ["Command", "CommandFileError", "Expansion", "expand_prompt", "find_command",
           "load_commands", "parse_command_file", "prompt_text"]

#: one part of a command's name (a folder or the file's stem)
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")  # `$` would let "x\n" pass
#: `/name` then, after white space, the arguments
_INVOCATION = re.compile(r"^/(\S+)(?:\s+(.*))?\Z", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]*)")
_TEXT_KEYS = ("description", "argument-hint", "model")


class CommandFileError(ValueError):
    """Why a command file was skipped."""


@dataclass(frozen=True)
class Command:
    """A slash command.

    Attributes:
        name: what follows the `/` (`frontend:component`, `<plugin>:greet`).
        text: the prompt it stands for, with its placeholders.
        source: "plugin", "user" or "project".
        path: the file it came from.
        plugin: the plugin's name, for a plugin's command.
        description, argument_hint: what the file says about it, for listings.
        model: the model for runs of this command (None: the session's).
        allowed_tools: what the file asked to allow: recorded, never applied.
    """

    name: str
    text: str
    source: str
    path: Path | None = None
    plugin: str | None = None
    description: str | None = None
    argument_hint: str | None = None
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()

    def expand(self, arguments: str) -> str:
        """The prompt for `/name arguments` (see the module docstring)."""
        arguments = arguments.strip()
        if not _PLACEHOLDER.search(self.text):
            return f"{self.text}\n\n{arguments}" if arguments else self.text
        words = _words(arguments)

        def fill(match: re.Match[str]) -> str:
            if match[1] == "ARGUMENTS":
                return arguments
            number = int(match[1])
            return words[number - 1] if number <= len(words) else ""

        return _PLACEHOLDER.sub(fill, self.text)


def _words(arguments: str) -> list[str]:
    """The arguments split as a shell would (unbalanced quotes: at white space)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def parse_command_file(text: str, *, name: str, source: str, path: Path | None = None,
                       plugin: str | None = None) -> Command:
    """The command in a file's text; CommandFileError if it is malformed."""
    try:
        data, body = split_front_matter(text)
    except FrontMatterError as error:
        raise CommandFileError(str(error)) from None
    data = data or {}
    for key in _TEXT_KEYS:
        if key in data and not isinstance(data[key], str):
            raise CommandFileError(f"{key} must be a single value, not a list")
    body = body.strip()
    if not body:
        raise CommandFileError("it has no text (the prompt the command stands for)")
    allowed = data.get("allowed-tools") or []
    model = data.get("model") or None
    return Command(name=name, text=body, source=source, path=path, plugin=plugin,
                   description=data.get("description") or None,
                   argument_hint=data.get("argument-hint") or None,
                   model=None if model == "inherit" else model,
                   allowed_tools=tuple(allowed if isinstance(allowed, list)
                                       else split_list(allowed)))


def _name(relative: Path, plugin: str | None) -> str:
    parts = relative.with_suffix("").parts
    bad = [part for part in parts if not _PART.match(part)]
    if bad:
        raise CommandFileError(f"{bad[0]!r} cannot be part of a command name (letters, "
                               "digits, '.', '_', '-')")
    return ":".join([plugin, *parts] if plugin else parts)


def load_commands(options: FuxiAgentOptions, cwd: Path,
                  plugins: Plugins | None = None) -> dict[str, Command]:
    """The commands of these options, by name (see the module docstring)."""
    plugins = plugins if plugins is not None else load_plugins(options, cwd)
    commands: dict[str, Command] = {}
    for source, owner, folder in setting_folders("commands", setting_sources(options),
                                                 plugins, cwd, options.env):
        plugin = owner.name if owner is not None else None
        if not folder.is_dir():
            continue
        try:
            with config_errors(f"the command folder {folder}"):  # rglob recurses per level
                # not only regular files: a FIFO or a device is read, refused and named
                paths = sorted(p for p in folder.rglob("*.md") if not p.is_dir())
        except ConfigurationError as error:
            warnings.warn(f"skipped {error}", stacklevel=2)
            continue
        for path in paths:
            try:
                with config_errors(str(path)):
                    name = _name(path.relative_to(folder), plugin)
                    command = parse_command_file(read_setting_file(path, source, folder),
                                                 name=name, source=source, path=path,
                                                 plugin=plugin)
            except ConfigurationError as error:  # "<path>: why"
                warnings.warn(f"skipped the command file {error}", stacklevel=2)
                continue
            if command.allowed_tools:
                warnings.warn(f"the command file {path} sets allowed-tools "
                              f"({', '.join(command.allowed_tools)}); it is ignored: a file "
                              "may not widen what is allowed, so its calls are approved as "
                              "any other", stacklevel=2)
            commands[name] = command
    return commands


def find_command(commands: dict[str, Command], name: str) -> tuple[Command | None, str]:
    """The command `/name` stands for, or None and why there is none."""
    if name in commands:
        return commands[name], ""
    short = [c for c in commands.values() if c.plugin and c.name == f"{c.plugin}:{name}"]
    if len(short) == 1:
        return short[0], ""
    if short:
        names = ", ".join(sorted(f"/{c.name}" for c in short))
        return None, (f"/{name} is ambiguous ({names}): the prompt was sent to the model as "
                      "written; name the plugin's command in full")
    known = ", ".join(f"/{n}" for n in sorted(commands)) or "none"
    return None, (f"There is no command /{name}: the prompt was sent to the model as "
                  f"written (commands: {known}).")


@dataclass
class Expansion:
    """A prompt after command expansion: its content, the command it ran (None: it named
    no command) and notes for the user."""

    content: str | list[dict[str, Any]]
    command: Command | None = None
    notes: list[str] = field(default_factory=list)


def expand_prompt(content: str | list[dict[str, Any]],
                  commands: dict[str, Command]) -> Expansion:
    """`/name args` replaced by the command's text; anything else as it is. In a content
    list, the first text block counts (context blocks added before it are skipped)."""
    index, text = prompt_text(content)
    match = _INVOCATION.match(text) if text is not None else None
    if match is None or not all(_PART.match(part) for part in match[1].split(":")):
        return Expansion(content)  # not a command: `/usr/bin/env` is a path, say
    command, why = find_command(commands, match[1])
    if command is None:
        return Expansion(content, notes=[why])
    expanded = command.expand(match[2] or "")
    if index is None or isinstance(content, str):
        return Expansion(expanded, command)
    blocks = list(content)
    blocks[index] = {**blocks[index], "text": expanded}
    return Expansion(blocks, command)


def prompt_text(content: str | list[dict[str, Any]]) -> tuple[int | None, str | None]:
    """The prompt's text and its block's index (None for a plain string)."""
    if isinstance(content, str):
        return None, content
    for index, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = block.get("text")
        if isinstance(text, str) and not text.startswith(REMINDER_OPEN):
            return index, text
    return None, None
