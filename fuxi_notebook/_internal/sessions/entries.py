"""The transcript entry format a `SessionStore` keeps, and the conversation it makes.

One entry per Messages-API message of the conversation::

    {"type": "user" | "assistant", "uuid": "<uuid>", "parentUuid": "<uuid>" | null,
     "session_id": "<id>", "timestamp": "2026-05-08T10:00:00.123Z", "cwd": "/abs/dir",
     "message": {"role": "user" | "assistant", "content": [<API content blocks>]},
                                         # (a plain-text prompt: "content": "<text>")
     "message_uuids": ["<uuid>", ...],   # optional: the uuids of the AssistantMessage /
                                         # UserMessage objects a run yielded for it
     "gitBranch": "main"}                # optional

and metadata entries without a uuid, of which the last of each type counts::

    {"type": "custom-title", "customTitle": "...", "session_id": ..., "timestamp": ...}
    {"type": "tag", "tag": "..." | null, "session_id": ..., "timestamp": ...}
    {"type": "summary", "summary": "..."}            (read, never written here)

A subagent's conversation is kept as a side transcript of its session (subpath
`subagents/agent-<agentId>`) in the same format; its message entries also carry
`"isSidechain": true`, `agentId`, `agentType`, `parentToolUseId` (the Agent call that
started it) and, for a subagent started by another subagent, `parentAgentId`.

Entries are only ever appended. The conversation is the chain from the newest message
entry back along `parentUuid`: resuming at an earlier message, or a later run rewriting a
message (results still owed at the end of a run travel again with the next prompt),
appends a branch whose newest entry then leads. Tool results still owed when a run ended
are the chain's last entry (a user message of tool results only) and come back as
`Conversation.pending_results`.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterable
from typing import Any, TypedDict, TypeGuard

from ...errors import ConfigurationError
from ..common.reminders import REMINDER_OPEN

__all__ = ["REMINDER_OPEN", "SUBAGENT_PREFIX", "SessionStoreEntry", "chain",
           "conversation_parts", "find_entry", "fold_summary", "is_message", "is_prompt",
           "message_entry",
           "meta_entry", "now_iso", "remapped", "text_of", "timestamp_ms"]

#: a subagent's transcript is the side transcript (SessionKey `subpath`) this + its id
SUBAGENT_PREFIX = "subagents/agent-"


class _Typed(TypedDict):
    type: str


class SessionStoreEntry(_Typed, total=False):
    """One transcript entry as a `SessionStore` keeps it (the format is in the module
    docstring). Only `type` is always there; a store keeps every key, known or not, as
    it was given, since later versions may add some."""

    uuid: str
    parentUuid: str | None
    session_id: str
    timestamp: str
    cwd: str | None
    message: dict[str, Any]
    message_uuids: list[str]
    gitBranch: str
    customTitle: str | None
    tag: str | None
    summary: str
    isSidechain: bool
    agentId: str
    agentType: str
    parentToolUseId: str | None
    parentAgentId: str


def now_iso() -> str:
    """UTC, milliseconds, `Z`: what the comparable SDK's transcripts hold."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def timestamp_ms(entry: dict[str, Any]) -> int | None:
    """An entry's timestamp in milliseconds since the epoch (None if it has none)."""
    stamp = entry.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def message_entry(message: dict[str, Any], *, uuid: str, parent: str | None,
                  session_id: str, cwd: str | None, aliases: Iterable[str] = (),
                  git_branch: str | None = None, timestamp: str | None = None
                  ) -> dict[str, Any]:
    """The entry of one API message. A prompt that is one plain text block is kept as a
    string, as the comparable CLI keeps it (code reading `message["content"]` of a
    transcript compares it with the prompt); loading makes it a block again."""
    content = message.get("content")
    if (message["role"] == "user" and isinstance(content, list) and len(content) == 1
            and isinstance(content[0], dict) and content[0].keys() == {"type", "text"}
            and content[0]["type"] == "text" and isinstance(content[0]["text"], str)):
        message = {**message, "content": content[0]["text"]}
    entry: dict[str, Any] = {"type": message["role"], "uuid": uuid, "parentUuid": parent,
                             "session_id": session_id, "timestamp": timestamp or now_iso(),
                             "cwd": cwd, "message": message}
    aliases = list(aliases)
    if aliases:
        entry["message_uuids"] = aliases
    if git_branch:
        entry["gitBranch"] = git_branch
    return entry


def meta_entry(kind: str, value: str | None, session_id: str) -> dict[str, Any]:
    """A `custom-title` or `tag` entry."""
    field = {"custom-title": "customTitle", "tag": "tag"}[kind]
    return {"type": kind, field: value, "session_id": session_id, "timestamp": now_iso()}


def is_message(entry: Any) -> TypeGuard[dict[str, Any]]:
    return (isinstance(entry, dict) and entry.get("type") in ("user", "assistant")
            and isinstance(entry.get("uuid"), str) and isinstance(entry.get("message"), dict)
            and entry["message"].get("role") in ("user", "assistant"))


def is_prompt(entry: dict[str, Any]) -> bool:
    """A user message entry someone typed (or a host sent), not one the loop added
    within a turn: tool results and `<system-reminder>`s (hook feedback, a reminder to
    answer in the schema) do not count."""
    if not is_message(entry) or entry["type"] != "user":
        return False
    content = entry["message"].get("content")
    return any(_typed(b) for b in _blocks(content))


