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
    "BackgroundTaskSummary",
    "BaseHookInput",
    "CwdChangedHookSpecificOutput",
    "ElicitationHookSpecificOutput",
    "ElicitationResultHookSpecificOutput",
    "FileChangedHookSpecificOutput",
    "HookContext",
    "HookEffort",
    "HookInput",
    "HookJSONOutput",
    "HookSpecificOutput",
    "MessageDisplayHookSpecificOutput",
    "NotificationHookInput",
    "NotificationHookSpecificOutput",
    "PermissionDeniedHookSpecificOutput",
    "PermissionRequestHookInput",
    "PermissionRequestHookSpecificOutput",
    "PostModelSwitchHookSpecificOutput",
    "PostToolBatchHookSpecificOutput",
    "PostToolUseFailureHookInput",
    "PostToolUseFailureHookSpecificOutput",
    "PostToolUseHookInput",
    "PostToolUseHookSpecificOutput",
    "PreCompactHookInput",
    "PreModelSwitchHookSpecificOutput",
    "PreToolUseHookInput",
    "PreToolUseHookSpecificOutput",
    "SessionCronSummary",
    "SessionStartHookSpecificOutput",
    "StopHookInput",
    "StopHookSpecificOutput",
    "SubagentStartHookInput",
    "SubagentStartHookSpecificOutput",
    "SubagentStopHookInput",
    "SubagentStopHookSpecificOutput",
    "SyncHookJSONOutput",
    "UserPromptExpansionHookSpecificOutput",
    "UserPromptSubmitHookInput",
    "UserPromptSubmitHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput",
]


class _NotSent(TypedDict, total=False):
    """Keys of the comparable SDK 0.2.189's inputs that are declared and not sent here:
    `prompt_id`, and `effort` (`{"level": ...}`). Optional keys live in `total=False`
    classes, so that they stay optional also where annotations are strings."""

    prompt_id: str
    effort: dict[str, str]


class BaseHookInput(_NotSent):
    """What every hook input carries."""

    session_id: str
    transcript_path: str | None  # None: no transcript file (records live in the notebook)
    cwd: str
    permission_mode: NotRequired[str]


class BackgroundTaskSummary(TypedDict, total=False):
    """A background task, as the comparable SDK's Stop input lists them."""

    task_id: str
    description: str
    status: str


class SessionCronSummary(TypedDict, total=False):
    """A scheduled prompt of the session (none exist here: `session_crons` is
    always empty)."""

    cron_id: str
    schedule: str
    prompt: str


class _AtStop(TypedDict, total=False):
    """What the stop events (Stop, SubagentStop) carry besides: `session_crons` is always
    sent, and always empty (nothing schedules prompts here: there are no CronCreate or
    ScheduleWakeup tools); `background_tasks` is not sent."""

    background_tasks: list[BackgroundTaskSummary]
    session_crons: list[SessionCronSummary]


class _InSubagent(TypedDict, total=False):
    """Set when a tool call comes from inside a subagent (optional keys: `total=False`
    keeps them optional also where annotations are strings)."""

    agent_id: str
    agent_type: str


class PreToolUseHookInput(BaseHookInput, _InSubagent):
    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseHookInput(BaseHookInput, _InSubagent):
    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    tool_response: Any
    duration_ms: NotRequired[int]


class PostToolUseFailureHookInput(BaseHookInput, _InSubagent):
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


class StopHookInput(BaseHookInput, _AtStop):
    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]


class SubagentStartHookInput(BaseHookInput):
    hook_event_name: Literal["SubagentStart"]
    agent_id: str
    agent_type: str


class SubagentStopHookInput(BaseHookInput, _AtStop):
    hook_event_name: Literal["SubagentStop"]
    stop_hook_active: bool
    agent_id: str
    agent_type: str
    agent_transcript_path: str | None  # None: subagent transcripts are not kept as files
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


class PermissionRequestHookInput(BaseHookInput, _InSubagent):
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
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedToolOutput: NotRequired[Any]
    updatedMCPToolOutput: NotRequired[Any]


