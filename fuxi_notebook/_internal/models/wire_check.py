"""What the Messages API rejects in a request, checked offline.

`ScriptedModel` and the fake server (`testing.FakeMessagesServer`) answer such a request
with the error the real API gives (HTTP 400 / 413), so a test that produces an invalid
conversation fails the way production would, instead of passing against a lenient fake.
Tools too: names outside `^[a-zA-Z0-9_-]{1,128}$` or repeated, every tool deferred
(`defer_loading`), a `tool_reference` (tool search) naming a tool the request lacks, and
server tools of an unknown type, with the wrong name, or (web search/fetch) given both
`allowed_domains` and `blocked_domains`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from ..common.media import image_type

__all__ = ["MAX_REQUEST_BYTES", "TOOL_NAME", "request_problem"]

#: The API's request size limit (413 request_too_large above it).
MAX_REQUEST_BYTES = 32 * 1024 * 1024

_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: a tool name the API accepts, as its error message spells the pattern...
_TOOL_NAME_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
#: ...and as a check (`\Z`: "$" would let a trailing newline through)
TOOL_NAME = re.compile(_TOOL_NAME_PATTERN[:-1] + r"\Z")
#: server tool types are `<kind>_<date>`; kind -> the name the API requires (None: free)
_SERVER_TYPE = re.compile(r"([a-z_0-9]+?)_(\d{8})")
_SERVER_TOOLS: dict[str, str | None] = {
    "web_search": "web_search", "web_fetch": "web_fetch", "code_execution": "code_execution",
    "bash": "bash", "memory": "memory", "text_editor": None,
    "tool_search_tool_regex": "tool_search_tool_regex",
    "tool_search_tool_bm25": "tool_search_tool_bm25", "computer": None,
    "computer_toolset": None, "browser_toolset": None}


def request_problem(body: dict[str, Any], *, size: int | None = None) -> tuple[int, str] | None:
    """`(status, message)` the API would answer `body` with, or None if it is valid."""
    if size is None:
        size = len(json.dumps(body, default=str))
    if size > MAX_REQUEST_BYTES:
        return 413, f"request size {size} exceeds the limit of {MAX_REQUEST_BYTES} bytes"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return 400, "messages: at least one message is required"
    problem = _tools_problem(body.get("tools"))
    if problem:
        return 400, problem
    for index, message in enumerate(messages):
        problem = _message_problem(index, message, messages) or _reference_problem(
            index, message, _tool_names(body.get("tools")))
        if problem:
            return 400, problem
    return None


def _tools_problem(tools: Any) -> str | None:
    """Tool names the API refuses, and deferral it cannot serve (every tool deferred)."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    seen: set[str] = set()
    deferred = 0
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{index}: Input should be a valid dictionary"
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):  # `$`: "x\n" too
            return f"tools.{index}.name: String should match pattern '{_TOOL_NAME_PATTERN}'"
        if name in seen:
            return f"tools: Tool names must be unique ({name!r} appears twice)"
        problem = _server_tool_problem(index, tool)
        if problem:
            return problem
        seen.add(name)
        flag = tool.get("defer_loading", False)
        if not isinstance(flag, bool):
            return f"tools.{index}.defer_loading: Input should be a valid boolean"
        deferred += flag
    if tools and deferred == len(tools):
        return "tools: at least one tool must not have defer_loading set to true"
    return None


def _server_tool_problem(index: int, tool: dict[str, Any]) -> str | None:
    """A typed (server) tool: a type the API knows, the name it requires, and for web
    search/fetch at most one of `allowed_domains` / `blocked_domains`."""
    kind = tool.get("type")
    if kind is None or kind == "custom":
        return None
    base = _SERVER_TYPE.fullmatch(kind) if isinstance(kind, str) else None
    if base is None or base.group(1) not in _SERVER_TOOLS:
        return (f"tools.{index}: Input tag {kind!r} found using 'type' does not match any of "
                "the expected tags (a custom tool or a known server tool type)")
    required = _SERVER_TOOLS[base.group(1)]
    if required is not None and tool.get("name") != required:
        return f"tools.{index}.name: Input should be {required!r} for a {kind} tool"
    if base.group(1) in ("web_search", "web_fetch"):
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            return (f"tools.{index}: allowed_domains and blocked_domains cannot be used "
                    "together; specify only one of them")
        uses = tool.get("max_uses")
        if uses is not None and (isinstance(uses, bool) or not isinstance(uses, int)
                                 or uses < 1):
            return f"tools.{index}.max_uses: Input should be greater than 0"
    return None


