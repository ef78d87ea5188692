"""One entry point: a project's settings from its sources, with what needs trust held back.

    project = load_project_settings(["user", "project", "local"], cwd)
    if project.needs_trust:
        show(project.describe())              # every held-back item, exactly
        if user_says_yes():
            project = trust_project(project)  # stored; applied from the same reading

`load_project_settings` reads every file once; nothing it returns has run anything. What
applies depends on trust (see `gate.py` for what needs it and why): the content of the
"project" and "local" sources that runs code or widens access applies only when the folder
was trusted with exactly that content (`trust.py`), the rest always. Precedence: local >
project > user for `model`, `outputStyle` and `defaultMode` (among the values that apply);
rules, directories and hooks add up; `env` is merged, a later source winning per key; deny
and ask rules of every source always apply.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ...hooks import HookMatcher
from ..common.reading import note, remembered
from ..mcp_servers.config import McpServerConfig
from ..permissions.modes import NARROW_MODES
from ..permissions.settings import PermissionSettings
from .command_hooks import CommandSpec, command_matchers
from .files import SourceSettings, check_sources, read_source, user_folder
from .gate import (
    HeldBack,
    McpFile,
    directory_of,
    gated_items,
    mcp_items,
    read_mcp_file,
)
from .key_helper_setting import KeyHelperSetting, declared_key_helpers
from .memory import MemoryFile, load_memory
from .output_styles import OutputStyleChoice, choose_output_style
from .trust import fingerprint_of, folder_key, lookup_trust, trust_folder

__all__ = ["ProjectSettings", "TrustChanges", "load_project_settings", "trust_project"]

HookErrors = Literal["block", "continue"]


@dataclass(frozen=True)
class TrustChanges:
    """How the code-running content differs from what the folder was trusted with: lines
    added and removed (both empty when only a redacted value changed)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class _Reading:
    """Everything read from disk, once; building from it again reads nothing."""

    sources: tuple[str, ...]
    root: Path
    files: tuple[SourceSettings, ...]
    mcp: McpFile | None
    memory: tuple[MemoryFile, ...]
    style: OutputStyleChoice
    warnings: tuple[str, ...]
    hook_errors: HookErrors


@dataclass
class ProjectSettings:
    """A project's effective settings.

    Attributes:
        root: the project folder (resolved).
        sources: the sources read, in precedence order.
        trusted: whether the content that needs trust applied (True also when there is
            none); `needs_trust`: there is such content and it was held back.
        fingerprint: of the content that needs trust (what `trust_folder` stores).
        gated: every item that needs trust; `held_back`: those not applied.
        trust_changes: when the folder was trusted with other content: what changed.
        permissions: the rules that apply, one `PermissionSettings` per source (its
            `root` anchors `/path` rules); `directories`: extra working directories.
        mode, model, output_style: the effective values (None: not set);
            `model_source`: which source set the model.
        env: variables for the API client and commands; `hooks`: for `HookRunner`;
            `hook_commands`: the commands behind them; `mcp_servers`: from `.mcp.json`.
        memory: the FUXI.md files read, in prompt order.
        warnings: what was ignored or skipped, one line each, for the user.
        files: the settings files read.
        api_key_helpers: every `apiKeyHelper` declared, the most specific first, each
            saying whether it applies (`key_helper_setting.api_key_helper` chooses).
    """

    root: Path
    sources: tuple[str, ...]
    trusted: bool
    needs_trust: bool
    fingerprint: str
    gated: list[HeldBack]
    held_back: list[HeldBack]
    trust_changes: TrustChanges | None
    permissions: list[PermissionSettings]
    directories: list[Path]
    mode: str | None
    model: str | None
    model_source: str | None
    output_style: OutputStyleChoice
    env: dict[str, str]
    hooks: dict[str, list[HookMatcher]]
    hook_commands: list[CommandSpec]
    mcp_servers: dict[str, McpServerConfig]
    memory: list[MemoryFile]
    warnings: list[str]
    files: list[Path]
    api_key_helpers: tuple[KeyHelperSetting, ...]
    _reading: _Reading = field(repr=False, compare=False)

    def rules(self, behavior: str) -> list[str]:
        """The rules of one behavior ("allow", "deny", "ask") of every source, as text."""
        return [rule for p in self.permissions for rule in getattr(p, behavior)]

    def memory_blocks(self) -> list[str]:
        """The memory texts as the system prompt holds them."""
        return [memory.block() for memory in self.memory]

    def describe(self) -> str:
        """What trusting the folder would apply, for the user to read before deciding."""
        if not self.needs_trust:
            return f"Nothing in {self.root} needs trust."
        lines = [f"The settings of {self.root} would run code or widen what runs without "
                 "asking. Not applied until you trust this folder:"]
        lines += [f"  - {item.line()}" for item in self.held_back]
        if self.trust_changes is not None:
            lines.append("It was trusted before with other content. Changed since:")
            lines += [f"  + {line}" for line in self.trust_changes.added]
            lines += [f"  - {line}" for line in self.trust_changes.removed]
        return "\n".join(lines)


