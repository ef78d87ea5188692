"""The public API: every exported name resolves, `__all__` is sorted, imports stay lazy."""

from __future__ import annotations

import subprocess
import sys

import fuxi_notebook
from fuxi_notebook import ScriptedModel

#: The public API, pinned: adding or removing a name is a decision this test makes visible.
EXPORTED = [
    "TERMINAL_TASK_STATUSES", "AgentDefinition", "AnthropicModel", "AssistantMessage",
    "AsyncHookJSONOutput", "BackgroundTaskSummary", "BaseHookInput", "CLIConnectionError",
    "CLIJSONDecodeError", "CLINotFoundError", "CanUseTool", "CanUseToolShadowedWarning",
    "ClientNotConnectedError", "ConfigurationError", "ContentBlock", "ContextUsageCategory",
    "ContextUsageResponse", "ConversationResetMessage", "CwdChangedHookSpecificOutput",
    "DeferredToolUse", "EffortLevel", "ElicitationHookSpecificOutput",
    "ElicitationResultHookSpecificOutput", "FastModeDisabledReason", "FastModeState",
    "FileChangedHookSpecificOutput", "FileSessionStore", "ForkSessionResult",
    "FuxiAgentOptions", "FuxiSDKClient", "FuxiSDKError", "HookCallback", "HookContext",
    "HookEffort", "HookEvent", "HookEventMessage", "HookInput", "HookJSONOutput",
    "HookMatcher", "HookSpecificOutput", "InMemorySessionStore", "McpHttpServerConfig",
    "McpSSEServerConfig", "McpSdkServerConfig", "McpServerConfig", "McpServerConnectionStatus",
    "McpServerInfo", "McpServerStatus", "McpServerStatusConfig", "McpStatusResponse",
    "McpStdioServerConfig", "McpToolAnnotations", "McpToolInfo", "Message",
    "MessageDisplayHookSpecificOutput", "MessageOrigin", "MessageOriginKind",
    "MirrorErrorMessage", "Model", "ModelError", "ModelUsage", "NotebookSessionStore",
    "NotificationHookInput", "NotificationHookSpecificOutput",
    "PermissionDeniedHookSpecificOutput", "PermissionMode", "PermissionRequestHookInput",
    "PermissionRequestHookSpecificOutput", "PermissionResult", "PermissionResultAllow",
    "PermissionResultDeny", "PermissionRuleValue", "PermissionUpdate",
    "PostModelSwitchHookSpecificOutput", "PostToolBatchHookSpecificOutput",
    "PostToolUseFailureHookInput", "PostToolUseFailureHookSpecificOutput",
    "PostToolUseHookInput", "PostToolUseHookSpecificOutput", "PreCompactHookInput",
    "PreModelSwitchHookSpecificOutput", "PreToolUseHookInput", "PreToolUseHookSpecificOutput",
    "ProcessError", "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType",
    "ResultError", "ResultMessage", "SDKSessionInfo", "SandboxIgnoreViolations",
    "SandboxNetworkConfig", "SandboxSettings", "ScriptedModel", "SdkBeta", "SdkMcpTool",
    "SdkPluginConfig", "ServerToolName", "ServerToolResultBlock", "ServerToolUseBlock",
    "SessionCronSummary", "SessionKey", "SessionListSubkeysKey", "SessionMessage",
    "SessionStartHookSpecificOutput", "SessionStore", "SessionStoreEntry",
    "SessionStoreFlushMode", "SessionStoreListEntry", "SessionSummaryEntry", "SettingSource",
    "StopHookInput", "StopHookSpecificOutput", "StreamEvent", "SubagentStartHookInput",
    "SubagentStartHookSpecificOutput", "SubagentStopHookInput",
    "SubagentStopHookSpecificOutput", "SyncHookJSONOutput", "SystemInitData",
    "SystemInitMcpServer", "SystemInitPlugin", "SystemInitPluginError", "SystemMessage",
    "SystemPromptCustom", "SystemPromptFile", "SystemPromptPreset", "TaskBudget",
    "TaskNotificationMessage", "TaskNotificationOriginSubkind", "TaskNotificationStatus",
    "TaskProgressMessage", "TaskStartedMessage", "TaskUpdatedMessage", "TaskUpdatedStatus",
    "TaskUsage", "TextBlock", "ThinkingBlock", "ThinkingConfig", "ThinkingConfigAdaptive",
    "ThinkingConfigDisabled", "ThinkingConfigEnabled", "ThinkingDisplay", "ToolAnnotations",
    "ToolPermissionContext", "ToolResultBlock", "ToolUseBlock", "ToolsPreset", "UserMessage",
    "UserPromptExpansionHookSpecificOutput", "UserPromptSubmitHookInput",
    "UserPromptSubmitHookSpecificOutput", "WorktreeCreateHookSpecificOutput", "__version__",
    "create_sdk_mcp_server", "delete_session", "delete_session_via_store",
    "fold_session_summary", "fork_session", "fork_session_via_store", "fuxi_tool",
    "get_session_info", "get_session_info_from_store", "get_session_messages",
    "get_session_messages_from_store", "get_subagent_messages",
    "get_subagent_messages_from_store", "import_session_to_store", "list_sessions",
    "list_sessions_from_store", "list_subagents", "list_subagents_from_store",
    "load_ipython_extension", "project_key_for_directory", "query", "rename_session",
    "rename_session_via_store", "tag_session", "tag_session_via_store", "tool",
    "trust_project_settings", "unload_ipython_extension",
]


