"""Small helpers shared by the loop tests."""

from __future__ import annotations

from typing import Any

from fuxi_notebook import FuxiAgentOptions, query
from fuxi_notebook._internal.context.compaction import asks_for_summary
from fuxi_notebook.errors import ResultError
from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.types import Message, SystemMessage


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


def _body(request: Any) -> dict[str, Any]:
    return request.to_wire() if hasattr(request, "to_wire") else request


class Agent:
    """A fake model for long sessions: summaries when asked for one, else the next turn
    of its plan (a tool call per turn, then a final answer)."""

    def __init__(self, calls: int, *, command: str = "seq 1 120") -> None:
        self.calls, self.command, self.served = calls, command, 0
        self.summaries: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Turn:
        body = _body(request)
        if asks_for_summary(body["messages"]):
            self.summaries.append(body)
            return Turn([text(f"Summary {len(self.summaries)}: counting with seq; "
                              f"{self.served} calls so far.")])
        self.served += 1
        if self.served > self.calls:
            return Turn([text(f"done after {self.calls} calls")])
        return Turn([text(f"step {self.served}"),
                     tool_use("Bash", {"command": f"{self.command} # {self.served}"})])

    def steps(self) -> list[Any]:
        return [self] * (self.calls * 2 + 20)


def boundaries(messages: list[Any]) -> list[SystemMessage]:
    return [m for m in messages if isinstance(m, SystemMessage)
            and m.subtype == "compact_boundary"]
