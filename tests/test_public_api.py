"""The public API: every exported name resolves, `__all__` is sorted, imports stay lazy."""

from __future__ import annotations

import subprocess
import sys

import fuxi_notebook
from fuxi_notebook import ScriptedModel

#: The public API, pinned: adding or removing a name is a decision this test makes visible.
EXPORTED = [
    "AgentDefinition", "AnthropicModel", "AssistantMessage", "AsyncHookJSONOutput", "BaseHookInput",
    "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError", "CanUseTool",
    "ClientNotConnectedError", "ConfigurationError", "ContentBlock", "FuxiAgentOptions",
    "FuxiSDKClient", "FuxiSDKError", "HookCallback", "HookContext", "HookEvent", "HookInput",
    "HookJSONOutput", "HookMatcher", "Message", "Model", "ModelError",
    "NotificationHookInput", "PermissionMode", "PermissionRequestHookInput",
    "PermissionResult", "PermissionResultAllow", "PermissionResultDeny",
    "PermissionRuleValue", "PermissionUpdate", "PostToolUseFailureHookInput",
    "PostToolUseHookInput", "PostToolUseHookSpecificOutput", "PreCompactHookInput",
    "PreToolUseHookInput", "PreToolUseHookSpecificOutput", "ProcessError", "ResultError",
    "ResultMessage", "ScriptedModel", "StopHookInput", "StreamEvent", "SubagentStartHookInput",
    "SubagentStopHookInput", "SyncHookJSONOutput", "SystemMessage", "TextBlock",
    "ThinkingBlock", "ToolPermissionContext", "ToolResultBlock", "ToolUseBlock",
    "UserMessage", "UserPromptSubmitHookInput", "UserPromptSubmitHookSpecificOutput",
    "__version__", "load_ipython_extension", "query", "unload_ipython_extension",
]


def test_the_exported_names_are_pinned_and_every_one_resolves():
    assert fuxi_notebook.__all__ == EXPORTED
    for name in EXPORTED:
        assert getattr(fuxi_notebook, name) is not None


def test_unknown_attribute_raises_attribute_error():
    try:
        fuxi_notebook.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_no_heavy_module():
    code = ("import sys, fuxi_notebook; heavy = [m for m in ('anthropic', 'jsonschema', "
            "'tree_sitter', 'pathspec', 'fuxi_notebook.agent') if m in sys.modules]; "
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
    assert error.result is failed and str(error) == "Reached maximum number of turns (2)"


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
    from fuxi_notebook.models.script import text, tool_use
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
