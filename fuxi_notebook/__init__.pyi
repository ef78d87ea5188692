"""Generated from fuxi_notebook/_internal/common/public_names.py: do not edit."""

from typing import Any

from ._internal.agent.client import (
    FuxiSDKClient as FuxiSDKClient,
)
from ._internal.agent.project_link import (
    trust_project_settings as trust_project_settings,
)
from ._internal.agent.query import (
    query as query,
)
from ._internal.mcp_servers.config import (
    McpHttpServerConfig as McpHttpServerConfig,
    McpSSEServerConfig as McpSSEServerConfig,
    McpSdkServerConfig as McpSdkServerConfig,
    McpServerConfig as McpServerConfig,
    McpServerConnectionStatus as McpServerConnectionStatus,
    McpServerInfo as McpServerInfo,
    McpServerStatus as McpServerStatus,
    McpServerStatusConfig as McpServerStatusConfig,
    McpStatusResponse as McpStatusResponse,
    McpStdioServerConfig as McpStdioServerConfig,
    McpToolAnnotations as McpToolAnnotations,
    McpToolInfo as McpToolInfo,
)
from ._internal.mcp_servers.functions import (
    fuxi_tool as fuxi_tool,
)
from ._internal.mcp_servers.sdk import (
    SdkMcpTool as SdkMcpTool,
    ToolAnnotations as ToolAnnotations,
    create_sdk_mcp_server as create_sdk_mcp_server,
    tool as tool,
)
from ._internal.models.anthropic import (
    AnthropicModel as AnthropicModel,
)
from ._internal.models.base import (
    Model as Model,
)
from ._internal.models.scripted import (
    ScriptedModel as ScriptedModel,
)
from ._internal.sessions.api import (
    ForkSessionResult as ForkSessionResult,
    SDKSessionInfo as SDKSessionInfo,
    SessionMessage as SessionMessage,
    delete_session as delete_session,
    delete_session_via_store as delete_session_via_store,
    fork_session as fork_session,
    fork_session_via_store as fork_session_via_store,
    get_session_info as get_session_info,
    get_session_info_from_store as get_session_info_from_store,
    get_session_messages as get_session_messages,
    get_session_messages_from_store as get_session_messages_from_store,
    get_subagent_messages as get_subagent_messages,
    get_subagent_messages_from_store as get_subagent_messages_from_store,
    import_session_to_store as import_session_to_store,
    list_sessions as list_sessions,
    list_sessions_from_store as list_sessions_from_store,
    list_subagents as list_subagents,
    list_subagents_from_store as list_subagents_from_store,
    rename_session as rename_session,
    rename_session_via_store as rename_session_via_store,
    tag_session as tag_session,
    tag_session_via_store as tag_session_via_store,
)
from ._internal.sessions.notebook_store import (
    NotebookSessionStore as NotebookSessionStore,
)
from ._internal.sessions.store import (
    FileSessionStore as FileSessionStore,
    InMemorySessionStore as InMemorySessionStore,
    SessionKey as SessionKey,
    SessionListSubkeysKey as SessionListSubkeysKey,
    SessionStore as SessionStore,
    SessionStoreEntry as SessionStoreEntry,
    SessionStoreFlushMode as SessionStoreFlushMode,
    SessionStoreListEntry as SessionStoreListEntry,
    SessionSummaryEntry as SessionSummaryEntry,
    fold_session_summary as fold_session_summary,
    project_key_for_directory as project_key_for_directory,
)
from .errors import (
    CLIConnectionError as CLIConnectionError,
    CLIJSONDecodeError as CLIJSONDecodeError,
    CLINotFoundError as CLINotFoundError,
    CanUseToolShadowedWarning as CanUseToolShadowedWarning,
    ClientNotConnectedError as ClientNotConnectedError,
    ConfigurationError as ConfigurationError,
    FuxiSDKError as FuxiSDKError,
    ModelError as ModelError,
    ProcessError as ProcessError,
    ResultError as ResultError,
)
from .extra_types import (
    ContextUsageCategory as ContextUsageCategory,
    ContextUsageResponse as ContextUsageResponse,
    ConversationResetMessage as ConversationResetMessage,
    DeferredToolUse as DeferredToolUse,
    FastModeDisabledReason as FastModeDisabledReason,
    FastModeState as FastModeState,
    HookEventMessage as HookEventMessage,
    MessageOrigin as MessageOrigin,
    MessageOriginKind as MessageOriginKind,
    MirrorErrorMessage as MirrorErrorMessage,
    ModelUsage as ModelUsage,
    RateLimitEvent as RateLimitEvent,
    RateLimitInfo as RateLimitInfo,
    RateLimitStatus as RateLimitStatus,
    RateLimitType as RateLimitType,
    ServerToolName as ServerToolName,
    ServerToolResultBlock as ServerToolResultBlock,
    ServerToolUseBlock as ServerToolUseBlock,
    SystemInitData as SystemInitData,
    SystemInitMcpServer as SystemInitMcpServer,
    SystemInitPlugin as SystemInitPlugin,
    SystemInitPluginError as SystemInitPluginError,
    TERMINAL_TASK_STATUSES as TERMINAL_TASK_STATUSES,
    TaskNotificationMessage as TaskNotificationMessage,
    TaskNotificationOriginSubkind as TaskNotificationOriginSubkind,
    TaskNotificationStatus as TaskNotificationStatus,
    TaskProgressMessage as TaskProgressMessage,
    TaskStartedMessage as TaskStartedMessage,
    TaskUpdatedMessage as TaskUpdatedMessage,
    TaskUpdatedStatus as TaskUpdatedStatus,
    TaskUsage as TaskUsage,
)
from .hook_types import (
    AsyncHookJSONOutput as AsyncHookJSONOutput,
    BackgroundTaskSummary as BackgroundTaskSummary,
    BaseHookInput as BaseHookInput,
    CwdChangedHookSpecificOutput as CwdChangedHookSpecificOutput,
    ElicitationHookSpecificOutput as ElicitationHookSpecificOutput,
    ElicitationResultHookSpecificOutput as ElicitationResultHookSpecificOutput,
    FileChangedHookSpecificOutput as FileChangedHookSpecificOutput,
    HookContext as HookContext,
    HookEffort as HookEffort,
    HookInput as HookInput,
    HookJSONOutput as HookJSONOutput,
    HookSpecificOutput as HookSpecificOutput,
    MessageDisplayHookSpecificOutput as MessageDisplayHookSpecificOutput,
    NotificationHookInput as NotificationHookInput,
    NotificationHookSpecificOutput as NotificationHookSpecificOutput,
    PermissionDeniedHookSpecificOutput as PermissionDeniedHookSpecificOutput,
    PermissionRequestHookInput as PermissionRequestHookInput,
    PermissionRequestHookSpecificOutput as PermissionRequestHookSpecificOutput,
    PostModelSwitchHookSpecificOutput as PostModelSwitchHookSpecificOutput,
    PostToolBatchHookSpecificOutput as PostToolBatchHookSpecificOutput,
    PostToolUseFailureHookInput as PostToolUseFailureHookInput,
    PostToolUseFailureHookSpecificOutput as PostToolUseFailureHookSpecificOutput,
    PostToolUseHookInput as PostToolUseHookInput,
    PostToolUseHookSpecificOutput as PostToolUseHookSpecificOutput,
    PreCompactHookInput as PreCompactHookInput,
    PreModelSwitchHookSpecificOutput as PreModelSwitchHookSpecificOutput,
    PreToolUseHookInput as PreToolUseHookInput,
    PreToolUseHookSpecificOutput as PreToolUseHookSpecificOutput,
    SessionCronSummary as SessionCronSummary,
    SessionStartHookSpecificOutput as SessionStartHookSpecificOutput,
    StopHookInput as StopHookInput,
    StopHookSpecificOutput as StopHookSpecificOutput,
    SubagentStartHookInput as SubagentStartHookInput,
    SubagentStartHookSpecificOutput as SubagentStartHookSpecificOutput,
    SubagentStopHookInput as SubagentStopHookInput,
    SubagentStopHookSpecificOutput as SubagentStopHookSpecificOutput,
    SyncHookJSONOutput as SyncHookJSONOutput,
    UserPromptExpansionHookSpecificOutput as UserPromptExpansionHookSpecificOutput,
    UserPromptSubmitHookInput as UserPromptSubmitHookInput,
    UserPromptSubmitHookSpecificOutput as UserPromptSubmitHookSpecificOutput,
    WorktreeCreateHookSpecificOutput as WorktreeCreateHookSpecificOutput,
)
from .hooks import (
    HookCallback as HookCallback,
    HookEvent as HookEvent,
    HookMatcher as HookMatcher,
)
from .option_types import (
    SandboxIgnoreViolations as SandboxIgnoreViolations,
    SandboxNetworkConfig as SandboxNetworkConfig,
    SandboxSettings as SandboxSettings,
    SdkBeta as SdkBeta,
    SdkPluginConfig as SdkPluginConfig,
    SystemPromptCustom as SystemPromptCustom,
    SystemPromptFile as SystemPromptFile,
    SystemPromptPreset as SystemPromptPreset,
    TaskBudget as TaskBudget,
    ThinkingConfig as ThinkingConfig,
    ThinkingConfigAdaptive as ThinkingConfigAdaptive,
    ThinkingConfigDisabled as ThinkingConfigDisabled,
    ThinkingConfigEnabled as ThinkingConfigEnabled,
    ThinkingDisplay as ThinkingDisplay,
    ToolsPreset as ToolsPreset,
)
from .options import (
    AgentDefinition as AgentDefinition,
    CanUseTool as CanUseTool,
    EffortLevel as EffortLevel,
    FuxiAgentOptions as FuxiAgentOptions,
    PermissionMode as PermissionMode,
    PermissionResult as PermissionResult,
    PermissionResultAllow as PermissionResultAllow,
    PermissionResultDeny as PermissionResultDeny,
    PermissionRuleValue as PermissionRuleValue,
    PermissionUpdate as PermissionUpdate,
    SettingSource as SettingSource,
    ToolPermissionContext as ToolPermissionContext,
)
from .types import (
    AssistantMessage as AssistantMessage,
    ContentBlock as ContentBlock,
    Message as Message,
    ResultMessage as ResultMessage,
    StreamEvent as StreamEvent,
    SystemMessage as SystemMessage,
    TextBlock as TextBlock,
    ThinkingBlock as ThinkingBlock,
    ToolResultBlock as ToolResultBlock,
    ToolUseBlock as ToolUseBlock,
    UserMessage as UserMessage,
)

__version__: str

def load_ipython_extension(shell: Any) -> None: ...
def unload_ipython_extension(shell: Any) -> None: ...
