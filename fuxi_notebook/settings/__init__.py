"""A project's settings: its sources, what needs trust, and hook commands.

Modules: files.py (the settings files of the "user", "project" and "local" sources, checked),
memory.py (FUXI.md), output_styles.py, gate.py (what needs trust, described as it would
run), trust.py (the trust store and fingerprints), command_hooks.py (hook commands as
`HookMatcher` callbacks), reading.py (bounded reads that never follow a symlink out of the
project), project.py (`load_project_settings`, the one entry point).

The rule this package exists for: nothing from a repository's `.fuxi/` (or `.mcp.json`)
that runs code or widens what runs without asking takes effect until the user trusted
that folder with exactly that content, and what it would enable is shown first. A cloned
repository cannot make the agent run anything on its own.
"""

from __future__ import annotations

from .command_hooks import (
    CommandHook,
    CommandResult,
    CommandSpec,
    HookCommandError,
    command_matchers,
    run_command,
)
from .files import SOURCES, check_sources, settings_path, user_folder
from .gate import HeldBack, HeldBackKind
from .memory import MAX_MEMORY_CHARS, MemoryFile, git_root, load_memory, nested_memory
from .output_styles import (
    BUILTIN_STYLES,
    OutputStyle,
    OutputStyleChoice,
    choose_output_style,
    load_output_styles,
)
from .project import ProjectSettings, TrustChanges, load_project_settings, trust_project
from .trust import (
    STORE_NAME,
    TrustRecord,
    TrustStoreWarning,
    fingerprint_of,
    forget_folder,
    is_trusted,
    trust_folder,
    trust_store_path,
    trusted_record,
)

__all__ = [
    "BUILTIN_STYLES",
    "MAX_MEMORY_CHARS",
    "SOURCES",
    "STORE_NAME",
    "CommandHook",
    "CommandResult",
    "CommandSpec",
    "HeldBack",
    "HeldBackKind",
    "HookCommandError",
    "MemoryFile",
    "OutputStyle",
    "OutputStyleChoice",
    "ProjectSettings",
    "TrustChanges",
    "TrustRecord",
    "TrustStoreWarning",
    "check_sources",
    "choose_output_style",
    "command_matchers",
    "fingerprint_of",
    "forget_folder",
    "git_root",
    "is_trusted",
    "load_memory",
    "load_output_styles",
    "load_project_settings",
    "nested_memory",
    "run_command",
    "settings_path",
    "trust_folder",
    "trust_project",
    "trust_store_path",
    "trusted_record",
    "user_folder",
]
