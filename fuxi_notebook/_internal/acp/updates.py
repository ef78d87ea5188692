"""What a session yields, as ACP session updates (the `session/update` notifications).

- Text and thinking stream as message and thought chunks, from the stream events, through
  the one streaming redaction (`sessions/redact.StreamRedactor`): the end of a chunk that
  could be the start of a secret waits for the next chunk of its block (or the block's
  end), so a secret is never sent in pieces, nor its rest after its start.
- A tool call starts once (`tool_call`), whichever names it first: the assistant message
  (a permission ask waits for it, so the text before the call is sent first: agent.py)
  or the permission ask. Its title and its whole input as content (shown.py: what an
  approver reads), kind (from the tool's declaration), locations (from its declared
  reach) and, for Write and Edit, a diff of the whole file, hidden characters escaped.
- A result ends it (`tool_call_update`: completed or failed), its text redacted and capped.
- A task-list change is the plan; a conversation loaded again replays as chunks and calls.

Everything here passes the same redaction and caps as what a cell shows: ACP is one more
channel out of the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from acp import schema

from ...types import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ..common.reminders import REMINDER_OPEN, is_summary
from ..common.visible import reveal
from ..sessions.redact import StreamRedactor, redact, redact_text, redacted_head
from ..tools.base import reach_of
from ..tools.task_list import CHANGING_TOOLS, TASK_TOOLS, parse_checklist
from . import shown

__all__ = ["MAX_DIFF_BYTES", "MAX_RESULT_CHARS", "SessionUpdates", "acp_kind", "title_of"]

Update = Any  # one of the protocol's session update models

#: a file bigger than this gets no diff in its Edit/Write call (its location only)
MAX_DIFF_BYTES = 1024 * 1024
#: the text of one result sent to the client (the model got it whole)
MAX_RESULT_CHARS = 64 * 1024
#: our declared kinds as ACP's; some tools say more by their name
_KINDS = {"read": "read", "edit": "edit", "execute": "execute", "network": "fetch",
          "ask": "other"}
_BY_NAME = {"Glob": "search", "Grep": "search", "ToolSearch": "search", "WebSearch": "search",
            "DeleteCell": "delete", "MoveCell": "move", **{t: "think" for t in TASK_TOOLS}}


def acp_kind(name: str, declared_kind: str | None) -> str:
    """The ACP kind of a call of tool `name` (its declared kind, refined by its name)."""
    return _BY_NAME.get(name) or _KINDS.get(declared_kind or "execute", "other")


def title_of(name: str, tool_input: Mapping[str, Any]) -> str:
    """What a client lists for the call (shown.py: the tool, the input that says most, and
    what the line leaves out)."""
    return shown.title(name, tool_input)


class _Held:
    """The streaming blocks' redaction (`sessions/redact.StreamRedactor`, one a block):
    each delta redacted once, the possible start of a secret held until the next delta of
    its block or the block's end."""

    def __init__(self) -> None:
        self.blocks: dict[int, StreamRedactor] = {}

    def add(self, index: int, text: str) -> str:
        return self.blocks.setdefault(index, StreamRedactor()).feed(text)

    def flush(self, index: int | None = None) -> str:
        if index is not None:
            block = self.blocks.pop(index, None)
            return block.flush() if block is not None else ""
        rest = "".join(block.flush() for block in self.blocks.values())
        self.blocks.clear()
        return rest


