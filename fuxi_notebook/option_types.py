"""The shapes of option values, as TypedDicts under the comparable SDK's names.

`FuxiAgentOptions` takes plain dicts for these (`system_prompt`, `tools`, `thinking`,
`plugins`, ...); the TypedDicts let code written against the comparable SDK annotate and
build them as before. Which of them have an effect here is said on each; the README's
compatibility table lists the same. This module imports nothing from the package.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

__all__ = [
    "SandboxIgnoreViolations",
    "SandboxNetworkConfig",
    "SandboxSettings",
    "SdkBeta",
    "SdkPluginConfig",
    "SystemPromptCustom",
    "SystemPromptFile",
    "SystemPromptPreset",
    "TaskBudget",
    "ThinkingConfig",
    "ThinkingConfigAdaptive",
    "ThinkingConfigDisabled",
    "ThinkingConfigEnabled",
    "ThinkingDisplay",
    "ToolsPreset",
]


class SystemPromptPreset(TypedDict):
    """The built-in agent prompt (`preset` "fuxi_code"; "claude_code" is accepted as the
    same), with text appended."""

    type: Literal["preset"]
    preset: str
    append: NotRequired[str]
    exclude_dynamic_sections: NotRequired[bool]
    snapshot: NotRequired[bool]


class SystemPromptCustom(TypedDict):
    """A prompt of your own, replacing the built-in one."""

    type: Literal["custom"]
    prompt: str
    snapshot: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """A prompt read from a file at startup."""

    type: Literal["file"]
    path: str


class ToolsPreset(TypedDict):
    """All built-in tools (`preset` "fuxi_code" or "claude_code")."""

    type: Literal["preset"]
    preset: str


ThinkingDisplay = Literal["summarized", "omitted"]


class ThinkingConfigAdaptive(TypedDict):
    """The model decides how much to think (the API's `thinking: {"type": "adaptive"}`)."""

    type: Literal["adaptive"]
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigEnabled(TypedDict):
    """Extended thinking with a token budget (at least 1,024)."""

    type: Literal["enabled"]
    budget_tokens: int
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigDisabled(TypedDict):
    """No extended thinking."""

    type: Literal["disabled"]


ThinkingConfig = ThinkingConfigAdaptive | ThinkingConfigEnabled | ThinkingConfigDisabled


class TaskBudget(TypedDict):
    """An API-side token budget for a task; accepted, not sent (no effect here)."""

    total: int


#: Beta features the comparable SDK's CLI can switch on; accepted, no effect here.
SdkBeta = Literal["context-1m-2025-08-07"]


class SdkPluginConfig(TypedDict):
    """A local plugin folder (its `agents/` are loaded as subagents)."""

    type: Literal["local"]
    path: str


class SandboxNetworkConfig(TypedDict, total=False):
    """The comparable SDK's sandbox network settings; no effect here (network access of
    tools is decided by `WebFetch(domain:...)` rules)."""

    allowedDomains: list[str]
    deniedDomains: list[str]
    allowManagedDomainsOnly: bool
    allowUnixSockets: list[str]
    allowAllUnixSockets: bool
    allowLocalBinding: bool
    allowMachLookup: list[str]
    httpProxyPort: int
    socksProxyPort: int


class SandboxIgnoreViolations(TypedDict, total=False):
    """Sandbox violations to ignore; no effect here."""

    file: list[str]
    network: list[str]


class SandboxSettings(TypedDict, total=False):
    """The comparable SDK's OS sandbox for Bash; no effect here: commands are decided by
    the permission engine's analysis of each command (see the README)."""

    enabled: bool
    autoAllowBashIfSandboxed: bool
    excludedCommands: list[str]
    allowUnsandboxedCommands: bool
    network: SandboxNetworkConfig
    ignoreViolations: SandboxIgnoreViolations
    enableWeakerNestedSandbox: bool
