"""fuxi_notebook: a Fuxi-Code-style autonomous agent loop for Python and Jupyter.

The public API mirrors the seed's agent SDK, with `Fuxi` names::

    from fuxi_notebook import query, FuxiAgentOptions, AssistantMessage, ResultMessage

Importing this package costs almost nothing: each public name is imported on first use
(PEP 562), so `%load_ext fuxi_notebook` stays fast; `anthropic`, `jsonschema` and the
shell parser load only when a run needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "UserPromptSubmitHookSpecificOutput": ".hook_types",
    "UserPromptSubmitHookInput": ".hook_types",
    "SyncHookJSONOutput": ".hook_types",
    "SubagentStopHookInput": ".hook_types",
    "SubagentStartHookInput": ".hook_types",
    "StopHookInput": ".hook_types",
    "PreToolUseHookSpecificOutput": ".hook_types",
    "PreToolUseHookInput": ".hook_types",
    "PreCompactHookInput": ".hook_types",
    "PostToolUseHookSpecificOutput": ".hook_types",
    "PostToolUseHookInput": ".hook_types",
    "PostToolUseFailureHookInput": ".hook_types",
    "PermissionRequestHookInput": ".hook_types",
    "NotificationHookInput": ".hook_types",
    "HookJSONOutput": ".hook_types",
    "HookInput": ".hook_types",
    "HookContext": ".hook_types",
    "BaseHookInput": ".hook_types",
    "AsyncHookJSONOutput": ".hook_types",
    "AnthropicModel": ".models",
    "AssistantMessage": ".types",
    "CLIConnectionError": ".errors",
    "CLIJSONDecodeError": ".errors",
    "CLINotFoundError": ".errors",
    "CanUseTool": ".options",
    "ClientNotConnectedError": ".errors",
    "ConfigurationError": ".errors",
    "ContentBlock": ".types",
    "AgentDefinition": ".options",
    "FuxiAgentOptions": ".options",
    "FuxiSDKClient": ".agent",
    "FuxiSDKError": ".errors",
    "HookCallback": ".hooks",
    "HookEvent": ".hooks",
    "HookMatcher": ".hooks",
    "Message": ".types",
    "Model": ".models",
    "ModelError": ".errors",
    "PermissionMode": ".options",
    "PermissionResult": ".options",
    "PermissionResultAllow": ".options",
    "PermissionResultDeny": ".options",
    "PermissionRuleValue": ".options",
    "PermissionUpdate": ".options",
    "ProcessError": ".errors",
    "ResultError": ".errors",
    "ResultMessage": ".types",
    "ScriptedModel": ".models",
    "StreamEvent": ".types",
    "SystemMessage": ".types",
    "TextBlock": ".types",
    "ThinkingBlock": ".types",
    "ToolPermissionContext": ".options",
    "ToolResultBlock": ".types",
    "ToolUseBlock": ".types",
    "UserMessage": ".types",
    "query": ".agent",
}

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .agent import FuxiSDKClient, query
    from .errors import (
        CLIConnectionError,
        ClientNotConnectedError,
        CLIJSONDecodeError,
        CLINotFoundError,
        ConfigurationError,
        FuxiSDKError,
        ModelError,
        ProcessError,
        ResultError,
    )
    from .hook_types import (
        AsyncHookJSONOutput,
        BaseHookInput,
        HookContext,
        HookInput,
        HookJSONOutput,
        NotificationHookInput,
        PermissionRequestHookInput,
        PostToolUseFailureHookInput,
        PostToolUseHookInput,
        PostToolUseHookSpecificOutput,
        PreCompactHookInput,
        PreToolUseHookInput,
        PreToolUseHookSpecificOutput,
        StopHookInput,
        SubagentStartHookInput,
        SubagentStopHookInput,
        SyncHookJSONOutput,
        UserPromptSubmitHookInput,
        UserPromptSubmitHookSpecificOutput,
    )
    from .hooks import HookCallback, HookEvent, HookMatcher
    from .models import AnthropicModel, Model, ScriptedModel
    from .options import (
        CanUseTool,
        FuxiAgentOptions,
        PermissionMode,
        PermissionResult,
        PermissionResultAllow,
        PermissionResultDeny,
        PermissionRuleValue,
        PermissionUpdate,
        ToolPermissionContext,
    )
    from .types import (
        AssistantMessage,
        ContentBlock,
        Message,
        ResultMessage,
        StreamEvent,
        SystemMessage,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fuxi_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext fuxi_notebook`: registers `%%fuxi` (the agent loads on first use)."""
    from .notebook.extension import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext fuxi_notebook`."""
    from .notebook.extension import unload_ipython_extension as unload

    unload(shell)


__all__ = [
    "AgentDefinition",
    "AnthropicModel",
    "AssistantMessage",
    "AsyncHookJSONOutput",
    "BaseHookInput",
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "CanUseTool",
    "ClientNotConnectedError",
    "ConfigurationError",
    "ContentBlock",
    "FuxiAgentOptions",
    "FuxiSDKClient",
    "FuxiSDKError",
    "HookCallback",
    "HookContext",
    "HookEvent",
    "HookInput",
    "HookJSONOutput",
    "HookMatcher",
    "Message",
    "Model",
    "ModelError",
    "NotificationHookInput",
    "PermissionMode",
    "PermissionRequestHookInput",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PostToolUseFailureHookInput",
    "PostToolUseHookInput",
    "PostToolUseHookSpecificOutput",
    "PreCompactHookInput",
    "PreToolUseHookInput",
    "PreToolUseHookSpecificOutput",
    "ProcessError",
    "ResultError",
    "ResultMessage",
    "ScriptedModel",
    "StopHookInput",
    "StreamEvent",
    "SubagentStartHookInput",
    "SubagentStopHookInput",
    "SyncHookJSONOutput",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "UserPromptSubmitHookInput",
    "UserPromptSubmitHookSpecificOutput",
    "__version__",
    "load_ipython_extension",
    "query",
    "unload_ipython_extension",
]
