"""Messages API response shapes for the fake server: error bodies, faults, messages.

Pure functions, kept apart from the server's connection handling so each stays small.
"""

from __future__ import annotations

from typing import Any

from .._internal.models.accumulate import Accumulator
from .._internal.models.script import Fault, Turn, text

__all__ = [
    "DEFAULT_CUT_TURN",
    "ERROR_TYPES",
    "STATUS_FOR_TYPE",
    "authenticated",
    "error_body",
    "fault_error",
    "final_usage",
    "is_stream_fault",
    "message_from_events",
]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
STATUS_FOR_TYPE = {kind: status for status, kind in ERROR_TYPES.items()}

DEFAULT_CUT_TURN = Turn(content=[text(
    "This scripted response streams in many small pieces so that a fault can cut it off "
    "in the middle of a content block."
)])
"""What a cut, stall or error-event Fault streams when it has no `turn` of its own."""


def error_body(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    """The API's error body; the client reads `error.type` and `error.message` from it."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }


def fault_error(fault: Fault, default_type: str = "api_error") -> tuple[str, str]:
    """The (error type, message) a fault reports."""
    kind = fault.error_type or ERROR_TYPES.get(fault.status or 0, default_type)
    return kind, fault.message or f"fake server fault: {kind}"


def message_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming Message for a turn, folded from its stream events."""
    accumulator = Accumulator()
    for event in events:
        accumulator.feed(event)
    message = dict(events[0]["message"])
    for block in accumulator.completed:
        block.pop("_invalid_input", None)
    message.update(
        content=accumulator.completed,
        stop_reason=accumulator.stop_reason,
        usage=accumulator.usage,
    )
    return message


def final_usage(events: list[dict[str, Any]]) -> dict[str, Any]:
    """message_start usage with message_delta's output_tokens: what the client ends with."""
    usage = dict(events[0]["message"]["usage"])
    for event in events:
        if event["type"] == "message_delta":
            usage.update(event.get("usage") or {})
    return usage


def is_stream_fault(fault: Fault) -> bool:
    """The fault starts a 200 stream (cut, stall, error event) rather than an HTTP error."""
    return (fault.cut_after_events is not None or fault.stall_seconds is not None
            or fault.error_event)


def authenticated(headers: dict[str, str]) -> bool:
    """The 2.x client sends `Authorization: Bearer`; curl-style callers send x-api-key."""
    return headers.get("authorization", "").startswith("Bearer ") or "x-api-key" in headers
