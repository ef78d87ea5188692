"""The Model protocol: the one seam between the loop and any language model.

A model receives a `ModelRequest` (already in the Messages API's shape) and streams back
`RawEvent`s (the API's stream events, for `include_partial_messages`), a `BlockDone` as
each content block completes (so the loop can yield it at once), and finally one
`ModelResponse`. Implementations: `AnthropicModel` (the real API) and `ScriptedModel`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["BlockDone", "Model", "ModelRequest", "ModelResponse", "ModelStreamItem", "RawEvent"]


@dataclass
class ModelRequest:
    """One Messages API request; every field is already in wire form."""

    model: str
    messages: list[dict[str, Any]]
    max_tokens: int
    system: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None
    tool_choice: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The request body (without `stream`)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
        }
        if self.system:
            body["system"] = self.system
        if self.tools:
            body["tools"] = self.tools
        if self.thinking is not None:
            body["thinking"] = self.thinking
        if self.output_config is not None:
            body["output_config"] = self.output_config
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        return body


@dataclass
class ModelResponse:
    """A complete model response.

    Attributes:
        content: wire blocks; a `tool_use` whose input was not valid JSON carries the raw
            text under `"_invalid_input"` and an empty `input`.
        incomplete: the stream broke after some blocks completed; `content` holds only
            the completed blocks.
        api_duration_ms: time spent waiting on the model, retries included.
    """

    id: str
    model: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, Any]
    incomplete: bool = False
    api_duration_ms: int = 0


@dataclass
class RawEvent:
    """One raw stream event as a dict."""

    event: dict[str, Any]


@dataclass
class BlockDone:
    """A content block that has completed (wire form) and its index in the response."""

    index: int
    block: dict[str, Any]


ModelStreamItem = RawEvent | BlockDone | ModelResponse


@runtime_checkable
class Model(Protocol):
    """Anything that can stream a response to a `ModelRequest`."""

    @property
    def name(self) -> str:
        """The model id used when a request does not name one."""
        ...

    def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        """Stream the response; the last item is the `ModelResponse`. An async generator:
        the loop closes it (`aclose`) when it stops reading early."""
        ...