def _tool_names(tools: Any) -> set[str]:
    return {t["name"] for t in tools or [] if isinstance(t, dict) and isinstance(
        t.get("name"), str)}


def _reference_problem(index: int, message: Any, names: set[str]) -> str | None:
    """A `tool_reference` lives in a tool result and names a tool of the request."""
    if not isinstance(message, dict):
        return None
    for number, block in enumerate(_blocks(message)):
        if not isinstance(block, dict):
            continue
        where = f"messages.{index}.content.{number}"
        if block.get("type") == "tool_reference":
            return f"{where}: `tool_reference` blocks are only allowed inside `tool_result`"
        inner = block.get("content") if block.get("type") == "tool_result" else None
        for position, part in enumerate(inner if isinstance(inner, list) else []):
            if isinstance(part, dict) and part.get("type") == "tool_reference" and (
                    part.get("tool_name") not in names):
                return (f"{where}.content.{position}: `tool_reference` names "
                        f"{part.get('tool_name')!r}, which is not among the request's tools")
    return None


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(
        content if isinstance(content, list) else [])


def _message_problem(index: int, message: Any, messages: list[Any]) -> str | None:
    where = f"messages.{index}"
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        role = message.get("role") if isinstance(message, dict) else None
        return f"{where}.role: Input should be 'user' or 'assistant' (got {role!r})"
    if index == 0 and message["role"] != "user":
        return f"{where}: the first message must use the 'user' role"
    if index and isinstance(messages[index - 1], dict) and (
            messages[index - 1].get("role") == message["role"]):
        return f"{where}: roles must alternate between 'user' and 'assistant'"
    if not isinstance(message.get("content"), str | list):
        return f"{where}.content: Input should be a string or a list of content blocks"
    for number, block in enumerate(_blocks(message)):
        problem = _image_problem(block)
        if problem:
            return f"{where}.content.{number}: {problem}"
    if message["role"] == "assistant":
        return _answered(index, message, messages)
    return _results_expected(index, message, messages)


def _tool_ids(message: dict[str, Any], kind: str, key: str) -> list[str]:
    return [str(b.get(key)) for b in _blocks(message) if isinstance(b, dict)
            and b.get("type") == kind]


def _answered(index: int, message: dict[str, Any], messages: list[Any]) -> str | None:
    calls = _tool_ids(message, "tool_use", "id")
    if not calls or index == len(messages) - 1:
        return None
    following = messages[index + 1]
    results = _tool_ids(following, "tool_result", "tool_use_id") if isinstance(
        following, dict) else []
    missing = [c for c in calls if c not in results]
    if missing:
        return (f"messages.{index + 1}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message.")
    return None


def _results_expected(index: int, message: dict[str, Any], messages: list[Any]) -> str | None:
    results = _tool_ids(message, "tool_result", "tool_use_id")
    if not results:
        return None
    kinds = [b.get("type") for b in _blocks(message) if isinstance(b, dict)]
    first_other = next((i for i, kind in enumerate(kinds) if kind != "tool_result"), len(kinds))
    if "tool_result" in kinds[first_other:]:
        return (f"messages.{index}.content: `tool_result` blocks must come first in the "
                "content, before any other block")
    previous = messages[index - 1] if index else None
    calls = _tool_ids(previous, "tool_use", "id") if isinstance(previous, dict) and (
        previous.get("role") == "assistant") else []
    unexpected = [r for r in results if r not in calls]
    if unexpected:
        return (f"messages.{index}.content: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {', '.join(unexpected)}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message.")
    if len(set(results)) != len(results):
        return f"messages.{index}.content: a `tool_use_id` is answered more than once"
    return None


def _image_problem(block: Any) -> str | None:
    if not isinstance(block, dict):
        return None
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        for inner in block["content"]:
            problem = _image_problem(inner)
            if problem:
                return problem
        return None
    source = block.get("source")
    if block.get("type") != "image" or not isinstance(source, dict):
        return None
    if source.get("type") != "base64":
        return None if source.get("type") == "url" else (
            f"image source type {source.get('type')!r} is not supported")
    media = source.get("media_type")
    if media not in _MEDIA_TYPES:
        return f"image media_type {media!r} is not one of {', '.join(_MEDIA_TYPES)}"
    try:
        head = base64.b64decode(str(source.get("data", ""))[:64], validate=True)
    except (binascii.Error, ValueError):
        return "image data is not valid base64"
    if image_type(head) != media:
        return f"Image does not match the provided media type {media}"
    return None
