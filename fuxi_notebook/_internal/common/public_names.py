"""The public API, listed once: each name `from fuxi_notebook import ...` serves, by the
module that defines it (relative to the `fuxi_notebook` package).

The package's lazy loader (`fuxi_notebook.__getattr__`), its `__all__`, the type stub
`fuxi_notebook/__init__.pyi` (generated: `python scripts/public_stub.py`)
and `fuxi_notebook.types`' lazy types all come from this table.
"""

from __future__ import annotations

__all__ = ["BY_MODULE", "EXPORTS", "public_order", "stub_text"]

#: Public names by the module that defines them (each imported on first use).
BY_MODULE: dict[str, tuple[str, ...]] = {
    "._internal.agent.client": (
        "FuxiSDKClient",
    ),
    "._internal.agent.query": (
        "query",
    ),
    "._internal.agent.project_link": (
        "trust_project_settings",
    ),
    ".errors": (
        "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError",
        "CanUseToolShadowedWarning", "ClientNotConnectedError", "ConfigurationError",
        "FuxiSDKError", "ModelError", "ProcessError", "ResultError",
    ),
    ".extra_types": (
        "ContextUsageCategory", "ContextUsageResponse", "ConversationResetMessage",
        "DeferredToolUse", "FastModeDisabledReason", "FastModeState", "HookEventMessage",
        "MessageOrigin", "MessageOriginKind", "MirrorErrorMessage", "ModelUsage",
        "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType",
        "ServerToolName", "ServerToolResultBlock", "ServerToolUseBlock", "SystemInitData",
        "SystemInitMcpServer", "SystemInitPlugin", "SystemInitPluginError",
        "TERMINAL_TASK_STATUSES", "TaskNotificationMessage", "TaskNotificationOriginSubkind",
        "TaskNotificationStatus", "TaskProgressMessage", "TaskStartedMessage",
        "TaskUpdatedMessage", "TaskUpdatedStatus", "TaskUsage",
    ),
    ".hook_types": (
        "AsyncHookJSONOutput", "BackgroundTaskSummary", "BaseHookInput",
        "CwdChangedHookSpecificOutput", "ElicitationHookSpecificOutput",
        "ElicitationResultHookSpecificOutput", "FileChangedHookSpecificOutput", "HookContext",
        "HookEffort", "HookInput", "HookJSONOutput", "HookSpecificOutput",
        "MessageDisplayHookSpecificOutput", "NotificationHookInput",
        "NotificationHookSpecificOutput", "PermissionDeniedHookSpecificOutput",
        "PermissionRequestHookInput", "PermissionRequestHookSpecificOutput",
        "PostModelSwitchHookSpecificOutput", "PostToolBatchHookSpecificOutput",
        "PostToolUseFailureHookInput", "PostToolUseFailureHookSpecificOutput",
        "PostToolUseHookInput", "PostToolUseHookSpecificOutput", "PreCompactHookInput",
        "PreModelSwitchHookSpecificOutput", "PreToolUseHookInput",
        "PreToolUseHookSpecificOutput", "SessionCronSummary",
        "SessionStartHookSpecificOutput", "StopHookInput", "StopHookSpecificOutput",
        "SubagentStartHookInput", "SubagentStartHookSpecificOutput", "SubagentStopHookInput",
        "SubagentStopHookSpecificOutput", "SyncHookJSONOutput",
        "UserPromptExpansionHookSpecificOutput", "UserPromptSubmitHookInput",
        "UserPromptSubmitHookSpecificOutput", "WorktreeCreateHookSpecificOutput",
    ),
    ".hooks": (
        "HookCallback", "HookEvent", "HookMatcher",
    ),
    "._internal.mcp_servers.config": (
        "McpHttpServerConfig", "McpSSEServerConfig", "McpSdkServerConfig", "McpServerConfig",
        "McpServerStatus", "McpStdioServerConfig", "McpServerConnectionStatus", "McpServerInfo",
        "McpServerStatusConfig", "McpStatusResponse", "McpToolAnnotations", "McpToolInfo",
    ),
    "._internal.mcp_servers.functions": (
        "fuxi_tool",
    ),
    ".option_types": (
        "SandboxIgnoreViolations", "SandboxNetworkConfig", "SandboxSettings", "SdkBeta",
        "SdkPluginConfig", "SystemPromptCustom", "SystemPromptFile", "SystemPromptPreset",
        "TaskBudget", "ThinkingConfig", "ThinkingConfigAdaptive", "ThinkingConfigDisabled",
        "ThinkingConfigEnabled", "ThinkingDisplay", "ToolsPreset",
    ),
    ".options": (
        "AgentDefinition", "CanUseTool", "EffortLevel", "FuxiAgentOptions", "PermissionMode",
        "PermissionResult", "PermissionResultAllow", "PermissionResultDeny",
        "PermissionRuleValue", "PermissionUpdate", "SettingSource", "ToolPermissionContext",
    ),
    "._internal.sessions.api": (
        "ForkSessionResult", "SDKSessionInfo", "SessionMessage", "delete_session",
        "delete_session_via_store", "fork_session", "fork_session_via_store",
        "get_session_info", "get_session_info_from_store", "get_session_messages",
        "get_session_messages_from_store", "get_subagent_messages",
        "get_subagent_messages_from_store", "import_session_to_store", "list_sessions",
        "list_sessions_from_store", "list_subagents", "list_subagents_from_store",
        "rename_session", "rename_session_via_store", "tag_session", "tag_session_via_store",
    ),
    "._internal.sessions.notebook_store": (
        "NotebookSessionStore",
    ),
    "._internal.sessions.store": (
        "FileSessionStore", "InMemorySessionStore", "SessionKey", "SessionListSubkeysKey",
        "SessionStore", "SessionStoreEntry", "SessionStoreFlushMode", "SessionStoreListEntry",
        "SessionSummaryEntry", "fold_session_summary", "project_key_for_directory",
    ),
    ".types": (
        "AssistantMessage", "ContentBlock", "Message", "ResultMessage", "StreamEvent",
        "SystemMessage", "TextBlock", "ThinkingBlock", "ToolResultBlock", "ToolUseBlock",
        "UserMessage",
    ),
    "._internal.mcp_servers.sdk": (
        "SdkMcpTool", "ToolAnnotations", "create_sdk_mcp_server", "tool",
    ),
    "._internal.models.anthropic": (
        "AnthropicModel",
    ),
    "._internal.models.base": (
        "Model",
    ),
    "._internal.models.scripted": (
        "ScriptedModel",
    ),
}
#: Public name -> the module that defines it.
EXPORTS: dict[str, str] = {name: module for module, names in BY_MODULE.items()
                           for name in names}


def public_order(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions (the order ruff's RUF022 keeps)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def stub_text() -> str:
    """`fuxi_notebook/__init__.pyi`: the same names, imported eagerly, for type checkers
    and IDEs (the package itself imports each on first use)."""
    lines = ['"""Generated from fuxi_notebook/_internal/common/public_names.py: do not edit."""',
             "", "from typing import Any", ""]
    for module, names in sorted(BY_MODULE.items()):
        lines.append(f"from {module} import (")
        lines.extend(f"    {name} as {name}," for name in sorted(names))
        lines.append(")")
    lines += ["", "__version__: str", "", "def load_ipython_extension(shell: Any) -> None: ...",
              "def unload_ipython_extension(shell: Any) -> None: ...", ""]
    return "\n".join(lines)

