"""FuxiAgentOptions and the permission result types users write in callbacks.

Field names follow the seed (and the comparable SDK) so that examples run unchanged.
Only plain data lives here; behaviour lives in `agent/`, `permissions/` and `models/`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import ConfigurationError

if TYPE_CHECKING:
    from ._internal.models.base import Model
    from .hooks import HookMatcher

__all__ = [
    "NO_EFFECT",
    "AgentDefinition",
    "CanUseTool",
    "EffortLevel",
    "FuxiAgentOptions",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PermissionUpdateError",
    "SettingSource",
    "ToolPermissionContext",
    "check_permission_update",
]

PermissionMode = Literal["default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions"]
SettingSource = Literal["user", "project", "local"]
EffortLevel = Literal["low", "medium", "high", "xhigh", "max"]
PERMISSION_MODES: tuple[str, ...] = (
    "default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions",
)
EFFORT_LEVELS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")


@dataclass
class PermissionRuleValue:
    """One rule: a tool name and an optional specifier, e.g. `Bash` + `npm test *`."""

    tool_name: str
    rule_content: str | None = None

    def __str__(self) -> str:
        if self.rule_content is None:
            return self.tool_name
        return f"{self.tool_name}({self.rule_content})"

    @classmethod
    def from_text(cls, text: str) -> PermissionRuleValue:
        """`"Bash(ls -la)"` -> PermissionRuleValue("Bash", "ls -la")."""
        name, paren, rest = text.partition("(")
        if paren and rest.endswith(")"):
            return cls(name, rest[:-1])
        return cls(text)


PermissionBehavior = Literal["allow", "deny", "ask"]
#: where an update is kept; every destination lasts for the session here (no settings file
#: is written), as `session` does in the comparable SDK
PermissionUpdateDestination = Literal["userSettings", "projectSettings", "localSettings",
                                      "session"]
_RULE_TYPES = ("addRules", "replaceRules", "removeRules")
_DIRECTORY_TYPES = ("addDirectories", "removeDirectories")
_UPDATE_TYPES = (*_RULE_TYPES, "setMode", *_DIRECTORY_TYPES)
_BEHAVIORS = ("allow", "deny", "ask")
_DESTINATIONS = ("userSettings", "projectSettings", "localSettings", "session")


class PermissionUpdateError(ConfigurationError, ValueError):
    """A permission update that cannot be applied (a field it needs is missing or not of
    its kind). A ValueError too, as the comparable SDK raises one from `to_dict()`."""


@dataclass
class PermissionUpdate:
    """A change to the permission state requested by a `can_use_tool` answer (or a
    PermissionRequest hook's `updatedPermissions`).

    `addRules` / `replaceRules` / `removeRules` need `rules` and `behavior`, `setMode`
    needs `mode`, `addDirectories` / `removeDirectories` need `directories`; an update
    without what it needs is refused whole (`PermissionUpdateError`), as the comparable
    SDK 0.2.189 refuses it. Every destination lasts for the session: no settings file is
    written. A rule may also be given as its text (`"Bash(npm test *)"`).
    """

    type: Literal[
        "addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"
    ]
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def to_dict(self) -> dict[str, Any]:
        """The update in the comparable SDK's wire form (camelCase); raises
        `PermissionUpdateError` (a ValueError) when a field it needs is missing."""
        check_permission_update(self)
        wire: dict[str, Any] = {"type": self.type}
        if self.destination is not None:
            wire["destination"] = self.destination
        if self.type in _RULE_TYPES:
            wire["rules"] = [_rule_to_wire(rule) for rule in self.rules or []]
            wire["behavior"] = self.behavior
        elif self.type == "setMode":
            wire["mode"] = self.mode
        else:
            wire["directories"] = list(self.directories or [])
        return wire

    @classmethod
    def from_dict(cls, data: Any) -> PermissionUpdate:
        """The update of a wire-form dict (`to_dict`'s inverse, and what a
        PermissionRequest hook's `updatedPermissions` holds), checked."""
        if not isinstance(data, dict):
            raise PermissionUpdateError(
                f"a permission update must be a dict, not {type(data).__name__}")
        rules = data.get("rules")
        if isinstance(rules, list):
            rules = [_rule_from_wire(rule) for rule in rules]
        update = cls(type=data.get("type"), rules=rules,  # type: ignore[arg-type]
                     behavior=data.get("behavior"), mode=data.get("mode"),
                     directories=data.get("directories"), destination=data.get("destination"))
        return check_permission_update(update)


def _rule_to_wire(rule: PermissionRuleValue | str) -> dict[str, Any]:
    value = rule if isinstance(rule, PermissionRuleValue) else PermissionRuleValue.from_text(rule)
    wire: dict[str, Any] = {"toolName": value.tool_name}
    if value.rule_content is not None:
        wire["ruleContent"] = value.rule_content
    return wire


def _rule_from_wire(rule: Any) -> Any:
    """A wire rule `{"toolName", "ruleContent"?}` as a PermissionRuleValue (anything else
    is left for the check to refuse)."""
    if isinstance(rule, dict) and isinstance(rule.get("toolName"), str):
        content = rule.get("ruleContent")
        return PermissionRuleValue(rule["toolName"], content)
    return rule


def check_permission_update(update: Any) -> PermissionUpdate:
    """`update` if it can be applied; else `PermissionUpdateError`, one line naming the
    update's type and what is wrong. Checks the shape only: the rules' own syntax and the
    mode's availability are the permission engine's to check (before it applies any)."""
    if not isinstance(update, PermissionUpdate):
        raise PermissionUpdateError(
            f"a permission update must be a PermissionUpdate, not {type(update).__name__}")
    kind = update.type
    if kind not in _UPDATE_TYPES:
        raise PermissionUpdateError(f"permission update type {kind!r} is not one of "
                                    f"{', '.join(_UPDATE_TYPES)}")
    if update.destination is not None and update.destination not in _DESTINATIONS:
        raise PermissionUpdateError(f"{kind} destination {update.destination!r} is not one "
                                    f"of {', '.join(_DESTINATIONS)}")
    if kind in _RULE_TYPES:
        _check_rules(kind, update.rules, update.behavior)
    elif kind == "setMode":
        if update.mode not in PERMISSION_MODES:
            raise PermissionUpdateError(f"setMode needs mode, one of {', '.join(PERMISSION_MODES)}"
                                        f" (got {update.mode!r})")
    elif not isinstance(update.directories, list) or not all(
            isinstance(d, str | Path) and str(d).strip() for d in update.directories):
        raise PermissionUpdateError(f"{kind} needs directories, a list of paths (got "
                                    f"{update.directories!r:.80})")
    return update


def _check_rules(kind: str, rules: Any, behavior: Any) -> None:
    if behavior not in _BEHAVIORS:
        raise PermissionUpdateError(f"{kind} needs behavior, one of {', '.join(_BEHAVIORS)} "
                                    f"(got {behavior!r:.80})")
    if not isinstance(rules, list):
        raise PermissionUpdateError(f"{kind} needs rules, a list of PermissionRuleValue "
                                    f"(got {rules!r:.80})")
    for rule in rules:
        name = rule.tool_name if isinstance(rule, PermissionRuleValue) else (
            rule if isinstance(rule, str) else None)
        content = rule.rule_content if isinstance(rule, PermissionRuleValue) else None
        if not isinstance(name, str) or not name.strip() or not (
                content is None or isinstance(content, str)):
            raise PermissionUpdateError(f"{kind} rule {rule!r:.80} is not a "
                                        "PermissionRuleValue(tool_name, rule_content)")


@dataclass
class ToolPermissionContext:
    """What the loop knows about a pending tool call, handed to `can_use_tool`."""

    tool_use_id: str | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    decision_reason: str | None = None
    signal: Any = None
    agent_id: str | None = None
    blocked_path: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    #: an ask rule or a critical path asks: no mode, rule or recorded decision approves it
    hard_ask: bool = False
    #: what the call will do beyond its input, as its tool declares it (RunCell: the code
    #: it runs, the cell's source now); an approver shows it, and the call runs exactly it
    shown: dict[str, str] = field(default_factory=dict)


@dataclass
class PermissionResultAllow:
    """Allow the call, optionally with changed input and permission updates."""

    behavior: Literal["allow"] = "allow"
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None


@dataclass
class PermissionResultDeny:
    """Deny the call; `message` reaches the model; `interrupt` also ends the run."""

    behavior: Literal["deny"] = "deny"
    message: str = ""
    interrupt: bool = False


PermissionResult = PermissionResultAllow | PermissionResultDeny
CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]


@dataclass
class AgentDefinition:
    """A subagent the model can hand work to through the Agent tool (field names as the
    comparable SDK spells them, camelCase included, so definitions carry over).

    Attributes:
        description: when to use it (the model reads this to decide).
        prompt: the subagent's system prompt.
        tools: the tools it may use (None = the parent's tools, without Agent).
        disallowedTools: tools taken away (`mcp__server`, `mcp__server__*` allowed).
        model: a model id, "inherit" or None (= the parent's model).
        maxTurns: its own turn limit.
        effort: its reasoning effort.
        permissionMode: its permission mode (None = the parent's).
        mcpServers: the parent's MCP servers it may use, by name (None = all), and
            servers of its own, as `{name: config}` entries: started for each of its
            calls, stopped when the call ends (only here in code, not in agent files).
        skills, memory, initialPrompt, background: accepted for compatibility.
    """

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None
    model: str | None = None
    skills: list[str] | None = None
    memory: Literal["user", "project", "local"] | None = None
    mcpServers: list[str | dict[str, Any]] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: EffortLevel | int | None = None
    permissionMode: PermissionMode | None = None


@dataclass
class FuxiAgentOptions:
    """Everything that configures an agent run. Every field is optional.

    Attributes:
        tools: built-in tools offered to the model (None or `{"type": "preset", "preset":
            "fuxi_code"}` = all built-ins).
        allowed_tools: rules that auto-approve calls, e.g. `"Read"`, `"Bash(git status)"`.
        disallowed_tools: rules that always deny; a bare name removes the tool.
        system_prompt: None = the built-in agent prompt; a string replaces it;
            `{"type": "preset", "preset": "fuxi_code", "append": "..."}` adds to it;
            `{"type": "custom", "prompt": ...}` / `{"type": "file", "path": ...}`. The
            prompt is built at the session's first request and kept for the session;
            `"snapshot": False` (preset or custom form) builds it again before every
            request (FUXI.md read again, the shell's current directory).
        permission_mode: see `PermissionMode`; None = "default".
        can_use_tool: async approval callback for calls no rule decides.
        max_turns: maximum tool-use round trips (None = unlimited).
        max_budget_usd: stop before a model request once the running cost reaches this.
        model: a model id, or a `Model` instance (e.g. ScriptedModel); None = `FUXI_MODEL`
            or the package default.
        effort: reasoning effort, sent as the API's `output_config.effort`.
        thinking: extended thinking config, sent as the API's `thinking` parameter.
        max_thinking_tokens: shorthand for `thinking={"type":"enabled","budget_tokens":N}`.
        max_output_tokens: `max_tokens` per model request (None = package default).
        cwd: working directory of the tools (None = the process's cwd).
        add_dirs: extra directories the agent may work in.
        env: extra environment variables for shell commands.
        include_partial_messages: also yield raw `StreamEvent`s.
        setting_sources: where project memory is loaded from: "project" = FUXI.md in
            `cwd`, "user" = ~/.fuxi/FUXI.md (None = neither).
        settings: a settings file path or inline JSON whose `permissions` section adds
            allow / deny / ask rules, `defaultMode` and `additionalDirectories`.
        hooks: callbacks per event, e.g. `{"PreToolUse": [HookMatcher("Bash", [cb])]}`.
        output_format: `{"type": "json_schema", "schema": {...}}` or a pydantic model
            class: the final answer must match it and arrives as
            `ResultMessage.structured_output` (see `agent/structured.py`).
        stderr: called with a line for each model request, response and tool call (the
            comparable SDK passes its CLI's stderr lines here).
        user: accepted for compatibility; the comparable SDK runs its CLI as this OS user,
            and there is no CLI here, so it has no effect.
        extra_args: accepted for compatibility (the comparable SDK's extra CLI flags);
            there is no CLI here, so a non-empty value warns that it has no effect.
        mcp_servers: MCP servers whose tools the model may call, `{name: config}` (an
            in-process server from `create_sdk_mcp_server`, a stdio `command`, or an HTTP
            `url`), or a JSON string / file path of `{"mcpServers": {...}}`.
        strict_mcp_config: use only `mcp_servers` (no `.mcp.json` from the project).
        agents: subagents the model may start with the Agent tool, `{name: AgentDefinition}`.
        forward_subagent_text: also yield the subagents' text and thinking (by default only
            their tool calls and results), each tagged with `parent_tool_use_id`.
        continue_conversation: go on with the most recent session of `cwd`.
        resume: go on with this session id.
        session_id: the id of a new session (a UUID).
        fork_session: with `resume` / `continue_conversation`, go on under a new id and
            leave the original as it was.
        resume_session_at: with `resume`, load the history only up to this message uuid.
        resume_drops_turn: with `resume_session_at`, the uuid of the prompt whose turn the
            cut drops. The resume is refused (a `ProcessError` saying "Resume rejected by
            --resume-drops-turn: …") unless everything after the cut is that one turn.
        session_store: where sessions are kept (a `SessionStore`; None = files under
            `~/.fuxi/projects/`).
        plugins: `{"type": "local", "path": ...}` folders with agents, commands and skills.
        session_store_flush: how a `session_store` gets each run: "batched" (when it
            ends) or "eager" (in the background as it goes); the end of a run is written
            before its result either way. The local files (no `session_store`) are
            written behind as turns end (in batches of the turns ending within 50 ms),
            and at the end.
        load_timeout_ms: how long loading a session from `session_store` may take.
        persist_session: False = this session is not saved anywhere (nothing to resume).
        permission_prompts: "host" = calls no rule decides go to `can_use_tool`; "none" =
            they are denied at once, and `can_use_tool` is never called.
        skills: which skills the Skill tool offers: None = those the setting sources
            find, "all", a list of names, or [] = none (see agent/skill_files.py).
        verbatim_prompts: send every prompt as typed: no `/command` expansion, no
            `/compact` (the loop never expands `@path` nor attaches anything to a prompt).
        context_window: the context window in tokens (None = the model's, from
            `context/windows.py`; `FUXI_CONTEXT_WINDOW` sets it too). Smaller than the
            model's is allowed: it compacts earlier and keeps requests cheaper.
        auto_compact: compact the conversation when a request would near the window
            (False = never on its own; `/compact` still works).
        web_fetch_private_hosts: host names, IPs or networks (CIDR) WebFetch may reach
            although they are private, loopback or link-local (refused otherwise).
        web_search_allowed_domains / web_search_blocked_domains: the domains WebSearch
            may search (or never searches); at most one of the two. A call narrows them.

    The comparable SDK's options for its CLI and its platform (`cli_path`,
    `max_buffer_size`, `debug_stderr`, `fallback_model`, `betas`, `sandbox`, ...) are
    accepted, so code written for it runs; `NO_EFFECT` says why each does nothing here,
    and setting one warns.
    """

    tools: list[str] | dict[str, Any] | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | dict[str, Any] | None = None
    permission_mode: PermissionMode | None = None
    can_use_tool: CanUseTool | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    model: str | Model | None = None
    effort: EffortLevel | None = None
    thinking: dict[str, Any] | None = None
    max_thinking_tokens: int | None = None
    max_output_tokens: int | None = None
    cwd: str | Path | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    include_partial_messages: bool = False
    setting_sources: list[SettingSource] | None = None
    settings: str | None = None
    hooks: dict[str, list[HookMatcher]] | None = None
    output_format: dict[str, Any] | type | None = None
    stderr: Callable[[str], None] | None = None
    user: str | None = None
    extra_args: dict[str, str | None] = field(default_factory=dict)
    mcp_servers: dict[str, Any] | str | Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    agents: dict[str, AgentDefinition] | None = None
    forward_subagent_text: bool = False
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    session_store: Any = None
    plugins: list[dict[str, Any]] = field(default_factory=list)
    session_store_flush: Literal["batched", "eager"] = "batched"
    load_timeout_ms: int = 60_000
    persist_session: bool = True
    permission_prompts: Literal["host", "none"] = "host"
    skills: list[str] | str | None = None
    verbatim_prompts: bool = False
    context_window: int | None = None
    auto_compact: bool = True
    web_fetch_private_hosts: list[str] = field(default_factory=list)
    web_search_allowed_domains: list[str] | None = None
    web_search_blocked_domains: list[str] | None = None
    # accepted for compatibility; see NO_EFFECT
    fallback_model: str | None = None
    betas: list[str] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cli_path: str | Path | None = None
    max_buffer_size: int | None = None
    debug_stderr: Any = None
    include_hook_events: bool = False
    sandbox: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    task_budget: dict[str, Any] | None = None
    client_app: str | None = None


#: Options of the comparable SDK that do nothing here, and why (a value other than the
#: default warns once, at session start).
NO_EFFECT: dict[str, str] = {
    "cli_path": "there is no CLI: the loop runs in this process",
    "max_buffer_size": "there is no CLI output to buffer",
    "debug_stderr": "deprecated in the comparable SDK; use stderr",
    "fallback_model": "no fallback model is tried yet: an overloaded model is retried, "
                      "then the run ends with an error result",
    "betas": "beta headers are not sent",
    "permission_prompt_tool_name": "approvals go through can_use_tool (or the notebook's "
                                   "card), not an MCP tool",
    "include_hook_events": "hook events are not yielded as messages",
    "sandbox": "there is no OS sandbox: every command is judged by the permission "
               "engine's analysis instead",
    "task_budget": "no API-side task budget is sent; max_budget_usd limits the cost",
}
