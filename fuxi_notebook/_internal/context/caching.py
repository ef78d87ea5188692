"""Prompt-cache breakpoints for a request.

Three `cache_control` markers (the API allows four):
1. the end of the stable prefix (last system block, else last tool), warm all session;
2. the last block of the last message, so the next request reads this one from cache;
3. the last block of the previous request's last message, so a turn that adds more than
   the API's ~20-block lookback still finds the previous cache entry.
The history itself is never mutated: marked blocks are copies.
"""

from __future__ import annotations

from typing import Any

__all__ = ["with_cache_breakpoints"]

_EPHEMERAL = {"type": "ephemeral"}


def _marked(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": _EPHEMERAL}


#: id(prefix block) -> (the block, its marked copy): the prefix is the same every turn of
#: a session, and so is its marked copy (which the request body then encodes once)
_PREFIX_MARKED: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}


def _marked_prefix(block: dict[str, Any]) -> dict[str, Any]:
    marked = _marked(block)
    kept = _PREFIX_MARKED.get(id(block))
    if kept is not None and kept[0] is block and kept[1] == marked:
        return kept[1]
    if len(_PREFIX_MARKED) > 16:  # a few sessions at once: their prompts are large
        _PREFIX_MARKED.clear()
    _PREFIX_MARKED[id(block)] = (block, marked)
    return marked


def _mark_message(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not content:
        return message
    return {**message, "content": [*content[:-1], _marked(content[-1])]}


def with_cache_breakpoints(
    system: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of `system`, `tools` and `messages` with cache breakpoints set."""
    if system:
        system = [*system[:-1], _marked_prefix(system[-1])]
    elif tools:
        tools = [*tools[:-1], _marked_prefix(tools[-1])]
    messages = list(messages)
    if messages:
        messages[-1] = _mark_message(messages[-1])
    if len(messages) >= 3:
        messages[-3] = _mark_message(messages[-3])
    return system, tools, messages