class SessionUpdates:
    """One ACP session's translator: `session` is the loop's Session (its declarations
    and working folder), read when a call starts."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.started: set[str] = set()
        self._names: dict[str, str] = {}
        self._kinds: dict[int, str] = {}  # stream block index -> "text" / "thinking"
        self._held = _Held()
        self._streamed = False  # text came as deltas since the last assistant message
        #: text was sent for this prompt, so the next text block starts a new paragraph
        #: (a chat shows one prompt's text chunks as one message)
        self._said = False
        self._new_block = False

    # -- the live stream ------------------------------------------------------------

    def of(self, message: Any) -> list[Update]:
        """The updates one yielded message makes ([] for most)."""
        if isinstance(message, StreamEvent):
            return self._event(message) if message.parent_tool_use_id is None else []
        if isinstance(message, AssistantMessage):
            return self._assistant(message)
        if isinstance(message, ResultMessage):  # the next prompt's answer: a new message
            self._said = self._new_block = False
            return []
        if isinstance(message, UserMessage) and isinstance(message.content, list):
            return [update for block in message.content if isinstance(block, ToolResultBlock)
                    for update in self.result(block.tool_use_id, block.content,
                                              bool(block.is_error))]
        return []

    def _event(self, item: StreamEvent) -> list[Update]:
        event = item.event
        kind, index = event.get("type"), event.get("index", 0)
        if kind == "content_block_start":
            block_type = (event.get("content_block") or {}).get("type")
            if block_type in ("text", "thinking"):
                self._kinds[index] = block_type
            self._new_block = self._new_block or block_type == "text"
            return []
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                self._streamed = True
                return self._chunk("text", self._held.add(index, str(delta.get("text", ""))))
            if delta.get("type") == "thinking_delta":
                return self._chunk("thinking",
                                   self._held.add(index, str(delta.get("thinking", ""))))
            return []
        if kind == "content_block_stop":
            return self._chunk(self._kinds.pop(index, "text"), self._held.flush(index))
        if kind == "message_stop":
            return self._chunk("text", self._held.flush())
        return []

    def _chunk(self, kind: str, text: str) -> list[Update]:
        if not text:
            return []
        if kind == "thinking":
            return [schema.AgentThoughtChunk(session_update="agent_thought_chunk",
                                             content=schema.TextContentBlock(type="text",
                                                                             text=text))]
        if self._new_block and self._said:  # another block's text: its own paragraph
            text = "\n\n" + text.lstrip("\n")
        self._said, self._new_block = True, False
        return [schema.AgentMessageChunk(session_update="agent_message_chunk",
                                         content=schema.TextContentBlock(type="text",
                                                                         text=text))]

    def _assistant(self, message: AssistantMessage) -> list[Update]:
        updates: list[Update] = []
        streamed, self._streamed = self._streamed, False
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                updates.extend(self.start(block.id, block.name, block.input))
            elif not streamed and message.parent_tool_use_id is None and isinstance(
                    block, TextBlock):  # not streamed: an error's own text
                self._new_block = True
                updates.extend(self._chunk("text", redact_text(str(block.text))))
        return updates

    # -- tool calls -----------------------------------------------------------------

    def start(self, call_id: str, name: str, tool_input: dict[str, Any]) -> list[Update]:
        """The call's `tool_call`, the first time it is named ([] after)."""
        if call_id in self.started:
            return []
        self.started.add(call_id)
        self._names[call_id] = name
        return [schema.ToolCallStart(session_update="tool_call", **self.call_fields(
            call_id, name, tool_input), status="pending")]

    def call_fields(self, call_id: str, name: str, tool_input: dict[str, Any], *,
                    shown_too: Mapping[str, str] | None = None, reason: str | None = None
                    ) -> dict[str, Any]:
        """What describes a call (its start and the permission ask both carry it): the
        title, and as content the diff of a Write or Edit and the whole input (shown.py);
        an ask adds what the call does beyond its input (`shown_too`) and why it asks."""
        declared = self.session.permissions.declared.get(name)
        kind = acp_kind(name, declared.kind if declared is not None else None)
        fields: dict[str, Any] = {"tool_call_id": call_id, "title": title_of(name, tool_input),
                                  "kind": kind, "raw_input": redact(tool_input)}
        paths = self._paths(declared, tool_input)
        if paths:
            fields["locations"] = [schema.ToolCallLocation(path=p) for p in paths]
        diff = self._diff(name, tool_input)
        described = shown.described(
            name, tool_input, in_diff=("content",) if diff is not None and name == "Write"
            else (), shown=shown_too, reason=reason)
        fields["content"] = [*([diff] if diff is not None else []), schema.ContentToolCallContent(
            type="content", content=schema.TextContentBlock(type="text", text=described))]
        return fields

    def _paths(self, declared: Any, tool_input: dict[str, Any]) -> list[str]:
        reach = reach_of(declared, tool_input)
        if reach is None:
            return []
        cwd = Path(self.session.tool_ctx.cwd)
        found = []
        for written in (*reach.writes, *reach.reads):
            path = Path(written).expanduser()
            found.append(str(path if path.is_absolute() else cwd / path))
        return list(dict.fromkeys(found))

    def _diff(self, name: str, tool_input: dict[str, Any]) -> Any:
        """Write's and Edit's change of the whole file (None: no diff to show)."""
        path_text = tool_input.get("file_path")
        if name not in ("Write", "Edit") or not isinstance(path_text, str):
            return None
        path = Path(path_text).expanduser()
        path = path if path.is_absolute() else Path(self.session.tool_ctx.cwd) / path
        old = _read(path)
        if name == "Write":
            new = tool_input.get("content")
            if not isinstance(new, str) or len(new) > MAX_DIFF_BYTES:
                return None
        else:
            before, after = tool_input.get("old_string"), tool_input.get("new_string")
            if not isinstance(before, str) or not isinstance(after, str):
                return None
            if old is not None and before and before in old:
                new = old.replace(before, after, -1 if tool_input.get("replace_all") else 1)
            else:  # a new file, or one the edit will not match: the fragment is what we know
                old, new = (before or None), after
        return schema.FileEditToolCallContent(  # what hides or reorders text, escaped
            type="diff", path=str(path),
            old_text=reveal(redact_text(old)).text if old is not None else None,
            new_text=reveal(redact_text(new)).text)

    def open_calls(self) -> list[str]:
        """The calls started and not ended (an interrupted prompt ends them failed)."""
        return list(self._names)

    def result(self, call_id: str, content: Any, is_error: bool) -> list[Update]:
        """The call's end: completed or failed, with what it returned."""
        name = self._names.pop(call_id, "")
        updates: list[Update] = [schema.ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id,
            status="failed" if is_error else "completed", content=_content(content),
            raw_output=_capped_text(content))]
        if name in CHANGING_TOOLS and not is_error:
            checklist = parse_checklist(content)
            if checklist is not None:
                updates.append(schema.AgentPlanUpdate(session_update="plan", entries=[
                    schema.PlanEntry(content=redact_text(item.subject), priority="medium",
                                     status=item.status)  # type: ignore[arg-type]
                    for item in checklist]))
        return updates

    # -- a loaded conversation ------------------------------------------------------

    def history(self, messages: Iterable[Mapping[str, Any]]) -> list[Update]:
        """A conversation replayed for a client that loads it (`session/load`): the
        user's prompts, the model's text and thinking, each call and its result."""
        updates: list[Update] = []
        for message in messages:
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
                content if isinstance(content, list) else [])
            if message.get("role") == "user":
                if not is_summary(dict(message)):
                    updates.extend(self._user_history(blocks))
                continue
            for block in blocks:
                kind = block.get("type")
                if kind in ("text", "thinking"):
                    self._new_block = kind == "text"
                    updates.extend(self._chunk(kind, redact_text(str(block.get(kind, "")))))
                elif kind == "tool_use":
                    given = block.get("input")
                    updates.extend(self.start(str(block.get("id")), str(block.get("name")),
                                              dict(given) if isinstance(given, Mapping) else {}))
        return updates

    def _user_history(self, blocks: list[dict[str, Any]]) -> list[Update]:
        updates: list[Update] = []
        for block in blocks:
            if block.get("type") == "tool_result":
                updates.extend(self.result(str(block.get("tool_use_id")), block.get("content"),
                                           bool(block.get("is_error"))))
            elif block.get("type") == "text" and not str(block.get("text", "")).startswith(
                    REMINDER_OPEN):
                self._said = False  # a prompt: the answer after it is a new message
                updates.append(schema.UserMessageChunk(
                    session_update="user_message_chunk", content=schema.TextContentBlock(
                        type="text", text=redact_text(str(block["text"])))))
        return updates


