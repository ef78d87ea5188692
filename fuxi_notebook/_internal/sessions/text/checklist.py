"""The agent's task checklist as a cell shows it, in markdown and in plain text.

The task tools (`tools/tasks.py`) answer every change with the whole checklist; a run
that plans five steps makes a dozen such calls. Shown as tool cards they would bury the
analysis, and each would repeat the list. So consecutive successful task calls become one
line saying what changed (`Tasks · added 1. Load data, 2. Fit model · started 1. Load
data`), and the checklist itself appears once: at the bottom of the live view while a
run goes, and in the stored transcript after the last call that showed it, as a markdown
task list. A failed or denied task call keeps its ordinary card (it says what went wrong).

Everything here is read from the calls' inputs and results (`tools/task_list.py` parses
them), never from live state, so a record renders the same on every run (nbval) and the
cell shows what the model was told. The transcript and the live view share it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...tools.task_list import (
    CHANGING_TOOLS,
    SYMBOLS,
    TASK_TOOLS,
    Change,
    ChecklistItem,
    parse_change,
    parse_checklist,
    pending_change,
)
from .markdown import escape_math

__all__ = ["TASK_TOOLS", "TaskCalls", "TaskStep", "checklist_markdown", "checklist_plain",
           "fold_task_steps", "task_step", "tasks_markdown", "tasks_plain"]

_DONE_WORDS = {"listed": "listed the tasks", "listing": "listing the tasks…"}


@dataclass(frozen=True)
class TaskStep:
    """One task call as shown: what it did, and the checklist its result showed (None:
    it showed none)."""

    change: Change
    checklist: tuple[ChecklistItem, ...] | None = None


@dataclass(frozen=True)
class TaskCalls:
    """Consecutive task calls shown as one line; `checklist` follows it when these calls
    hold the last checklist of the transcript."""

    changes: tuple[Change, ...]
    checklist: tuple[ChecklistItem, ...] | None = None


def task_step(name: str, tool_input: Mapping[str, Any], result: Any | None) -> TaskStep:
    """The step of a task call that succeeded (`result` None: it has not answered yet)."""
    if result is None:
        return TaskStep(pending_change(name, tool_input))
    shown = parse_checklist(result) if name in CHANGING_TOOLS | {"TaskList"} else None
    return TaskStep(parse_change(name, tool_input, result),
                    tuple(shown) if shown is not None else None)


def fold_task_steps(parts: Sequence[tuple[str, Any]], *,
                    attach: bool = True) -> list[tuple[str, Any]]:
    """`("task", TaskStep)` parts, consecutive ones joined into `("tasks", TaskCalls)`;
    with `attach`, the last checklist shown goes with the calls that showed it."""
    folded: list[tuple[str, Any]] = []
    steps: list[TaskStep] = []
    last: tuple[int, tuple[ChecklistItem, ...]] | None = None

    def close() -> None:
        nonlocal last
        if steps:
            shown = [s.checklist for s in steps if s.checklist is not None]
            if shown:
                last = (len(folded), shown[-1])
            folded.append(("tasks", TaskCalls(tuple(s.change for s in steps))))
            steps.clear()

    for kind, payload in parts:
        if kind == "task":
            steps.append(payload)
            continue
        close()
        folded.append((kind, payload))
    close()
    if attach and last is not None:
        index, checklist = last
        folded[index] = ("tasks", TaskCalls(folded[index][1].changes, checklist))
    return folded


# -- words ------------------------------------------------------------------------------------

def _what(change: Change) -> str:
    if change.id and change.subject:
        return f"{change.id}. {change.subject}"
    return f"task {change.id}" if change.id else change.subject


def _words(changes: Sequence[Change]) -> list[tuple[str, list[str]]]:
    """(verb, [what, ...]) with consecutive changes of one verb together."""
    runs: list[tuple[str, list[str]]] = []
    for change in changes:
        if change.verb in _DONE_WORDS:
            runs.append((_DONE_WORDS[change.verb], []))
        elif runs and runs[-1][0] == change.verb and runs[-1][1]:
            runs[-1][1].append(_what(change))
        else:
            runs.append((change.verb, [_what(change)]))
    return runs


def _line(calls: TaskCalls, escape: Any) -> str:
    said = [f"{verb} {', '.join(escape(w) for w in what)}".rstrip() + (
        "…" if verb.endswith("ing") and what else "") for verb, what in _words(calls.changes)]
    if calls.checklist is not None:
        said.append(_done(calls.checklist))
    return " · ".join(said)


def _done(items: Sequence[ChecklistItem]) -> str:
    done = sum(item.status == "completed" for item in items)
    return f"{done} of {len(items)} done" if items else "no tasks left"


def _subject(text: str) -> str:
    """Model-written words made plain markdown: no HTML, no math."""
    return escape_math(html.escape(text, quote=False))


# -- markdown and plain text ------------------------------------------------------------------

def checklist_markdown(items: Sequence[ChecklistItem]) -> str:
    """A markdown task list (`- [x] 1\\. Load data`): the dot escaped, since a list item
    whose text starts `1. ` would hold a numbered list of its own."""
    lines = []
    for item in items:
        label = f"{item.id}\\. {_subject(item.subject)}"
        if item.status == "in_progress":
            label = f"**{label}** (in progress)"
        lines.append(f"- [{'x' if item.status == 'completed' else ' '}] {label}")
    return "\n".join(lines)


def checklist_plain(items: Sequence[ChecklistItem], indent: str = "  ") -> str:
    """The checklist's lines as the model saw them (`◐ 2. Fit model (in progress)`)."""
    return "\n".join(f"{indent}{SYMBOLS[item.status]} {item.id}. {item.subject}"
                     + (" (in progress)" if item.status == "in_progress" else "")
                     for item in items)


def tasks_markdown(calls: TaskCalls) -> str:
    """`**Tasks** · started 2. Fit model`, then the checklist if it goes here."""
    line = f"**Tasks** · {_line(calls, _subject)}"
    if calls.checklist:
        return f"{line}\n\n{checklist_markdown(calls.checklist)}"
    return line


def tasks_plain(calls: TaskCalls) -> str:
    """`Tasks · started 2. Fit model`, then the checklist's lines if it goes here."""
    line = f"Tasks · {_line(calls, str)}"
    if calls.checklist:
        return f"{line}\n{checklist_plain(calls.checklist)}"
    return line
