"""A conversation's history rebuilt from the records of the cells that made it.

Each record holds only its own cell's messages; joined along the `parent` links they give
back the conversation a new cell continues (after a kernel restart, `--resume`, `--fork`).
The result is checked as the Messages API would check it, so a tampered record becomes a
clear error instead of a rejected request.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...errors import ConfigurationError
from .record import OUTPUT_REF, CompactionRecord, SessionRecord, image_digest

__all__ = ["check_history", "extend_history", "follow_parents", "images_in_outputs",
           "join_records", "resolve_output_refs"]


def follow_parents(last: str, find: Callable[[str], SessionRecord | str]
                   ) -> list[SessionRecord]:
    """The records of the conversation that ends with cell `last`, oldest first.

    `find(cell_id)` gives that cell's record, or why it has none. Raises
    ConfigurationError when a link leads nowhere or round in a circle.
    """
    records: list[SessionRecord] = []
    seen: set[str] = set()
    current: str | None = last
    while current is not None:
        if current in seen:
            raise ConfigurationError(f"the session records link in a circle at cell {current}")
        seen.add(current)
        found = find(current)
        if isinstance(found, str):
            raise ConfigurationError(f"cell {current} {found}, so the conversation that leads "
                                     "to it cannot be rebuilt")
        records.append(found)
        current = found.parent
    return records[::-1]


def join_records(records: Sequence[SessionRecord],
                 outputs: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`(history, pending_results)` of the conversation the records make, oldest first.

    A cell whose run ended with tool results still owed stores them as its last message,
    and the next cell's first message carries them again with its prompt: the two are
    merged. Results still owed at the end are returned as `pending_results`, to be sent
    with the next prompt. `outputs` (cell id -> saved outputs) resolves figure references.

    Raises ConfigurationError when the joined messages are not a valid conversation.
    """
    history: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for record in records:
        history, pending = extend_history(history, pending, record,
                                          (outputs or {}).get(record.cell_id, ()))
    return history, pending


def extend_history(history: list[dict[str, Any]], pending: list[dict[str, Any]],
                   record: SessionRecord, outputs: Sequence[Mapping[str, Any]] = ()
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`(history, pending_results)` after the cell of `record` (inputs are not changed)."""
    joined = list(history)
    if pending:
        joined.append({"role": "user", "content": list(pending)})
    images = images_in_outputs(outputs)
    compactions = {c.at: c for c in record.compactions}
    messages = resolve_output_refs(copy.deepcopy(record.messages), images)
    for index, message in enumerate([*messages, None]):
        if index in compactions:  # the conversation was compacted here: as it was live
            joined = _compacted(joined, compactions[index], record.cell_id)
        if message is not None:
            _append(joined, message)
    owed: list[dict[str, Any]] = []
    if joined and joined[-1]["role"] == "user" and _only_results(joined[-1]["content"]):
        owed = list(joined.pop()["content"])
    problem = check_history(joined, owed)
    if problem:
        raise ConfigurationError(f"the saved session records do not make a valid "
                                 f"conversation at cell {record.cell_id}: {problem}")
    return joined, owed


def _compacted(history: list[dict[str, Any]], compaction: CompactionRecord,
               cell_id: str) -> list[dict[str, Any]]:
    """`history` after a recorded compaction: its summary, then the kept messages."""
    from ..context.compaction import compacted

    cut = len(history) - compaction.kept
    if compaction.kept < 1 or cut < 1:
        raise ConfigurationError(f"the session record of cell {cell_id} holds a compaction "
                                 f"that keeps {compaction.kept} of {len(history)} messages")
    return compacted(history, cut, compaction.summary)


def _append(history: list[dict[str, Any]], message: dict[str, Any]) -> None:
    if not history or history[-1]["role"] != message["role"] or message["role"] != "user":
        history.append(message)
        return
    earlier = _blocks(history[-1]["content"])
    later = _blocks(message["content"])
    owed = {b.get("tool_use_id") for b in earlier if b.get("type") == "tool_result"}
    again = {b.get("tool_use_id") for b in later if b.get("type") == "tool_result"}
    if owed and owed <= again:  # the next prompt carried the owed results itself
        history[-1] = message
    else:
        history[-1] = {"role": "user", "content": earlier + later}


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _only_results(content: str | list[dict[str, Any]]) -> bool:
    blocks = _blocks(content)
    return bool(blocks) and all(b.get("type") == "tool_result" for b in blocks)


def check_history(history: list[dict[str, Any]],
                  pending: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """What the Messages API would reject when this conversation goes on (the history, the
    results still owed, then a next prompt), or None. The same check as the offline API's
    (`models/wire_check.py`), so a rebuilt conversation is valid by the API's own rules."""
    from ..models.wire_check import request_problem

    probe = {"type": "text", "text": "(the next prompt)"}
    messages = list(history)
    if pending:
        messages.append({"role": "user", "content": [*pending, probe]})
    elif not messages or messages[-1].get("role") == "assistant":
        messages.append({"role": "user", "content": [probe]})
    problem = request_problem({"messages": messages}, size=0)
    return problem[1] if problem is not None else None


def images_in_outputs(outputs: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """`image_digest` -> (media type, base64 data) of the images among saved outputs."""
    found: dict[str, tuple[str, str]] = {}
    for output in outputs:
        data = output.get("data") if isinstance(output, Mapping) else None
        if not isinstance(data, Mapping):
            continue
        for mime in ("image/png", "image/jpeg"):
            payload = data.get(mime)
            if isinstance(payload, list):
                payload = "".join(str(p) for p in payload)
            if isinstance(payload, str) and payload:
                found[image_digest(payload)] = (mime, "".join(payload.split()))
    return found


def resolve_output_refs(messages: list[dict[str, Any]],
                        images: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """Figure references replaced by the images (or, if the output is gone, a note)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [_resolve(block, images) for block in content]
    return messages


def _resolve(block: Any, images: Mapping[str, tuple[str, str]]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return {**block, "content": [_resolve(b, images) for b in block["content"]]}
    source = block.get("source")
    if block.get("type") == "image" and isinstance(source, dict) and (
            source.get("type") == OUTPUT_REF):
        found = images.get(str(source.get("sha256")))
        if found is None:
            return {"type": "text", "text": "[image: shown in the notebook, no longer saved]"}
        media_type, data = found
        return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                            "data": data}}
    return block


def missing_figures(record: SessionRecord, outputs: Iterable[Mapping[str, Any]]) -> list[str]:
    """The digests of the figures `record` refers to that `outputs` no longer hold (the
    outputs were cleared or stripped): the conversation gets a note in their place."""
    shown = images_in_outputs(outputs)
    missing: list[str] = []

    def visit(block: Any) -> None:
        if not isinstance(block, dict):
            return
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            for inner in block["content"]:
                visit(inner)
        source = block.get("source")
        if block.get("type") == "image" and isinstance(source, dict) and (
                source.get("type") == OUTPUT_REF) and str(source.get("sha256")) not in shown:
            missing.append(str(source.get("sha256")))

    for message in record.messages:
        for block in message.get("content") or [] if isinstance(message, dict) else []:
            visit(block)
    return missing
