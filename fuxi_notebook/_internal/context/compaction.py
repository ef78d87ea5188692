"""Compaction, the pure part: where to cut a conversation, what to ask the summariser,
and the conversation that results.

A compacted conversation is `[summary message] + the latest turns, word for word`. The
cut is always just before an assistant message, so every tool call on either side keeps
its result on the same side (a call and its result are in consecutive messages), the
kept part starts with the model's turn right after the user-role summary, and a call
still waiting for its result stays with the latest turns. The system prompt and the tool
definitions are not part of the history and never change, so their cache stays warm.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..common.reminders import SUMMARY_OPEN, is_summary
from ..tools.truncate import cap_head_tail
from .tokens import IMAGE_TOKENS, estimate_tokens

__all__ = ["SUMMARY_OPEN", "SUMMARY_REQUEST_OPEN", "Compaction", "asks_for_summary",
           "compacted", "cut_point", "fit_results", "is_summary", "summary_message",
           "summary_request_messages", "summary_text"]


#: how the request for a summary begins (a test's fake model recognises it by this)
SUMMARY_REQUEST_OPEN = "The conversation above is about to be replaced by a summary"

_INSTRUCTIONS = SUMMARY_REQUEST_OPEN + """, because it is nearing the
context window. Write that summary now. It is all that will remain of the conversation
above (the latest turns are kept word for word after it), so it must let the work go on
without asking the user to repeat anything. Include:
1. The user's requests and intent, in their own words where it matters.
2. Decisions made, and why; constraints and preferences the user stated.
3. Files, variables, functions and commands involved: paths and names exactly, and what
   was read, changed or created.
