"""A saved session (the JSONL store: `query()`, `FuxiSDKClient`, `fuxi-acp` and so
jupyter-ai's chat) as a notebook of `%%fuxi` cells that replay it.

Each prompt of the conversation becomes one cell: its source is the prompt, its outputs
are what a live cell would have saved (the transcript and the record: outputs.py), and
its metadata keeps the record. Each cell continues the one before, as cells of one
conversation do. A prompt that also carries the results an interrupt left owed stays in
the cell before it, so every record's calls have their results. The approvals were given
outside the notebook and are not recorded: a replay asks again (or, headless, denies)
what its rules do not allow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from ....types import ResultMessage
from ...common.reminders import REMINDER_OPEN, is_summary
from ...sessions.record import build_record
from ..cell.outputs import record_outputs

__all__ = ["session_cells_notebook"]


def session_cells_notebook(session_id: str, messages: Sequence[dict[str, Any]], *,
                           model: str, cwd: str | None) -> dict[str, Any]:
    """The notebook (nbformat v4) of a session's conversation (`messages`: wire dicts)."""
    import nbformat

    from ...sessions.cell_record import keep_in_metadata

    # nbformat's constructors carry no annotations: typed views of them
    new_code_cell = cast("Callable[..., Any]", nbformat.v4.new_code_cell)
    new_output = cast("Callable[..., Any]", nbformat.v4.new_output)
    new_notebook = cast("Callable[..., dict[str, Any]]", nbformat.v4.new_notebook)
    cells: list[Any] = [new_code_cell("%load_ext fuxi_notebook", id="load")]
    parent = None
    for number, turn in enumerate(_turns(messages), start=1):
        cell_id = f"s{number}"
        record = build_record(
            cell_id=cell_id, session_id=session_id, parent=parent, model=model,
            prompt=_prompt(turn[0]), options={}, messages=turn, approvals=[],
            result=_result(session_id, turn), cwd=cwd)
        cell = new_code_cell(f"%%fuxi\n{record.prompt}", id=cell_id)
        cell.outputs = [new_output("display_data", data=data, metadata=metadata)
                        for data, metadata, _ in record_outputs(record, {})]
        keep_in_metadata(cell, from_outputs=True)
        cells.append(cell)
        parent = cell_id
    if len(cells) == 1:
        raise ValueError(f"session {session_id} holds no prompt")
    return new_notebook(cells=cells)


def _turns(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = []
    for message in messages:
        if message.get("role") == "user" and _prompt(message) and not _owes(message) and (
                not is_summary(message)):
            turns.append([message])
        elif turns:
            turns[-1].append(message)
    return turns


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _prompt(message: dict[str, Any]) -> str:
    return "\n\n".join(str(b.get("text", "")) for b in _blocks(message)
                       if b.get("type") == "text" and not str(b.get("text", "")).startswith(
                           REMINDER_OPEN)).strip()


def _owes(message: dict[str, Any]) -> bool:
    return any(b.get("type") == "tool_result" for b in _blocks(message))


def _result(session_id: str, turn: list[dict[str, Any]]) -> ResultMessage:
    answers = [m for m in turn if m.get("role") == "assistant"]
    last = "".join(str(b.get("text", "")) for b in _blocks(answers[-1])
                   if b.get("type") == "text") if answers else ""
    return ResultMessage(subtype="success", duration_ms=0, duration_api_ms=0,
                         is_error=False, num_turns=len(answers), session_id=session_id,
                         stop_reason="end_turn", result=last or None)
