"""The session record a `%%fuxi` cell stores in its own outputs (decisions 6, 7, 9).

A record holds only what is the same on every run of the cell: the prompt, the options, this
cell's messages in Messages-API wire form, the approval decisions and a result summary.
Earlier cells are reached through `parent`, never copied, so a notebook grows linearly with
its turns. Everything volatile (cost, usage, timings, timestamps) goes to output metadata,
which nbval ignores; the record itself is compared exactly, so it must be deterministic.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...errors import ConfigurationError
from .redact import redact

if TYPE_CHECKING:
    from ...types import ResultMessage

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_RECORD_BYTES",
    "MAX_TOOL_RESULT_CHARS",
    "OUTPUT_REF",
    "RECORD_MIME",
    "RECORD_VERSION",
    "ApprovalRecord",
    "CellCall",
    "CompactionRecord",
    "ResultSummary",
    "SessionRecord",
    "build_record",
    "image_digest",
    "json_safe",
    "load_record",
    "record_content",
    "record_to_output",
    "summary_line",
]

RECORD_MIME = "application/vnd.fuxi.session.v1+json"
RECORD_VERSION = 1
#: A longer tool result text is stored as its head and tail around a marker.
MAX_TOOL_RESULT_CHARS = 20_000
#: A bigger base64 image (decoded size) is stored as a text placeholder.
MAX_IMAGE_BYTES = 200 * 1024
#: A saved record bigger than this (as JSON) is refused when read back.
MAX_RECORD_BYTES = 20 * 1024 * 1024
#: The source type of an image stored as a reference to an image output of the same cell
#: (a figure the cell shows is not stored a second time inside the record).
OUTPUT_REF = "fuxi_output"

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ApprovalRecord(BaseModel):
    """One permission decision, kept so that replay can re-apply it without asking."""

    model_config = _FROZEN

    tool_use_id: str
    tool_name: str
    decision: Literal["allow", "always_allow", "deny"]
    source: Literal["user", "rule", "policy", "replay"]
    reason: str | None = None
    rule: str | None = None
    #: what the user answered to an AskUserQuestion call
    answers: dict[str, Any] | None = None


class CompactionRecord(BaseModel):
    """One compaction inside a cell's run (see `SessionRecord.compactions`)."""

    model_config = _FROZEN

    at: int
    kept: int
    summary: str
    trigger: Literal["auto", "manual"]
    pre_tokens: int
    post_tokens: int
    turn: int


class CellCall(BaseModel):
    """The notebook cell a cell tool's call named, as it was when the call ran (see
    `SessionRecord.cells`): what a person reads in the transcript instead of an id."""

    model_config = _FROZEN

    #: its position in the notebook, from 0 (InsertCell: the new cell's)
    at: int | None = Field(default=None, ge=0)
    #: where MoveCell put it, from 0
    to: int | None = Field(default=None, ge=0)
    #: its first line with text
    line: str = ""
    #: its source before the call changed it (EditCell, DeleteCell): an edit reads as
    #: the diff of whole lines, a deletion shows what it took
    before: str | None = None
    #: the code RunCell ran (the cell's source as approved)
    ran: str | None = None


#: the most of a cell's first line, and of its source, a record keeps for the transcript
CELL_LINE_CHARS = 200
CELL_SOURCE_CHARS = MAX_TOOL_RESULT_CHARS


class ResultSummary(BaseModel):
    """The deterministic part of a `ResultMessage` (no cost, usage or durations)."""

    model_config = _FROZEN

    subtype: str
    is_error: bool
    num_turns: int
    stop_reason: str | None
    result: str | None
    errors: list[str] | None = None


