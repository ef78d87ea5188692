"""The hook callbacks' input and output shapes, as TypedDicts under the comparable SDK's names.

They describe the dicts `hooks.HookRunner` passes to callbacks and reads back; code that
annotates its callbacks with these names (written for the comparable SDK) type-checks
unchanged. They are descriptions only: nothing here is checked at runtime. Python keys
`continue_` / `async_` stand for `continue` / `async`, as in the comparable SDK.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "AsyncHookJSONOutput",
    "BaseHookInput",
    "HookContext",
    "HookInput",
    "HookJSONOutput",
    "NotificationHookInput",
    "PermissionRequestHookInput",
    "PostToolUseFailureHookInput",
    "PostToolUseHookInput",
    "PostToolUseHookSpecificOutput",
    "PreCompactHookInput",
    "PreToolUseHookInput",
    "PreToolUseHookSpecificOutput",
    "StopHookInput",
    "SubagentStartHookInput",
    "SubagentStopHookInput",
    "SyncHookJSONOutput",
    "UserPromptSubmitHookInput",
    "UserPromptSubmitHookSpecificOutput",
]


class BaseHookInput(TypedDict):
    """What every hook input carries."""

    session_id: str
    transcript_path: str | None  # None: no transcript file (records live in the notebook)
    cwd: str
    permission_mode: NotRequired[str]


class PreToolUseHookInput(BaseHookInput):
    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput):
    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    tool_response: Any
    duration_ms: NotRequired[int]


class PostToolUseFailureHookInput(BaseHookInput):
    hook_event_name: Literal["PostToolUseFailure"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    error: str
    is_interrupt: NotRequired[bool]
    duration_ms: NotRequired[int]


class UserPromptSubmitHookInput(BaseHookInput):
    hook_event_name: Literal["UserPromptSubmit"]
    prompt: str


class StopHookInput(BaseHookInput):
    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]


class SubagentStartHookInput(BaseHookInput):
    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class SubagentStopHookInput(BaseHookInput):
    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_type: str
    agent_transcript_path: NotRequired[str]
    last_assistant_message: NotRequired[str]


class PreCompactHookInput(BaseHookInput):
    hook_event_name: Literal["PreCompact"]
    trigger: Literal["manual", "auto"]
    custom_instructions: str | None


class NotificationHookInput(BaseHookInput):
    hook_event_name: Literal["Notification"]
    message: str
    notification_type: str
    title: NotRequired[str]


class PermissionRequestHookInput(BaseHookInput):
    hook_event_name: Literal["PermissionRequest"]
    tool_name: str
    tool_input: dict[str, Any]
    permission_suggestions: NotRequired[list[Any]]


HookInput = (PreToolUseHookInput | PostToolUseHookInput | PostToolUseFailureHookInput
             | UserPromptSubmitHookInput | StopHookInput | SubagentStartHookInput
             | SubagentStopHookInput | PreCompactHookInput | NotificationHookInput
             | PermissionRequestHookInput)


class HookContext(TypedDict):
    """The third argument of a callback (reserved; `signal` is always None)."""

    signal: Any


class PreToolUseHookSpecificOutput(TypedDict):
    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]


class AsyncHookJSONOutput(TypedDict):
    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict, total=False):
    continue_: bool
    stopReason: str
    suppressOutput: bool
    decision: Literal["block"]
    reason: str
    systemMessage: str
    hookSpecificOutput: (PreToolUseHookSpecificOutput | PostToolUseHookSpecificOutput
                         | UserPromptSubmitHookSpecificOutput | dict[str, Any])


HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput
