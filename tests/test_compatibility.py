"""Code written against the comparable SDK: its warning about an unreachable
`can_use_tool`, and its extra message types behaving as the messages they extend."""

from __future__ import annotations

import warnings

import pytest

from fuxi_notebook import FuxiAgentOptions, PermissionResultAllow, ScriptedModel, SystemMessage
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.session import Session
from fuxi_notebook._internal.common import switches
from fuxi_notebook.errors import CanUseToolShadowedWarning
from fuxi_notebook.extra_types import TERMINAL_TASK_STATUSES, TaskNotificationMessage

#: The comparable SDK's public names (its package `__all__`), which code written against
#: it imports; the README's compatibility table says what each is here.
COMPARABLE_NAMES = [
    "query", "__version__", "Transport", "ClaudeSDKClient", "PermissionMode", "EffortLevel",
    "McpServerConfig", "McpSdkServerConfig", "McpServerStatus", "McpServerStatusConfig",
    "McpServerConnectionStatus", "McpServerInfo", "McpStatusResponse", "McpToolAnnotations",
    "McpToolInfo", "UserMessage", "AssistantMessage", "SystemMessage", "SystemInitData",
    "SystemInitMcpServer", "SystemInitPlugin", "SystemInitPluginError", "FastModeState",
    "FastModeDisabledReason", "TaskStartedMessage", "TaskProgressMessage",
    "TaskUpdatedMessage", "TaskNotificationMessage", "TaskNotificationStatus",
    "TaskUpdatedStatus", "TERMINAL_TASK_STATUSES", "TaskUsage", "ResultMessage", "ModelUsage",
    "DeferredToolUse", "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType",
    "StreamEvent", "ConversationResetMessage", "Message", "MessageOrigin", "MessageOriginKind",
    "TaskNotificationOriginSubkind", "ClaudeAgentOptions", "TaskBudget", "TextBlock",
    "ThinkingBlock", "ThinkingConfig", "ThinkingConfigAdaptive", "ThinkingConfigEnabled",
    "ThinkingConfigDisabled", "ToolUseBlock", "ToolResultBlock", "ServerToolName",
    "ServerToolUseBlock", "ServerToolResultBlock", "ContentBlock", "ContextUsageCategory",
    "ContextUsageResponse", "CanUseTool", "CanUseToolShadowedWarning", "ToolPermissionContext",
    "PermissionResult", "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate",
    "HookCallback", "HookContext", "HookInput", "HookEventMessage", "BaseHookInput",
    "PreToolUseHookInput", "PostToolUseHookInput", "PostToolUseFailureHookInput",
    "PostToolUseFailureHookSpecificOutput", "UserPromptSubmitHookInput", "StopHookInput",
    "SubagentStopHookInput", "PreCompactHookInput", "NotificationHookInput",
    "SubagentStartHookInput", "PermissionRequestHookInput", "NotificationHookSpecificOutput",
    "SubagentStartHookSpecificOutput", "PermissionRequestHookSpecificOutput",
    "PreToolUseHookSpecificOutput", "PostToolUseHookSpecificOutput",
    "UserPromptSubmitHookSpecificOutput", "SessionStartHookSpecificOutput", "HookEffort",
    "BackgroundTaskSummary", "SessionCronSummary", "UserPromptExpansionHookSpecificOutput",
    "PostToolBatchHookSpecificOutput", "StopHookSpecificOutput",
    "SubagentStopHookSpecificOutput", "PermissionDeniedHookSpecificOutput",
    "PreModelSwitchHookSpecificOutput", "PostModelSwitchHookSpecificOutput",
    "ElicitationHookSpecificOutput", "ElicitationResultHookSpecificOutput",
    "CwdChangedHookSpecificOutput", "FileChangedHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput", "MessageDisplayHookSpecificOutput", "HookJSONOutput",
    "HookMatcher", "AgentDefinition", "SettingSource", "SdkPluginConfig", "list_sessions",
    "get_session_info", "get_session_messages", "list_subagents", "get_subagent_messages",
    "SDKSessionInfo", "SessionMessage", "SessionKey", "SessionStore", "SessionStoreEntry",
    "SessionStoreFlushMode", "SessionStoreListEntry", "SessionSummaryEntry",
    "SessionListSubkeysKey", "InMemorySessionStore", "fold_session_summary",
    "MirrorErrorMessage", "project_key_for_directory", "import_session_to_store",
    "list_sessions_from_store", "get_session_info_from_store",
    "get_session_messages_from_store", "list_subagents_from_store",
    "get_subagent_messages_from_store", "rename_session", "tag_session", "delete_session",
    "fork_session", "ForkSessionResult", "rename_session_via_store", "tag_session_via_store",
    "delete_session_via_store", "fork_session_via_store", "SdkBeta", "SandboxSettings",
    "SandboxNetworkConfig", "SandboxIgnoreViolations", "create_sdk_mcp_server", "tool",
    "SdkMcpTool", "ToolAnnotations", "ClaudeSDKError", "CLIConnectionError",
    "CLINotFoundError", "ProcessError", "ResultError", "CLIJSONDecodeError",
]
#: Its names that carry the product's name, and ours for them.
RENAMED = {"ClaudeSDKClient": "FuxiSDKClient", "ClaudeAgentOptions": "FuxiAgentOptions",
           "ClaudeSDKError": "FuxiSDKError"}
#: What cannot mean anything here (listed in the README): a transport to the CLI process.
LEFT_OUT = {"Transport"}


async def _allow(name, tool_input, context):
    return PermissionResultAllow()


def _session(tmp_path, **kwargs) -> Session:
    return build_session(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path, **kwargs))


def test_a_bare_allow_rule_shadows_can_use_tool_for_that_tool(tmp_path):
    with pytest.warns(CanUseToolShadowedWarning, match="never asked about Bash"):
        _session(tmp_path, can_use_tool=_allow, allowed_tools=["Bash", "Read(./src/**)"])


def test_bypass_permissions_shadows_can_use_tool(tmp_path, monkeypatch):
    monkeypatch.setitem(switches.VALUES, "IS_SANDBOX", "1")  # root needs a declared sandbox
    with pytest.warns(CanUseToolShadowedWarning, match="bypassPermissions"):
        _session(tmp_path, can_use_tool=_allow, permission_mode="bypassPermissions")


def test_no_warning_when_the_callback_is_reachable(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CanUseToolShadowedWarning)
        _session(tmp_path, can_use_tool=_allow, allowed_tools=["Bash(git status)"])
        _session(tmp_path, allowed_tools=["Bash"])  # no callback: nothing to shadow
        # a question for the user is asked whatever the rules say
        _session(tmp_path, can_use_tool=_allow, allowed_tools=["AskUserQuestion"])


def test_task_messages_are_system_messages():
    message = TaskNotificationMessage(subtype="task_notification", task_id="t1",
                                      status="stopped")
    assert isinstance(message, SystemMessage)
    assert message.status in TERMINAL_TASK_STATUSES


@pytest.mark.parametrize("field, value", [("sandbox", {"enabled": True}),
                                          ("cli_path", "/usr/bin/claude"),
                                          ("fallback_model", "claude-haiku-5-5")])
def test_an_option_that_does_nothing_here_warns_and_says_why(tmp_path, field, value):
    from fuxi_notebook.options import NO_EFFECT

    with pytest.warns(UserWarning, match=f"{field} has no effect") as caught:
        _session(tmp_path, **{field: value})
    assert NO_EFFECT[field] in str(caught[0].message)