class SessionRecord(BaseModel):
    """Everything needed to show, continue or replay one `%%fuxi` cell's run."""

    model_config = _FROZEN

    version: Literal[1]
    cell_id: str
    session_id: str
    parent: str | None
    model: str
    prompt: str
    options: dict[str, Any]
    messages: list[dict[str, Any]]
    approvals: list[ApprovalRecord]
    result: ResultSummary
    #: the working directory of the run, so replay on another machine can tell a moved
    #: folder from a real divergence (None in records that predate it)
    cwd: str | None = None
    #: the declared kind (read / edit / execute / ask / network) of each tool the run
    #: called, so exports and transcripts read the tools' own declarations
    kinds: dict[str, str] = {}
    #: tool_use id -> how many outputs (figures, displays) that call showed in the cell:
    #: they sit right after its card, live, in the final outputs and on replay
    shown_outputs: dict[str, int] = {}
    #: tool_use id -> the notebook cell that cell tool's call named, as it was then: the
    #: transcript names it by position and first line (stored only when there is one)
    cells: dict[str, CellCall] = {}
    #: the compactions during this cell's run, in order: `at` = how many of `messages`
    #: came before it, `kept` = how many of the latest messages it kept, the `summary`
    #: that replaced the rest, `trigger`, `pre_tokens`, `post_tokens`, and `turn` (the
    #: model responses before it; replay compacts at the same point with this summary)
    compactions: list[CompactionRecord] = []

    @field_validator("messages")
    @classmethod
    def _wire_messages(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Reject anything that is not a Messages-API message, so replay can trust it."""
        for i, message in enumerate(messages):
            if message.get("role") not in ("user", "assistant"):
                raise ValueError(f"message {i}: role must be 'user' or 'assistant'")
            if not isinstance(message.get("content"), str | list):
                raise ValueError(f"message {i}: content must be a string or a list of blocks")
        return messages


def build_record(*, cell_id: str, session_id: str, parent: str | None, model: str, prompt: str,
                 options: dict[str, Any], messages: list[dict[str, Any]],
                 approvals: Iterable[ApprovalRecord | dict[str, Any]], result: ResultMessage,
                 secrets: Iterable[str] = (), cwd: str | None = None,
                 shown_images: Collection[str] = (),
                 kinds: dict[str, str] | None = None,
                 shown_outputs: Mapping[str, int] | None = None,
                 cells: Mapping[str, Mapping[str, Any]] | None = None,
                 compactions: Iterable[Mapping[str, Any]] = ()) -> SessionRecord:
    """The redacted, size-capped record of one cell's run.

    `messages` must be this cell's part of the conversation only (its prompt message and
    what the run appended). `secrets` are extra strings to redact, e.g. the API key.
    `shown_images` are the `image_digest`s of images the cell displayed as outputs: an
    image tool result among them is stored as a reference to that output. `cells`: the
    cells the cell tools' calls named (`SessionRecord.cells`).
    """
    secrets = tuple(secrets)
    messages = _reference_shown_images(json_safe(messages), frozenset(shown_images))
    summary = {"subtype": result.subtype, "is_error": result.is_error,
               "num_turns": result.num_turns, "stop_reason": result.stop_reason,
               "result": result.result, "errors": list(result.errors) if result.errors else None}
    fields = {
        "version": RECORD_VERSION, "cell_id": cell_id, "session_id": session_id,
        "parent": parent, "model": model,
        "prompt": redact(prompt, secrets=secrets),
        "options": redact(json_safe(options), secrets=secrets),
        "messages": [_shrink_message(m) for m in redact(json_safe(messages), secrets=secrets)],
        "approvals": [redact(_approval_dict(a), secrets=secrets) for a in approvals],
        "result": redact(summary, secrets=secrets),
        "cwd": cwd,
        "kinds": dict(kinds or {}),
        "shown_outputs": {str(k): int(v) for k, v in (shown_outputs or {}).items() if v > 0},
        "cells": {str(k): redact(_capped_cell(v), secrets=secrets)
                  for k, v in (cells or {}).items()},
        "compactions": [redact(json_safe(dict(c)), secrets=secrets) for c in compactions],
    }
    try:
        return SessionRecord.model_validate(fields)
    except ValidationError as exc:
        raise ConfigurationError(f"cannot build a session record: {_explain(exc)}") from None


def record_content(content: str | list[dict[str, Any]] | None, *,
                   secrets: Iterable[str] = ()) -> str | list[dict[str, Any]] | None:
    """A tool result's content as a record stores it (redacted, truncated, images capped).

    Replay compares a re-executed tool's result with the recorded one; passing the live
    result through this first makes the two comparable.
    """
    block = _shrink_block({"type": "tool_result", "content": redact(json_safe(content),
                                                                    secrets=tuple(secrets))})
    return cast("str | list[dict[str, Any]] | None", block.get("content"))


def record_to_output(record: SessionRecord, *,
                     volatile: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`(data, metadata)` for a `display_data` output that stores the record.

    `data` is what nbval compares: the record and a one-line summary. `volatile` (cost,
    usage, durations, timestamps) goes to `metadata`, which nbval ignores.
    """
    # a record without compactions or cell calls is stored as before they existed
    # (byte-stable outputs)
    dumped = record.model_dump(mode="json", exclude={
        name for name in ("compactions", "cells") if not getattr(record, name)})
    data = {RECORD_MIME: dumped, "text/plain": summary_line(record)}
    return data, {"fuxi": redact(json_safe(volatile))}


def _capped_cell(call: Mapping[str, Any]) -> dict[str, Any]:
    """A cell call's texts within the record's caps (head and tail of a long source)."""
    capped = dict(json_safe(dict(call)))
    if isinstance(capped.get("line"), str):
        capped["line"] = capped["line"][:CELL_LINE_CHARS]
    for key in ("before", "ran"):
        if isinstance(capped.get(key), str):
            capped[key] = _truncate(capped[key], CELL_SOURCE_CHARS)
    return capped