class PostToolUseFailureHookSpecificOutput(TypedDict):
    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]
    sessionTitle: NotRequired[str]  # the stored session's title (unless the prompt is blocked)
    suppressOriginalPrompt: NotRequired[bool]  # accepted: no block message quotes the prompt


class NotificationHookSpecificOutput(TypedDict):
    hookEventName: Literal["Notification"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


class SubagentStopHookSpecificOutput(TypedDict):
    hookEventName: Literal["SubagentStop"]
    additionalContext: NotRequired[str]


class StopHookSpecificOutput(TypedDict):
    """`additionalContext` is feedback, not an error: the agent goes on with it (as a
    system reminder) instead of stopping, as with `decision: "block"`."""

    hookEventName: Literal["Stop"]
    additionalContext: NotRequired[str]


class PermissionRequestHookSpecificOutput(TypedDict):
    hookEventName: Literal["PermissionRequest"]
    decision: dict[str, Any]


# Events of the comparable SDK's CLI that are not fired here (sessions, worktrees, model
# switches, MCP elicitation, file watching): their output shapes exist so that code
# annotated with them still imports; a hook registered for these events is refused.

class SessionStartHookSpecificOutput(TypedDict):
    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]
    initialUserMessage: NotRequired[str]
    watchPaths: NotRequired[list[str]]


class UserPromptExpansionHookSpecificOutput(TypedDict):
    hookEventName: Literal["UserPromptExpansion"]
    additionalContext: NotRequired[str]


class PostToolBatchHookSpecificOutput(TypedDict):
    hookEventName: Literal["PostToolBatch"]
    additionalContext: NotRequired[str]


class PermissionDeniedHookSpecificOutput(TypedDict):
    hookEventName: Literal["PermissionDenied"]
    retry: NotRequired[bool]


class PreModelSwitchHookSpecificOutput(TypedDict):
    hookEventName: Literal["PreModelSwitch"]
    additionalContext: NotRequired[str]


class PostModelSwitchHookSpecificOutput(TypedDict):
    hookEventName: Literal["PostModelSwitch"]
    additionalContext: NotRequired[str]


ElicitationAction = Literal["accept", "decline", "cancel"]


class ElicitationHookSpecificOutput(TypedDict):
    hookEventName: Literal["Elicitation"]
    action: NotRequired[ElicitationAction]
    content: NotRequired[dict[str, Any]]


class ElicitationResultHookSpecificOutput(TypedDict):
    hookEventName: Literal["ElicitationResult"]
    action: NotRequired[ElicitationAction]
    content: NotRequired[dict[str, Any]]


class WorktreeCreateHookSpecificOutput(TypedDict):
    hookEventName: Literal["WorktreeCreate"]
    worktreePath: str


class CwdChangedHookSpecificOutput(TypedDict):
    hookEventName: Literal["CwdChanged"]
    watchPaths: NotRequired[list[str]]


class FileChangedHookSpecificOutput(TypedDict):
    hookEventName: Literal["FileChanged"]
    watchPaths: NotRequired[list[str]]


class MessageDisplayHookSpecificOutput(TypedDict):
    hookEventName: Literal["MessageDisplay"]
    additionalContext: NotRequired[str]


#: the effort a hook's model call may use (the comparable SDK's prompt hooks)
HookEffort = Literal["low", "medium", "high", "xhigh", "max"]


HookSpecificOutput = (PreToolUseHookSpecificOutput | PostToolUseHookSpecificOutput
                      | PostToolUseFailureHookSpecificOutput
                      | UserPromptSubmitHookSpecificOutput | NotificationHookSpecificOutput
                      | SubagentStartHookSpecificOutput | SubagentStopHookSpecificOutput
                      | StopHookSpecificOutput | PermissionRequestHookSpecificOutput)


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
    hookSpecificOutput: HookSpecificOutput | dict[str, Any]


HookJSONOutput = AsyncHookJSONOutput | SyncHookJSONOutput