def test_defaults_warn_about_nothing(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _session(tmp_path)
    # only ours: a warning of another library's garbage collection may land here too
    ours = [w for w in caught if "has no effect" in str(w.message)
            or issubclass(w.category, CanUseToolShadowedWarning)]
    assert ours == []


def test_every_public_name_of_the_comparable_sdk_imports_from_the_package():
    import fuxi_notebook

    missing = [name for name in COMPARABLE_NAMES if name not in LEFT_OUT
               and not hasattr(fuxi_notebook, RENAMED.get(name, name))]
    assert missing == []
    exported = set(fuxi_notebook.__all__)
    assert {RENAMED.get(n, n) for n in COMPARABLE_NAMES} - LEFT_OUT <= exported


def test_the_types_module_holds_the_types_too():
    import fuxi_notebook.types as types

    for name in ("HookContext", "HookInput", "HookJSONOutput", "PreToolUseHookInput",
                 "PermissionRequestHookSpecificOutput", "McpServerStatus", "McpStatusResponse",
                 "SessionStore", "AgentDefinition", "TaskStartedMessage", "ThinkingConfig",
                 "SandboxSettings", "SdkPluginConfig", "SystemInitData", "SystemPromptCustom",
                 "SystemPromptPreset", "SessionCronSummary", "StopHookSpecificOutput"):
        assert getattr(types, name) is getattr(__import__("fuxi_notebook"), name), name


def test_the_compatibility_page_says_what_each_name_is_here():
    """The table of docs/compatibility.md names each public name of the comparable SDK."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "compatibility.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    listed = [name for row in rows for name in row.split(" | ")[0].strip("| ").split(", ")]
    assert sorted(name.strip("`") for name in listed) == sorted(COMPARABLE_NAMES)


def test_the_compatibility_page_says_how_each_0_2_189_addition_is_here():
    """Each addition of the comparable SDK 0.2.189 has its line: session_crons declared
    (not run), Transport left out with why, the newer options and the update checks."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "compatibility.md").read_text()
    rows = {line.split(" | ")[0]: line for line in page.splitlines() if line.startswith("| `")}
    hooks = next(row for key, row in rows.items() if "`StopHookInput`" in key)
    assert "`session_crons`" in hooks and "declared, not run" in hooks
    transport = rows["| `Transport`"]
    assert "Left out, on purpose" in transport and "no CLI" in transport
    options = rows["| `ClaudeAgentOptions`"]
    for word in ("verbatim_prompts", "client_app", "SystemPromptCustom", '"snapshot": False'):
        assert word in options, word
    updates = next(row for key, row in rows.items() if "`PermissionUpdate`" in key)
    assert "PermissionUpdateError" in updates and "all together or not at all" in updates


def test_model_aliases_name_current_models(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0001")
    session = build_session(FuxiAgentOptions(model="haiku", cwd=tmp_path))
    assert session.model_name == "claude-haiku-5-5"


async def test_the_endpoint_and_key_in_env_are_used_as_the_comparable_sdk_passes_them(
        tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    from fuxi_notebook import query
    from fuxi_notebook.testing import FakeMessagesServer, Turn, text

    with FakeMessagesServer() as server:
        server.add(Turn([text("from env")]))
        options = FuxiAgentOptions(cwd=tmp_path, model="sonnet", env={
            "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-from-env-0001"})
        results = [m async for m in query(prompt="hi", options=options)]
    assert results[-1].result == "from env"
    assert server.requests[0]["model"] == "claude-sonnet-5-5"
    assert server.request_headers[0]["authorization"] == "Bearer sk-ant-from-env-0001"


async def test_permission_prompts_none_denies_what_would_ask_without_asking(tmp_path):
    from fuxi_notebook._internal.models.script import text, tool_use

    asked: list[str] = []

    async def approve(name, tool_input, context):
        asked.append(name)
        return PermissionResultAllow()

    model = ScriptedModel([[tool_use("Write", {"file_path": "out.txt", "content": "hi"})],
                           [text("DENIED")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, can_use_tool=approve,
                               permission_prompts="none")
    from fuxi_notebook import query

    messages = [m async for m in query(prompt="write it", options=options)]
    assert asked == [] and not (tmp_path / "out.txt").exists()
    assert messages[-1].subtype == "success"  # the session carried on
    denied = model.requests[1].messages[-1]["content"][0]
    assert denied["is_error"]


async def test_persist_session_false_saves_nothing(tmp_path):
    from fuxi_notebook import InMemorySessionStore, list_sessions_from_store, query
    from fuxi_notebook._internal.models.script import text

    store = InMemorySessionStore()
    for persist in (False, True):
        options = FuxiAgentOptions(model=ScriptedModel([[text("OK")]]), cwd=tmp_path,
                                   session_store=store, persist_session=persist)
        [m async for m in query(prompt="hi", options=options)]
        listed = await list_sessions_from_store(store, directory=str(tmp_path))
        assert len(listed) == (1 if persist else 0)


async def test_client_app_is_named_in_every_requests_user_agent(tmp_path, monkeypatch):
    """The comparable SDK 0.2.189's `client_app`: the app built on the SDK, after the
    client's own agent in the User-Agent (there through CLAUDE_AGENT_SDK_CLIENT_APP)."""
    from fuxi_notebook import FuxiAgentOptions, query
    from fuxi_notebook.testing import FakeMessagesServer, Turn, text

    with FakeMessagesServer([Turn([text("hi")])]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # it has an effect now: no warning
            async for _ in query(prompt="hello", options=FuxiAgentOptions(
                    cwd=tmp_path, client_app="my-notebook-app/1.0")):
                pass
        agent = server.request_headers[0]["user-agent"]
    assert agent.endswith(" client-app/my-notebook-app/1.0")
    assert agent.startswith("AsyncAnthropic/Python")  # the client's own comes first


@pytest.mark.parametrize("app", ["two words", "line\nbreak", "", "x" * 300, 7])
def test_a_client_app_a_header_cannot_carry_is_one_line(tmp_path, app):
    from fuxi_notebook.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="client_app must be") as raised:
        _session(tmp_path, client_app=app)
    assert "\n" not in str(raised.value)
