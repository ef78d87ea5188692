"""Content blocks and messages the loop yields, spelled as in the seed.

These are plain dataclasses so that `isinstance` checks work exactly as in the seed's
examples and importing them costs nothing. The wire mapping (to and from the Messages API
dict shape) lives here too, because it is the one place that knows both spellings.
This module imports nothing from the rest of the package; the package's other public
types (hook TypedDicts, options, MCP, sessions, ...) are reachable from here too, loaded
on first use, as the comparable SDK's `types` module holds them.
"""

from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "Message",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "block_from_wire",
    "block_to_wire",
    "new_uuid",
]


def new_uuid() -> str:
    """A fresh identifier for messages and sessions."""
    return str(_uuid.uuid4())


@dataclass
class TextBlock:
    """Text the model wrote."""

    text: str
    type: Literal["text"] = "text"


@dataclass
class ThinkingBlock:
    """Extended thinking; `signature` must travel back to the API unchanged."""

    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@dataclass
class ToolUseBlock:
    """A tool call the model requested."""

    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass
class ToolResultBlock:
    """The result of one tool call, as sent back to the model."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None
    type: Literal["tool_result"] = "tool_result"


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock


@dataclass
class UserMessage:
    """A user turn: the prompt, or tool results fed back to the model."""

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | None = None


@dataclass
class AssistantMessage:
    """One content block of a model response; blocks of one response share `message_id`."""

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class SystemMessage:
    """Session lifecycle event; `init` comes first and carries the session metadata."""

    subtype: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ResultMessage:
    """The end of one agent run: outcome, text (on success only), usage and cost."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[dict[str, Any]] | None = None
    #: the call a PreToolUse hook deferred (`permissionDecision: "defer"`), which ended
    #: the run (a `DeferredToolUse` with `id`, `name`, `input`; None otherwise)
    deferred_tool_use: Any = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None
    #: the `origin` a streaming-input message was stamped with (e.g. `{"kind": "human"}`),
    #: echoed on the result of the run it started; None for an unstamped prompt
    origin: dict[str, Any] | None = None


@dataclass
class StreamEvent:
    """A raw Messages API stream event (only with `include_partial_messages=True`)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


Message = UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent


def block_to_wire(block: ContentBlock) -> dict[str, Any]:
    """The Messages API dict for a block."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ThinkingBlock(thinking=thinking, signature=signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case ToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": input_}
        case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error):
            wire: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid}
            if content is not None:
                wire["content"] = content
            if is_error:
                wire["is_error"] = True
            return wire
    raise TypeError(f"not a content block: {block!r}")


def block_from_wire(wire: dict[str, Any]) -> ContentBlock | None:
    """The typed block for a Messages API dict; None for block types we do not model."""
    kind = wire.get("type")
    if kind == "text":
        return TextBlock(text=wire.get("text", ""))
    if kind == "thinking":
        return ThinkingBlock(thinking=wire.get("thinking", ""), signature=wire.get("signature", ""))
    if kind == "tool_use":
        return ToolUseBlock(id=wire["id"], name=wire["name"], input=wire.get("input") or {})
    if kind == "tool_result":
        return ToolResultBlock(
            tool_use_id=wire["tool_use_id"],
            content=wire.get("content"),
            is_error=wire.get("is_error"),
        )
    return None


def __getattr__(name: str) -> Any:
    """The package's other public types by name (hook TypedDicts, options, MCP, session
    and subagent types, ...), as the comparable SDK's `types` module holds them; loaded on
    first use. Functions (`query`, `tool`, ...) are not types and are not found here."""
    import importlib
    import inspect

    from ._internal.common.public_names import EXPORTS

    module = EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, "fuxi_notebook"), name)
        if not inspect.isfunction(value):
            return value
    raise AttributeError(f"module 'fuxi_notebook.types' has no attribute {name!r}")
