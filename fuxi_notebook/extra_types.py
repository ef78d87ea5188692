"""Message and status types of the comparable SDK beyond the core five.

Code written against the comparable SDK imports these and checks `isinstance` against
them; declaring them makes that code run. Each docstring says whether this loop produces
the type: most describe things of the comparable SDK's CLI (background tasks, rate-limit
frames, `/clear`) that do not happen here, so the checks simply never match. The task
messages are `SystemMessage`s, as there. This module imports only `types`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from .types import SystemMessage

__all__ = [
    "TERMINAL_TASK_STATUSES",
    "ContextUsageCategory",
    "ContextUsageResponse",
    "ConversationResetMessage",
    "DeferredToolUse",
    "FastModeDisabledReason",
    "FastModeState",
    "HookEventMessage",
    "MessageOrigin",
    "MessageOriginKind",
    "MirrorErrorMessage",
    "ModelUsage",
    "RateLimitEvent",
    "RateLimitInfo",
    "RateLimitStatus",
    "RateLimitType",
    "ServerToolName",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "SystemInitData",
    "SystemInitMcpServer",
    "SystemInitPlugin",
    "SystemInitPluginError",
    "TaskNotificationMessage",
    "TaskNotificationOriginSubkind",
    "TaskNotificationStatus",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TaskUpdatedStatus",
    "TaskUsage",
]

TaskNotificationStatus = Literal["completed", "failed", "stopped"]
TaskUpdatedStatus = Literal["pending", "running", "paused", "completed", "failed", "killed"]
#: statuses after which a task does nothing more
TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})
TaskNotificationOriginSubkind = Literal["local_agent", "local_workflow", "shell", "monitor"]


class TaskUsage(TypedDict):
    """What a background task used so far."""

    total_tokens: int
    tool_uses: int
    duration_ms: int


@dataclass
class TaskStartedMessage(SystemMessage):
    """A subagent started in the background (`task_type` "local_agent"; `task_id` is its
    agent id, for `stop_task`). Produced by `query()` and `FuxiSDKClient`."""

    task_id: str = ""
    description: str = ""
    uuid: str = ""
    session_id: str = ""
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass
class TaskProgressMessage(SystemMessage):
    """Progress of a background task. Not produced: a background subagent's messages
    stay out of the stream (its transcript keeps them)."""

    task_id: str = ""
    description: str = ""
    usage: TaskUsage | None = None
    uuid: str = ""
    session_id: str = ""
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@dataclass
class TaskNotificationMessage(SystemMessage):
    """A background subagent ended (`status` completed / failed / stopped); unless it
    was stopped on request, a turn whose prompt is this notification follows."""

    task_id: str = ""
    status: TaskNotificationStatus = "completed"
    output_file: str = ""
    summary: str = ""
    uuid: str = ""
    session_id: str = ""
    tool_use_id: str | None = None
    usage: TaskUsage | None = None


@dataclass
class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed: `status` "killed" when `stop_task` stopped
    it (its TaskNotificationMessage follows)."""

    task_id: str = ""
    patch: dict[str, Any] = field(default_factory=dict)
    status: TaskUpdatedStatus | None = None
    session_id: str = ""
    uuid: str = ""


@dataclass
class HookEventMessage(SystemMessage):
    """A hook started or answered (subtype `hook_started` / `hook_response`). Not
    produced: hooks here are in-process callbacks whose effects show in the messages
    they change (a denial, added context, a stopped run)."""

    hook_event_name: str = ""
    session_id: str = ""
    uuid: str = ""


@dataclass
class MirrorErrorMessage(SystemMessage):
    """Writing a session's entries to its `SessionStore` failed (subtype `mirror_error`);
    the run itself goes on."""

    key: dict[str, Any] | None = None
    error: str = ""


RateLimitStatus = Literal["allowed", "allowed_warning", "rejected"]
RateLimitType = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet",
                        "overage"]


@dataclass
class RateLimitInfo:
    """A subscription's rate-limit state, as the comparable SDK's CLI reports it."""

    status: RateLimitStatus
    resets_at: int | None = None
    rate_limit_type: RateLimitType | None = None
    utilization: float | None = None
    overage_status: str | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class RateLimitEvent:
    """Not produced: an API key's rate limits surface as retried requests (429) and, when
    retries run out, as an error result."""

    rate_limit_info: RateLimitInfo
    uuid: str = ""
    session_id: str = ""


@dataclass
class ConversationResetMessage:
    """The conversation was cleared: `/clear` sent to a `FuxiSDKClient` starts a fresh
    conversation (a new session) in the same client. `session_id` is the old session's;
    the messages after it carry the new one. (In a notebook, `%%fuxi --new` does this.)"""

    new_conversation_id: str
    uuid: str = ""
    session_id: str = ""


ServerToolName = Literal["advisor", "web_search", "web_fetch", "code_execution",
                         "bash_code_execution", "text_editor_code_execution",
                         "tool_search_tool_regex", "tool_search_tool_bm25"]


@dataclass
class ServerToolUseBlock:
    """A call of a tool the API itself runs (e.g. web search)."""

    id: str
    name: ServerToolName
    input: dict[str, Any]
    type: Literal["server_tool_use"] = "server_tool_use"


@dataclass
class ServerToolResultBlock:
    """The result of a server tool call."""

    tool_use_id: str
    content: dict[str, Any]


@dataclass
class DeferredToolUse:
    """The tool call a `PreToolUse` hook deferred (`permissionDecision: "defer"`): the
    run ended before it ran (`ResultMessage.deferred_tool_use`, terminal reason
    `tool_deferred`), so the caller can decide it and resume."""

    id: str
    name: str
    input: dict[str, Any]


class ModelUsage(TypedDict, total=False):
    """One model's share of `ResultMessage.model_usage` (camelCase, as on the wire)."""

    inputTokens: int
    outputTokens: int
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int


MessageOriginKind = Literal["user", "agent", "hook", "system"]


class MessageOrigin(TypedDict, total=False):
    """Who put a user message into the conversation."""

    kind: MessageOriginKind
    subkind: str


FastModeState = Literal["enabled", "disabled", "unavailable"]
FastModeDisabledReason = Literal["unsupported_model", "not_entitled", "user_disabled"]


class ContextUsageCategory(TypedDict):
    """One part of the context window (system prompt, tools, messages, ...)."""

    name: str
    tokens: int


class ContextUsageResponse(TypedDict, total=False):
    """How full the context window is."""

    total_tokens: int
    max_tokens: int
    percentage: float
    categories: list[ContextUsageCategory]


class SystemInitMcpServer(TypedDict):
    """An MCP server as the `init` message lists it."""

    name: str
    status: str
    error: NotRequired[str]


class SystemInitPlugin(TypedDict):
    """A plugin as the `init` message lists it."""

    name: str
    path: str
    version: NotRequired[str]


class SystemInitPluginError(TypedDict):
    """A plugin that could not be loaded."""

    path: str
    error: str


class SystemInitData(TypedDict, total=False):
    """The `data` of the `init` SystemMessage."""

    type: Literal["system"]
    subtype: Literal["init"]
    uuid: str
    session_id: str
    model: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    permission_mode: str
    permissionMode: str
    cwd: str
    apiKeySource: str
    agents: list[str]
    plugins: list[SystemInitPlugin]
    plugin_errors: list[SystemInitPluginError]
    slash_commands: list[str]
    skills: list[str]
    output_style: str
