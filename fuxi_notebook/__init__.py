"""fuxi_notebook: a Fuxi-Code-style autonomous agent loop for Python and Jupyter.

The public API mirrors the seed's agent SDK, with `Fuxi` names::

    from fuxi_notebook import query, FuxiAgentOptions, AssistantMessage, ResultMessage

Importing this package is cheap: `anthropic` and `jsonschema` load on first use.
"""

from .agent import FuxiSDKClient, query
from .errors import (
    ClientNotConnectedError,
    ConfigurationError,
    FuxiSDKError,
    ModelError,
    ResultError,
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

__version__ = "0.1.0"

__all__ = [
    "AnthropicModel",
    "AssistantMessage",
    "CanUseTool",
    "ClientNotConnectedError",
    "ConfigurationError",
    "ContentBlock",
    "FuxiAgentOptions",
    "FuxiSDKClient",
    "FuxiSDKError",
    "HookCallback",
    "HookEvent",
    "HookMatcher",
    "Message",
    "Model",
    "ModelError",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "ResultError",
    "ResultMessage",
    "ScriptedModel",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "__version__",
    "query",
]
