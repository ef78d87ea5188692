"""Small helpers shared by the loop tests."""

from __future__ import annotations

from typing import Any

from fuxi_notebook import FuxiAgentOptions, query
from fuxi_notebook.errors import ResultError
from fuxi_notebook.types import Message


async def collect(prompt: Any, options: FuxiAgentOptions) -> tuple[list[Message], Exception | None]:
    """All messages of a query, and the exception it raised (if any)."""
    messages: list[Message] = []
    try:
        async for message in query(prompt=prompt, options=options):
            messages.append(message)
    except ResultError as error:
        return messages, error
    return messages, None


def block_texts(message: dict[str, Any]) -> list[str | None]:
    """Each content block's text (None for a block without one) of a stored message; a
    transcript keeps a plain prompt as a string, which is one text block here."""
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [block.get("text") for block in content]


def tool_results(request_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message of a request."""
    last = request_messages[-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""