def summary_line(record: SessionRecord) -> str:
    """E.g. `fuxi session 3f2a1b9c… · cell c1 · 4 turns · success`."""
    sid = record.session_id if len(record.session_id) <= 8 else record.session_id[:8] + "…"
    turns = record.result.num_turns
    return (f"fuxi session {sid} · cell {record.cell_id} · "
            f"{turns} turn{'' if turns == 1 else 's'} · {record.result.subtype}")


def load_record(data: Mapping[str, Any] | str) -> SessionRecord:
    """The record from a saved output's data bundle, or from the record JSON itself.

    Raises ConfigurationError for a record this version cannot read, with what is wrong.
    """
    if isinstance(data, Mapping) and RECORD_MIME in data:
        data = data[RECORD_MIME]
    if isinstance(data, str) and len(data) > MAX_RECORD_BYTES:
        raise ConfigurationError(f"fuxi session record is too large ({len(data)} bytes; the "
                                 f"limit is {MAX_RECORD_BYTES})")
    if isinstance(data, str):  # some writers store JSON MIME data as a string
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise ConfigurationError(f"fuxi session record is not valid JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigurationError(
            f"fuxi session record must be a JSON object, not {type(data).__name__}")
    version = data.get("version")
    if version != RECORD_VERSION:
        raise ConfigurationError(
            f"unsupported fuxi session record version {version!r}: this fuxi_notebook reads "
            f"version {RECORD_VERSION}; re-run the cell or use a matching fuxi_notebook")
    try:
        return SessionRecord.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigurationError(f"invalid fuxi session record: {_explain(exc)}") from None


def json_safe(value: Any) -> Any:
    """A JSON-compatible copy of `value`, deterministic for unknown objects.

    Unknown objects become `<TypeName>` (callables `<function qualname>`), never a repr
    with a memory address, which would change on every run.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((json_safe(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, PurePath):
        return str(value)
    if callable(value):
        return f"<function {getattr(value, '__qualname__', type(value).__name__)}>"
    return f"<{type(value).__name__}>"


def image_digest(data: str) -> str:
    """The identity of a base64 image (line breaks ignored), shared by outputs and records."""
    return hashlib.sha256("".join(data.split()).encode("ascii", "replace")).hexdigest()


def _reference_shown_images(messages: list[Any], shown: frozenset[str]) -> list[Any]:
    """Images in tool results that the cell also shows as outputs become references."""
    if not shown:
        return messages
    out = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            message = {**message, "content": [_reference_block(b, shown) for b in content]}
        out.append(message)
    return out


def _reference_block(block: Any, shown: frozenset[str]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return {**block, "content": [_reference_block(b, shown) for b in block["content"]]}
    if _is_base64_media(block) and block["type"] == "image":
        digest = image_digest(block["source"]["data"])
        if digest in shown:
            return {"type": "image", "source": {"type": OUTPUT_REF, "sha256": digest,
                                                "media_type": block["source"].get("media_type")}}
    return block


def _approval_dict(approval: ApprovalRecord | dict[str, Any]) -> dict[str, Any]:
    if isinstance(approval, ApprovalRecord):
        return approval.model_dump()
    return cast("dict[str, Any]", json_safe(approval))


def _shrink_message(message: dict[str, Any]) -> dict[str, Any]:
    """The message with oversized tool results and images cut down to size."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    return {**message, "content": [_shrink_block(b) for b in content]}


def _shrink_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    if _is_base64_media(block):
        return _media_placeholder(block) or block
    if block.get("type") != "tool_result":
        return block
    content = block.get("content")
    if isinstance(content, str):
        return {**block, "content": _truncate(content)}
    if isinstance(content, list):
        return {**block, "content": [_shrink_inner(b) for b in content]}
    return block


def _shrink_inner(block: Any) -> Any:
    """A block inside a tool result: text is truncated, big media replaced."""
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"),
                                                                            str):
        return {**block, "text": _truncate(block["text"])}
    return _shrink_block(block)


def _truncate(text: str, limit: int = MAX_TOOL_RESULT_CHARS) -> str:
    """Head and tail of `text` around a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    head, tail = limit // 2, limit // 2
    omitted = len(text) - head - tail
    marker = f"\n\n[… {omitted} characters omitted from the fuxi session record …]\n\n"
    return text[:head] + marker + text[-tail:]


def _is_base64_media(block: dict[str, Any]) -> bool:
    source = block.get("source")
    return (block.get("type") in ("image", "document") and isinstance(source, dict)
            and source.get("type") == "base64" and isinstance(source.get("data"), str))


def _media_placeholder(block: dict[str, Any]) -> dict[str, Any] | None:
    """A text block standing in for a base64 image or document over the size limit."""
    data = block["source"]["data"]
    size = len(data) * 3 // 4 - data[-2:].count("=")
    if size <= MAX_IMAGE_BYTES:
        return None
    return {"type": "text", "text": f"[{block['type']} omitted: {round(size / 1024)} KB]"}


def _explain(exc: ValidationError) -> str:
    """Pydantic's errors as one line: `messages.0: role must be ...; version: ...`."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "record"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