4. Errors met and how they were resolved; test results.
5. What was being done last, and the next steps still open.
If the project memory (FUXI.md) in the system prompt says what a summary must keep,
follow it. Do not call tools. Answer with the summary only, in at most {words} words."""


@dataclass(frozen=True)
class Compaction:
    """One compaction of a conversation, as the stream reports it and a record keeps it.

    Attributes:
        summary: the summariser's text.
        kept: how many of the latest messages were kept word for word.
        trigger: "auto" (the window was nearly full) or "manual" (`/compact`).
        pre_tokens: the conversation's size before, in tokens.
        post_tokens: its size after (estimated).
        turn: the model responses of the run before it happened (replay compacts a
            recorded run at the same point).
    """

    summary: str
    kept: int
    trigger: str
    pre_tokens: int
    post_tokens: int
    turn: int = 0

    def as_record(self) -> dict[str, Any]:
        return {"summary": self.summary, "kept": self.kept, "trigger": self.trigger,
                "pre_tokens": self.pre_tokens, "post_tokens": self.post_tokens,
                "turn": self.turn}


def cut_point(history: list[dict[str, Any]], keep_tokens: int) -> int | None:
    """Where the kept part begins: the earliest assistant message (after a user one)
    from which the rest fits in `keep_tokens`, else the last assistant message (the last
    exchange is always kept). None when there is nothing before it to summarise."""
    candidates = {i for i in range(1, len(history)) if history[i]["role"] == "assistant"
                  and history[i - 1]["role"] == "user"}
    if not candidates:
        return None
    size = 0
    chosen = max(candidates)
    sizes = [estimate_tokens(message) for message in history]
    for index in range(len(history) - 1, 0, -1):
        size += sizes[index]
        if size > keep_tokens:
            break
        if index in candidates:
            chosen = index
    return chosen


def summary_request_messages(history: list[dict[str, Any]], cut: int, *,
                             instructions: str | None, words: int,
                             budget: int) -> list[dict[str, Any]]:
    """The messages of the summary request: the part to summarise, then the request
    (joined to its last message, a user one, so the prefix the previous requests cached
    is read again). Tool results are cut down if the part would not fit in `budget`."""
    part = copy.deepcopy(history[:cut])
    ask = _INSTRUCTIONS.format(words=words)
    if instructions:
        ask += f"\n\nThe user asked for this summary with these instructions:\n{instructions}"
    _shrink_results(part, budget - estimate_tokens(ask))
    last = part[-1]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    part[-1] = {"role": "user", "content": [*blocks, {"type": "text", "text": ask}]}
    return part


def asks_for_summary(messages: list[dict[str, Any]]) -> bool:
    """Whether a request's `messages` are a compaction's request for a summary."""
    if not messages or not isinstance(messages[-1].get("content"), list):
        return False
    last = messages[-1]["content"][-1] if messages[-1]["content"] else {}
    return str(last.get("text", "")).startswith(SUMMARY_REQUEST_OPEN)


def summary_text(content: list[dict[str, Any]]) -> str:
    """The summary in a response (its text blocks; a tool call is ignored)."""
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


def summary_message(summary: str) -> dict[str, Any]:
    """The user message that stands for the summarised part."""
    text = (f"{SUMMARY_OPEN} The earlier part was replaced by this summary; the messages "
            f"after it are the latest turns, word for word.\n\n<summary>\n{summary}\n"
            "</summary>")
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def compacted(history: list[dict[str, Any]], cut: int, summary: str) -> list[dict[str, Any]]:
    """The conversation after a compaction: the summary, then `history[cut:]`."""
    return [summary_message(summary), *history[cut:]]


def fit_results(results: list[dict[str, Any]], budget: int) -> int:
    """Cut the text of tool results (in place) so that together they take at most about
    `budget` tokens; each cut says so. Returns how many were cut. The biggest results
    give way first: a small result is never cut to make room for a huge one."""
    sizes = [estimate_tokens(result) for result in results]
    if sum(sizes) <= budget:
        return 0
    caps = _fair_shares(sizes, budget)
    cut = 0
    for result, size, cap in zip(results, sizes, caps, strict=True):
        if size > cap:
            _cut_result(result, cap)
            cut += 1
    return cut


def _fair_shares(sizes: list[int], budget: int) -> list[int]:
    """Water-filling: results under an equal share keep their size, the rest share what
    is left equally."""
    caps = list(sizes)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    left, count = budget, len(sizes)
    for position, index in enumerate(order):
        share = left // (count - position)
        if sizes[index] <= share:
            left -= sizes[index]
        else:
            for rest in order[position:]:
                caps[rest] = share
            break
    return caps


_NOTICE = ("[This result was cut to fit the model's context window: about {tokens} tokens "
           "of it are kept. Ask for a narrower part (a line range, a filter, a summary) to "
           "see the rest.]")


def _cut_result(result: dict[str, Any], cap: int) -> None:
    content = result.get("content")
    blocks = ([{"type": "text", "text": content}] if isinstance(content, str)
              else list(content or []))
    notice = _NOTICE.format(tokens=cap)
    room = max(100, cap - estimate_tokens(notice))
    kept: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "text":
            chars = max(200, room * 3)
            text = cap_head_tail(block.get("text", ""), chars)
            room -= estimate_tokens(text)
            kept.append({**block, "text": text})
        elif block.get("type") in ("image", "document") and room >= IMAGE_TOKENS:
            room -= estimate_tokens(block)
            kept.append(block)
        elif block.get("type") in ("image", "document"):
            kept.append({"type": "text", "text": f"[an {block['type']} was left out]"})
        if room <= 0:
            break
    result["content"] = [*kept, {"type": "text", "text": notice}]


def _shrink_results(messages: list[dict[str, Any]], budget: int) -> None:
    """Cut tool results of `messages` (in place) until they fit in `budget`."""
    total = estimate_tokens(messages)
    if total <= budget:
        return
    results = [block for message in messages if isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result"]
    if not results:
        return
    room = max(len(results) * 50, estimate_tokens(results) - (total - budget))
    fit_results(results, room)