def load_project_settings(sources: Iterable[str], root: Path | str, *,
                          trusted: bool | None = None, output_style: str | None = None,
                          hook_errors: HookErrors = "block") -> ProjectSettings:
    """The settings of `sources` ("user", "project", "local") for a session in `root`.

    `trusted`: None = as the trust store says for this content; True / False = decided by
    the caller. `output_style` (an explicit option) wins over the files' `outputStyle`.
    `hook_errors`: how a failing hook command counts (see `command_hooks.py`). Raises
    `ConfigurationError` for an unusable file, naming it and the key.
    """
    names = check_sources(list(sources))
    base = Path(folder_key(root))
    user = user_folder()
    reading = remembered(("project settings", names, base, user, output_style, hook_errors),
                         lambda: _read(names, base, user, output_style, hook_errors))
    return _build(reading, trusted)


def _read(names: tuple[str, ...], base: Path, user: Path, output_style: str | None,
          hook_errors: HookErrors) -> _Reading:
    """Every file of the sources, read (a warm process keeps the reading while the files
    stay as they were: common/reading.py)."""
    warnings: list[str] = []
    files: list[SourceSettings] = []
    for source in names:
        found = read_source(source, base)
        if found is None:
            continue
        if source != "user" and _same_file(found.path, user / "settings.json"):
            continue  # the project is the user folder's parent (root = home)
        files.append(found)
        warnings += found.warnings
    mcp = read_mcp_file(base, warnings) if "project" in names else None
    memory, memory_warnings = load_memory(names, base, user_folder=user)
    chosen = output_style or next((f.output_style for f in reversed(files) if f.output_style),
                                  None)
    style = choose_output_style(chosen, names, base, user_folder=user)
    return _Reading(names, base, tuple(files), mcp, tuple(memory), style,
                    tuple([*warnings, *memory_warnings, *style.warnings]), hook_errors)


def trust_project(settings: ProjectSettings) -> ProjectSettings:
    """Record that the user trusts `settings.root` with the content they were shown, and
    return the settings with it applied, built from the same reading (a file changed
    since then is not applied: it was not shown)."""
    if settings.gated:
        trust_folder(settings.root, settings.fingerprint,
                     items=[item.line() for item in settings.gated])
    return _build(settings._reading, True)


def _same_file(one: Path, other: Path) -> bool:
    note(one)
    note(other)
    try:
        return one.exists() and other.exists() and one.samefile(other)
    except OSError:
        return False


def _build(reading: _Reading, trusted: bool | None) -> ProjectSettings:
    gated = [item for f in reading.files if f.source != "user" for item in gated_items(f)]
    gated += mcp_items(reading.mcp) if reading.mcp is not None else []
    fingerprint = fingerprint_of([item.raw for item in gated])
    warnings = list(reading.warnings)
    changes = None
    if not gated:
        applies = True
    elif trusted is not None:
        applies = trusted
    else:
        record, problem = lookup_trust(reading.root)
        warnings += [problem] if problem else []
        applies = record is not None and record.fingerprint == fingerprint
        if record is not None and not applies:
            now = [item.line() for item in gated]
            changes = TrustChanges(tuple(x for x in now if x not in record.items),
                                   tuple(x for x in record.items if x not in now))
    permissions, directories, env, commands = [], [], {}, []
    mode = model = model_source = None
    for source in reading.files:
        full = applies or source.source == "user"
        ps = source.permissions
        source_mode = ps.default_mode if full or ps.default_mode in NARROW_MODES else None
        permissions.append(replace(ps, allow=list(ps.allow) if full else [],
                                   deny=list(ps.deny), ask=list(ps.ask),  # the reading's
                                   directories=list(ps.directories) if full else [],
                                   default_mode=source_mode,
                                   origin=f"{source.source} settings {source.path}"))
        if full:
            directories += [directory_of(source, d) for d in ps.directories]
            env.update(source.env)
            commands += source.hooks
        mode = source_mode or mode
        if source.model:
            model, model_source = source.model, source.source
    if any(source.disable_all_hooks for source in reading.files):
        commands = []
    servers = reading.mcp.servers if reading.mcp is not None and applies else {}
    return ProjectSettings(
        root=reading.root, sources=reading.sources, trusted=applies,
        needs_trust=not applies, fingerprint=fingerprint, gated=gated,
        held_back=[] if applies else gated, trust_changes=changes, permissions=permissions,
        directories=directories, mode=mode, model=model, model_source=model_source,
        output_style=reading.style, env=env,
        hooks=command_matchers(commands, root=reading.root, env=env,
                               on_error=reading.hook_errors),
        hook_commands=commands, mcp_servers=copy.deepcopy(servers),  # the reading's
        memory=list(reading.memory),
        warnings=warnings,
        files=[f.path for f in reading.files] + ([reading.mcp.path] if reading.mcp else []),
        api_key_helpers=declared_key_helpers(reading.files, trusted=applies),
        _reading=reading)