def _read(path: Path) -> str | None:
    """The file's text for a diff (None: no such regular file, or too large for one);
    through the bounded reader, so a device or a FIFO is never read."""
    from ..common.reading import read_inside

    try:
        read = read_inside(path, None, MAX_DIFF_BYTES)
    except (OSError, UnicodeDecodeError, ValueError):  # Outside is a ValueError
        return None
    return read.text if read is not None and not read.truncated else None


def _capped_text(content: Any) -> str:
    if isinstance(content, list):
        text = "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, Mapping) and b.get("type") == "text")
    else:
        text = "" if content is None else str(content)
    shown, left = redacted_head(text, MAX_RESULT_CHARS)  # redacted whole, then cut
    return f"{shown}\n… ({left:,} more characters went to the model)" if left else shown


def _content(content: Any) -> list[Any]:
    """A result's text and images as tool-call content."""
    found: list[Any] = []
    text = _capped_text(content)
    if text:
        found.append(schema.ContentToolCallContent(
            type="content", content=schema.TextContentBlock(type="text", text=text)))
    for block in content if isinstance(content, list) else []:
        source = block.get("source") if isinstance(block, Mapping) else None
        if isinstance(block, Mapping) and block.get("type") == "image" and isinstance(
                source, Mapping) and source.get("type") == "base64":
            found.append(schema.ContentToolCallContent(type="content", content=(
                schema.ImageContentBlock(type="image", data=str(source.get("data", "")),
                                         mime_type=str(source.get("media_type", ""))))))
    return found