def test_the_exported_names_are_pinned_and_every_one_resolves():
    assert fuxi_notebook.__all__ == EXPORTED
    for name in EXPORTED:
        assert getattr(fuxi_notebook, name) is not None


def test_the_type_stub_is_generated_from_the_one_list_of_public_names():
    """`__all__`, the lazy loader and the stub all come from public_names.BY_MODULE."""
    import ast
    from pathlib import Path

    from fuxi_notebook._internal.common.public_names import EXPORTS, stub_text

    stub = Path(fuxi_notebook.__file__).with_suffix(".pyi")
    assert stub.read_text() == stub_text(), "run python scripts/public_stub.py"
    stubbed = {alias.asname for node in ast.parse(stub.read_text()).body
               if isinstance(node, ast.ImportFrom) for alias in node.names} - {None}
    assert stubbed == set(EXPORTS)
    assert set(EXPORTED) == {*EXPORTS, "__version__", "load_ipython_extension",
                             "unload_ipython_extension"}


def test_unknown_attribute_raises_attribute_error():
    try:
        fuxi_notebook.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_no_heavy_module():
    code = ("import sys, fuxi_notebook; heavy = [m for m in ('anthropic', 'jsonschema', "
            "'tree_sitter', 'pathspec', 'fuxi_notebook._internal.agent') if m in sys.modules]; "
            "print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_using_the_loop_does_not_import_anthropic_until_a_request():
    code = ("import sys; from fuxi_notebook import query, FuxiAgentOptions, ScriptedModel; "
            "print('anthropic' in sys.modules, 'tree_sitter' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False False"


def test_child_processes_of_the_suite_import_this_checkout(tmp_path):
    from .conftest import CHECKOUT

    done = subprocess.run([sys.executable, "-c", "import fuxi_notebook; "
                           "print(fuxi_notebook.__file__)"], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == str(CHECKOUT / "fuxi_notebook" / "__init__.py")


def test_the_comparable_sdks_error_names_catch_what_they_meant():
    """Code written against the comparable SDK catches `ProcessError` for a failed run and
    `CLIConnectionError` for a client that is not connected."""
    from fuxi_notebook import (
        CLIConnectionError,
        ClientNotConnectedError,
        CLIJSONDecodeError,
        CLINotFoundError,
        FuxiSDKError,
        ProcessError,
        ResultError,
    )
    from fuxi_notebook.types import ResultMessage

    assert issubclass(ResultError, ProcessError) and issubclass(ProcessError, FuxiSDKError)
    assert issubclass(ClientNotConnectedError, CLIConnectionError)
    assert issubclass(CLINotFoundError, CLIConnectionError)
    assert issubclass(CLIJSONDecodeError, FuxiSDKError)
    failed = ResultMessage(subtype="error_max_turns", duration_ms=1, duration_api_ms=1,
                           is_error=True, num_turns=3, session_id="s",
                           errors=["Reached maximum number of turns (2)"])
    error = ResultError(failed)
    assert error.exit_code == 1 and error.stderr == "Reached maximum number of turns (2)"
    assert error.result_message is failed and str(error) == "Reached maximum number of turns (2)"
    assert (error.subtype, error.errors, error.result, error.session_id) == (
        "error_max_turns", ["Reached maximum number of turns (2)"], None, "s")
    assert error.data["uuid"] is None and error.data["num_turns"] == 3
    import copy
    import pickle
    for again in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert str(again) == str(error) and again.subtype == "error_max_turns"


async def test_a_client_used_before_connect_is_a_connection_error(tmp_path):
    from fuxi_notebook import CLIConnectionError, FuxiAgentOptions, FuxiSDKClient, ScriptedModel

    client = FuxiSDKClient(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path))
    try:
        await client.query("hi")
    except CLIConnectionError:
        pass
    else:
        raise AssertionError("expected CLIConnectionError")


async def test_hook_inputs_carry_the_keys_their_typeddicts_declare(tmp_path):
    """The TypedDicts describe what callbacks really get (checked at runtime here)."""
    from fuxi_notebook import FuxiAgentOptions, HookMatcher, PreToolUseHookInput, query
    from fuxi_notebook._internal.models.script import text, tool_use
    from fuxi_notebook.types import HookContext, PostToolUseHookInput

    seen: dict[str, dict] = {}

    async def remember(input_data, tool_use_id, context):
        seen[input_data["hook_event_name"]] = dict(input_data)
        assert set(context) >= set(HookContext.__required_keys__)
        return {}

    model = ScriptedModel([[tool_use("Glob", {"pattern": "*"})], [text("done")]])
    hooks = {"PreToolUse": [HookMatcher(None, [remember])],
             "PostToolUse": [HookMatcher(None, [remember])]}
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Glob"], hooks=hooks)
    async for _ in query(prompt="look", options=options):
        pass
    assert set(seen["PreToolUse"]) >= PreToolUseHookInput.__required_keys__
    assert set(seen["PostToolUse"]) >= PostToolUseHookInput.__required_keys__