def _typed(block: dict[str, Any]) -> bool:
    if block.get("type") == "tool_result":
        return False
    return block.get("type") != "text" or not str(block.get("text", "")).startswith(
        REMINDER_OPEN)


def find_entry(entries: list[dict[str, Any]], uuid: str) -> dict[str, Any] | None:
    """The message entry with this uuid, or that a run showed under it (`message_uuids`)."""
    for entry in reversed(entries):
        if is_message(entry) and (entry["uuid"] == uuid or uuid in (
                entry.get("message_uuids") or ())):
            return entry
    return None


def chain(entries: list[dict[str, Any]], at: str | None = None) -> list[dict[str, Any]]:
    """The message entries of the conversation, oldest first: from the newest message
    entry (or the one `at` names) back along `parentUuid`.

    Raises ConfigurationError when `at` names no message of the session."""
    messages = [e for e in entries if is_message(e)]
    if not messages:
        return []
    leaf = messages[-1] if at is None else find_entry(messages, at)
    if leaf is None:
        raise ConfigurationError(f"no message {at} in this session")
    by_uuid = {e["uuid"]: e for e in messages}
    found, seen = [], set()
    current: dict[str, Any] | None = leaf
    while current is not None and current["uuid"] not in seen:
        seen.add(current["uuid"])
        found.append(current)
        parent = current.get("parentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None
    return found[::-1]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def conversation_parts(entries: list[dict[str, Any]]
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                  list[tuple[str, dict[str, Any]]]]:
    """`(history, pending_results, written)` of a chain of entries.

    Consecutive messages of one role are joined (a transcript may hold a response block
    by block); `written` pairs each joined message with the uuid of its last entry, which
    is where the conversation's next message hangs. Raises ConfigurationError when the
    messages are not a conversation the API would accept."""
    from .history import check_history

    written: list[tuple[str, dict[str, Any]]] = []
    for entry in entries:
        role = entry["message"]["role"]
        blocks = copy.deepcopy(_blocks(entry["message"].get("content")))
        if written and written[-1][1]["role"] == role:
            blocks = [*written[-1][1]["content"], *blocks]
            written.pop()
        written.append((entry["uuid"], {"role": role, "content": blocks}))
    history = [copy.deepcopy(message) for _, message in written]
    pending: list[dict[str, Any]] = []
    if history and history[-1]["role"] == "user" and all(
            b.get("type") == "tool_result" for b in history[-1]["content"]):
        pending = history.pop()["content"]
    problem = check_history(history, pending)
    if problem:
        raise ConfigurationError(f"the saved messages are not a valid conversation: {problem}")
    return history, pending, written


def text_of(message: dict[str, Any]) -> str:
    """What the user typed in a message (text blocks, never added context)."""
    return "\n".join(b.get("text", "") for b in _blocks(message.get("content"))
                     if b.get("type") == "text" and isinstance(b.get("text"), str)
                     and not b["text"].startswith(REMINDER_OPEN)).strip()


def fold_summary(entries: list[dict[str, Any]],
                 previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a listing shows of a session: `summary` (the custom title, else a recorded
    summary, else the first prompt), `first_prompt`, `custom_title`, `tag`, `cwd`,
    `git_branch`, `created_at` and `last_modified` (milliseconds).

    Folding is incremental: `previous` (what an earlier call returned) plus `entries`
    (appended since) gives the same as folding all entries at once, so a store can keep
    the summary up to date on each append instead of reading the session to list it."""
    data: dict[str, Any] = {"first_prompt": None, "custom_title": None, "tag": None,
                            "cwd": None, "git_branch": None, "created_at": None,
                            "last_modified": None, "recorded_summary": None,
                            **(previous or {})}
    for entry in entries:
        kind = entry.get("type")
        stamp = timestamp_ms(entry)
        if stamp is not None:
            data["created_at"] = data["created_at"] if data["created_at"] is not None else stamp
            data["last_modified"] = max(stamp, data["last_modified"] or stamp)
        if kind == "custom-title":
            data["custom_title"] = entry.get("customTitle") or None
        elif kind == "tag":
            data["tag"] = entry.get("tag") or None
        elif kind == "summary" and isinstance(entry.get("summary"), str):
            data["recorded_summary"] = entry["summary"]
        elif is_message(entry):
            data["cwd"] = data["cwd"] or entry.get("cwd")
            data["git_branch"] = entry.get("gitBranch") or data["git_branch"]
            if data["first_prompt"] is None and entry["type"] == "user":
                data["first_prompt"] = text_of(entry["message"]) or None
    data["summary"] = (data["custom_title"] or data["recorded_summary"]
                       or data["first_prompt"] or "")
    return data


def remapped(entries: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """A copy of a chain under another session id, with new uuids (parents remapped), so
    the copy and the original never share a message id."""
    from ...types import new_uuid

    new_ids = {e["uuid"]: new_uuid() for e in entries}
    copies = []
    for entry in entries:
        twin = {k: v for k, v in copy.deepcopy(entry).items() if k != "message_uuids"}
        twin.update(uuid=new_ids[entry["uuid"]], session_id=session_id,
                    parentUuid=new_ids.get(entry.get("parentUuid") or ""))
        copies.append(twin)
    return copies
