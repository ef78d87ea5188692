"""The scenario format shared by `ScriptedModel` and the fake Messages API server.

A script is a list of steps. A `Turn` is one model response (wire content blocks, an
optional stop reason and usage). A `Fault` makes the fake server misbehave for one request
(HTTP error, stream cut, stall, `error` event). A callable step receives the request body
and returns a Turn or a Fault, for responses that depend on what the loop sent.

JSON form (what `load_script` reads)::

    {"steps": [
        {"content": [{"type": "text", "text": "Let me look."},
                     {"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}}]},
        {"fault": {"status": 529, "retry_after": 0.01}},
        {"content": [{"type": "text", "text": "Done."}]}
    ]}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

__all__ = [
    "Fault",
    "Step",
    "Turn",
    "load_script",
    "text",
    "thinking",
    "tool_use",
    "turn_events",
]


@dataclass
class Turn:
    """One scripted model response.

    Attributes:
        content: wire blocks. A `tool_use` input may be a dict or a raw JSON string (to
            script invalid JSON); a missing `id` is filled in deterministically.
        stop_reason: None = `tool_use` if there is a tool call, else `end_turn`.
        usage: overrides for the usage the server or model reports.
    """

    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def resolved_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        has_tool = any(b.get("type") == "tool_use" for b in self.content)
        return "tool_use" if has_tool else "end_turn"


@dataclass
class Fault:
    """A failure the fake server produces instead of (or in the middle of) a response.

    Attributes:
        status: answer with this HTTP status and an API error body (e.g. 429, 500, 529).
        retry_after: seconds, sent as `retry-after` with an HTTP error.
        headers: extra response headers (e.g. `{"x-should-retry": "false"}`).
        error_type: the API error type in the body or the `error` event.
        message: the API error message.
        cut_after_events: stream this many SSE events of `turn`, then drop the connection.
        stall_seconds: stream `cut_after_events` events (0 if unset), then go silent.
        error_event: stream `cut_after_events` events, then send an SSE `error` event.
        turn: the response that the cut/stall/error stream starts with.
    """

    status: int | None = None
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error_type: str | None = None
    message: str | None = None
    cut_after_events: int | None = None
    stall_seconds: float | None = None
    error_event: bool = False
    turn: Turn | None = None


Step = Turn | Fault | Callable[[dict[str, Any]], "Turn | Fault"]


def text(value: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": value}


def thinking(value: str, signature: str = "sig") -> dict[str, Any]:
    """A thinking block."""
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(name: str, input: dict[str, Any] | str, id: str | None = None) -> dict[str, Any]:
    """A tool_use block; `input` may be a raw string to script invalid JSON."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": input}
    if id is not None:
        block["id"] = id
    return block


def _chunks(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def turn_events(
    turn: Turn,
    *,
    message_id: str,
    model: str,
    usage: dict[str, Any],
    tool_ids: Callable[[], str],
    chunk: int = 24,
) -> list[dict[str, Any]]:
    """The raw stream events the Messages API would send for `turn`.

    Args:
        usage: the `message_start` usage (input and cache counts); `output_tokens` in
            `message_delta` comes from `turn.usage` or a length estimate.
        tool_ids: supplies ids for tool_use blocks scripted without one.
        chunk: characters per text / JSON delta.
    """
    events: list[dict[str, Any]] = [{
        "type": "message_start",
        "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }]
    out_chars = 0
    for index, block in enumerate(turn.content):
        kind = block.get("type")
        if kind in _BLOCK_EVENTS:
            produced, chars = _BLOCK_EVENTS[kind](index, block, chunk, tool_ids)
        else:
            produced, chars = [_start(index, block)], 0
        events.extend(produced)
        events.append({"type": "content_block_stop", "index": index})
        out_chars += chars
    output_tokens = turn.usage.get("output_tokens", max(1, out_chars // 4))
    events.append({
        "type": "message_delta",
        "delta": {"stop_reason": turn.resolved_stop_reason(), "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    })
    events.append({"type": "message_stop"})
    return events


Events = list[dict[str, Any]]


def _text_events(index: int, block: dict[str, Any], chunk: int,
                 tool_ids: Callable[[], str]) -> tuple[Events, int]:
    """Text deltas; a cited text's citations follow as `citations_delta`s."""
    events = [_start(index, {"type": "text", "text": ""})]
    events += [_delta(index, {"type": "text_delta", "text": piece})
               for piece in _chunks(block["text"], chunk)]
    events += [_delta(index, {"type": "citations_delta", "citation": citation})
               for citation in block.get("citations") or []]
    return events, len(block["text"])


def _thinking_events(index: int, block: dict[str, Any], chunk: int,
                     tool_ids: Callable[[], str]) -> tuple[Events, int]:
    events = [_start(index, {"type": "thinking", "thinking": "", "signature": ""})]
    events += [_delta(index, {"type": "thinking_delta", "thinking": piece})
               for piece in _chunks(block["thinking"], chunk)]
    events.append(_delta(index, {"type": "signature_delta",
                                 "signature": block.get("signature", "sig")}))
    return events, len(block["thinking"])


def _tool_use_events(index: int, block: dict[str, Any], chunk: int,
                     tool_ids: Callable[[], str]) -> tuple[Events, int]:
    """A client tool's or a server tool's (`server_tool_use`, id `srvtoolu_...`) call:
    the block starts with an empty input, which then streams as JSON."""
    raw = block["input"]
    raw_json = raw if isinstance(raw, str) else json.dumps(raw)
    kind = block["type"]
    tool_id = block.get("id") or ("srv" if kind == "server_tool_use" else "") + tool_ids()
    events = [_start(index, {"type": kind, "id": tool_id, "name": block["name"],
                             "input": {}}),
              _delta(index, {"type": "input_json_delta", "partial_json": ""})]
    events += [_delta(index, {"type": "input_json_delta", "partial_json": piece})
               for piece in _chunks(raw_json, chunk)]
    return events, len(raw_json)


#: how each block type streams; any other block (e.g. `web_search_tool_result`) arrives
#: whole in its `content_block_start`, as the API sends server tool results
_BLOCK_EVENTS = {"text": _text_events, "thinking": _thinking_events,
                 "tool_use": _tool_use_events, "server_tool_use": _tool_use_events}


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def step_from_dict(data: dict[str, Any]) -> Turn | Fault:
    """One step from its JSON form."""
    if "fault" in data:
        spec = dict(data["fault"])
        inner = spec.pop("turn", None)
        return Fault(**spec, turn=step_from_dict(inner) if inner else None)  # type: ignore[arg-type]
    return Turn(
        content=list(data.get("content", [])),
        stop_reason=data.get("stop_reason"),
        usage=dict(data.get("usage", {})),
    )


def load_script(source: str | Path | list[dict[str, Any]] | dict[str, Any]) -> list[Turn | Fault]:
    """Read a script from a JSON file path, a JSON document, or its parsed form."""
    if isinstance(source, str) and source.lstrip().startswith(("{", "[")):
        source = json.loads(source)
    elif isinstance(source, str | Path):
        source = json.loads(Path(source).read_text(encoding="utf-8"))
    parsed = cast("list[dict[str, Any]] | dict[str, Any]", source)  # JSON: a list or an object
    steps = parsed["steps"] if isinstance(parsed, dict) else parsed
    return [step_from_dict(step) for step in steps]
