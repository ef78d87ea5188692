"""The agent's checklist as data and as text: `TaskList`, and the text the model sees.

The list belongs to the conversation (the tools in `tasks.py` are bound to one), so
continuing or forking a conversation keeps it; `TaskList.replay` rebuilds it from a
message history (a resumed session, a notebook replayed from its records), whose
successful calls are exactly the changes the model was told about.

After each change the model sees the whole checklist, one task a line:

    Tasks (1 of 3 done):
    ☑ 1. Load data
    ◐ 2. Fit model (in progress)
    ☐ 3. Plot

Renderers read that text back (`parse_checklist`, `parse_change`): what a cell shows is
what the model was told, and a record holds it without holding the state. The format and
its parser live here together. This module imports nothing from the package but
`tools.base`, so the core stays free of IPython.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, get_args

from ..common.reminders import is_summary
from .base import ToolError

__all__ = ["CHANGING_TOOLS", "MAX_TASKS", "STATUSES", "SYMBOLS", "TASK_TOOLS", "Change",
           "ChecklistItem", "Task", "TaskList", "TaskStatus", "created_text", "parse_change",
           "parse_checklist", "pending_change", "progress_line", "updated_text"]

TaskStatus = Literal["pending", "in_progress", "completed", "deleted"]
STATUSES: tuple[str, ...] = get_args(TaskStatus)
#: How each status shows, to the model and in plain text (a deleted task is not shown).
SYMBOLS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate", "TaskList", "TaskGet"})
CHANGING_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
#: Tasks a list may hold (deleted ones not counted): a plan, not a database.
MAX_TASKS = 100
_SUBJECT_CHARS = 200
_EMPTY = "Tasks: none."
_HEADER = re.compile(r"^Tasks \((\d+) of (\d+) done\):\Z")
_LINE = re.compile(r"^([☐◐☑]) (\S+)\. (.*)\Z")
_IN_PROGRESS = " (in progress)"
_FIRST = re.compile(r"^(Created|Updated|Deleted) task (\S+)(?: \((.*?)\))?: (.*)\Z")
_STATUS_CHANGE = re.compile(r"status \w+ → (\w+)")
_VERBS = {"in_progress": "started", "completed": "completed", "pending": "reopened"}


@dataclass
class Task:
    """One task; `active_form` is the subject as an ongoing action ("Fitting the model")."""

    id: str
    subject: str
    description: str = ""
    active_form: str = ""
    status: TaskStatus = "pending"

    def line(self) -> str:
        """The task's line in the checklist (`◐ 2. Fit model (in progress)`)."""
        note = _IN_PROGRESS if self.status == "in_progress" else ""
        return f"{SYMBOLS[self.status]} {self.id}. {self.subject}{note}"


class ChecklistItem(NamedTuple):
    """One line of a checklist as read back from a result (status without `deleted`)."""

    id: str
    subject: str
    status: str


class Change(NamedTuple):
    """What one task call did, in words a renderer shows (`started` task 2 `Fit model`)."""

    verb: str
    id: str | None
    subject: str


def _one_line(text: Any) -> str:
    """A subject on one line: the checklist has one task a line, and parsing relies on it."""
    return " ".join(str(text).split()) if text is not None else ""


def _subject(text: Any) -> str:
    subject = _one_line(text)
    if not subject:
        raise ToolError("The subject must not be empty: say in a few words what the task is.")
    if len(subject) > _SUBJECT_CHARS:
        raise ToolError(f"The subject is {len(subject)} characters long; keep it under "
                        f"{_SUBJECT_CHARS} and put the details in the description.")
    return subject


@dataclass
class TaskList:
    """The checklist of one conversation. Ids are "1", "2", ... and never reused (a
    deleted task stays, marked deleted, so an old id gets a clear answer)."""

    tasks: list[Task] = field(default_factory=list)
    next_id: int = 1

    @property
    def touched(self) -> bool:
        """Whether anything was ever created (a fresh list may be rebuilt from history)."""
        return self.next_id > 1 or bool(self.tasks)

    def visible(self) -> list[Task]:
        """The tasks not deleted, by id."""
        return [task for task in self.tasks if task.status != "deleted"]

    def find(self, task_id: Any) -> Task:
        """The live task with this id; ToolError names the ids there are."""
        key = str(task_id).strip().lstrip("#")
        for task in self.tasks:
            if task.id == key:
                if task.status == "deleted":
                    raise ToolError(f"Task {key} was deleted; ids are not reused. Create a "
                                    "new task instead.")
                return task
        known = ", ".join(task.id for task in self.visible()) or "none yet"
        raise ToolError(f"No task with id {key!r}. Task ids: {known}.")

    def create(self, subject: Any, description: Any = "", active_form: Any = "", *,
               task_id: str | None = None) -> Task:
        """A new pending task (`task_id`: the id a recorded result gave it, on replay)."""
        subject = _subject(subject)
        if len(self.visible()) >= MAX_TASKS:
            raise ToolError(f"The list already holds {MAX_TASKS} tasks; complete or delete "
                            "some, or plan in bigger steps.")
        if task_id is None or not task_id.isdigit() or any(t.id == task_id for t in self.tasks):
            task_id = str(self.next_id)
        task = Task(task_id, subject, str(description or "").strip(), _one_line(active_form))
        self.tasks.append(task)
        self.tasks.sort(key=lambda t: int(t.id))
        self.next_id = max(self.next_id, int(task_id) + 1)
        return task

    def update(self, task_id: Any, *, status: str | None = None, subject: Any = None,
               description: Any = None, active_form: Any = None) -> tuple[Task, list[str]]:
        """Change a task; everything is checked before anything changes. Returns the task
        and what changed (`status pending → in_progress`, `subject`, ...)."""
        task = self.find(task_id)
        if status is not None and status not in STATUSES:
            raise ToolError(f"Unknown status {status!r}; use one of {', '.join(STATUSES)}.")
        if status is None and subject is None and description is None and active_form is None:
            raise ToolError("Nothing to update: give a status, subject, description or "
                            "activeForm.")
        new_subject = _subject(subject) if subject is not None else task.subject
        changes = []
        if status is not None and status != task.status:
            changes.append(f"status {task.status} → {status}")
            task.status = status  # type: ignore[assignment]
        if new_subject != task.subject:
            changes.append("subject")
            task.subject = new_subject
        if description is not None and str(description).strip() != task.description:
            changes.append("description")
            task.description = str(description).strip()
        if active_form is not None and _one_line(active_form) != task.active_form:
            changes.append("activeForm")
            task.active_form = _one_line(active_form)
        return task, changes

    def checklist(self) -> str:
        """The list as the model sees it (and renderers parse), plus a nudge when more
        than one task is in progress (guidance, not a rule)."""
        shown = self.visible()
        if not shown:
            return _EMPTY
        done = sum(task.status == "completed" for task in shown)
        lines = [f"Tasks ({done} of {len(shown)} done):", *(task.line() for task in shown)]
        busy = sum(task.status == "in_progress" for task in shown)
        if busy > 1:
            lines.append(f"\nNote: {busy} tasks are in progress; keep one in progress at a "
                         "time and mark each completed as soon as it is done.")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready copy (keys as the tools' inputs name them)."""
        return {"next_id": self.next_id, "tasks": [
            {"id": t.id, "subject": t.subject, "description": t.description,
             "activeForm": t.active_form, "status": t.status} for t in self.tasks]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskList:
        """The list `to_json` gave; entries that make no sense are left out."""
        tasks = [Task(str(t["id"]), _one_line(t["subject"]), str(t.get("description") or ""),
                      _one_line(t.get("activeForm") or ""), t.get("status", "pending"))
                 for t in data.get("tasks") or [] if isinstance(t, Mapping)
                 and str(t.get("id", "")).isdigit() and _one_line(t.get("subject"))
                 and t.get("status", "pending") in STATUSES]
        highest = max((int(t.id) for t in tasks), default=0)
        next_id = data.get("next_id")
        return cls(sorted(tasks, key=lambda t: int(t.id)),
                   max(next_id if isinstance(next_id, int) else 1, highest + 1))

    def replay(self, messages: Iterable[Mapping[str, Any]]) -> TaskList:
        """Apply the TaskCreate/TaskUpdate calls of a message history that succeeded, in
        order (a created task keeps the id its result gave). Returns this list."""
        messages = list(messages)
        if messages:
            self._seed(messages[0])
        results = {block.get("tool_use_id"): block for block in _blocks(messages, "user")
                   if block.get("type") == "tool_result"}
        for call in _blocks(messages, "assistant"):
            result = results.get(call.get("id"))
            if (call.get("type") != "tool_use" or call.get("name") not in CHANGING_TOOLS
                    or result is None or result.get("is_error")
                    or not isinstance(call.get("input"), Mapping)):
                continue
            self._apply(call["name"], call["input"], _text(result.get("content")))
        return self

    def _seed(self, first: Mapping[str, Any]) -> None:
        """A compacted history starts with its summary, which carries the checklist as it
        was (the calls that built it were summarised away): start from that."""
        if not self.touched and is_summary(dict(first)):
            for item in parse_checklist(_text(first.get("content"))) or []:
                task = self.create(item.subject, task_id=item.id)
                task.status = item.status  # type: ignore[assignment]

    @classmethod
    def from_history(cls, messages: Iterable[Mapping[str, Any]]) -> TaskList:
        """The list a conversation with these messages holds (see `replay`)."""
        return cls().replay(messages)

    def _apply(self, name: str, tool_input: Mapping[str, Any], result: str) -> None:
        """One recorded call again; one that no longer applies (a hand-edited history)
        is skipped."""
        try:
            if name == "TaskCreate":
                found = _FIRST.match(result.split("\n", 1)[0])
                self.create(tool_input.get("subject"), tool_input.get("description") or "",
                            tool_input.get("activeForm") or "",
                            task_id=found.group(2) if found else None)
            else:
                self.update(tool_input.get("taskId"), status=tool_input.get("status"),
                            subject=tool_input.get("subject"),
                            description=tool_input.get("description"),
                            active_form=tool_input.get("activeForm"))
        except ToolError:
            pass


def _blocks(messages: list[Mapping[str, Any]], role: str) -> list[Mapping[str, Any]]:
    return [block for message in messages if message.get("role") == role
            and isinstance(message.get("content"), list)
            for block in message["content"] if isinstance(block, Mapping)]


def _text(content: Any) -> str:
    """A tool result's text (its text blocks joined)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or []
                     if isinstance(b, Mapping) and b.get("type") == "text")


# -- reading results back, for renderers -----------------------------------------------------

def parse_checklist(result: Any) -> list[ChecklistItem] | None:
    """The checklist a TaskCreate/TaskUpdate/TaskList result showed the model ([] for an
    empty list), or None when the result holds none (TaskGet, a replaced output)."""
    lines = _text(result).splitlines()
    for index, line in enumerate(lines):
        if line == _EMPTY:
            return []
        if _HEADER.match(line):
            items = []
            for item in lines[index + 1:]:
                found = _LINE.match(item)
                if found is None:
                    break
                symbol, task_id, subject = found.groups()
                status = next(s for s, mark in SYMBOLS.items() if mark == symbol)
                if status == "in_progress":
                    subject = subject.removesuffix(_IN_PROGRESS)
                items.append(ChecklistItem(task_id, subject, status))
            return items
    return None


def parse_change(name: str, tool_input: Mapping[str, Any], result: Any) -> Change:
    """What a successful task call did, from its result (the id a create got, the subject
    of the task it updated) and its input."""
    first = _text(result).split("\n", 1)[0]
    found = _FIRST.match(first)
    if name == "TaskList":
        return Change("listed", None, "")
    if name == "TaskGet":
        got = re.match(r"^Task (\S+): (.*)\Z", first)
        return Change("read", *(got.groups() if got else (str(tool_input.get("taskId")), "")))
    if found is None:  # a hook replaced the output: say what was asked
        return pending_change(name, tool_input)._replace(verb="added" if name == "TaskCreate"
                                                         else "updated")
    action, task_id, changes, subject = found.groups()
    if action == "Created":
        return Change("added", task_id, subject)
    if action == "Deleted":
        return Change("deleted", task_id, subject)
    status = _STATUS_CHANGE.search(changes or "")
    if status is not None:
        return Change(_VERBS.get(status.group(1), "updated"), task_id, subject)
    return Change("unchanged" if changes == "no change" else "edited", task_id, subject)


def pending_change(name: str, tool_input: Mapping[str, Any]) -> Change:
    """What a task call is about to do, from its input alone (before its result)."""
    if name == "TaskCreate":
        return Change("adding", None, _one_line(tool_input.get("subject")))
    if name == "TaskList":
        return Change("listing", None, "")
    task_id = str(tool_input.get("taskId", "?"))
    return Change("reading" if name == "TaskGet" else "updating", task_id, "")


def progress_line(items: list[ChecklistItem]) -> str:
    """One line for a terminal: `tasks: 1/3 done · ◐ Fit model`."""
    done = sum(item.status == "completed" for item in items)
    busy = [f"{SYMBOLS['in_progress']} {item.subject}" for item in items
            if item.status == "in_progress"]
    return " · ".join([f"tasks: {done}/{len(items)} done", *busy])


def created_text(tasks: TaskList, task: Task) -> str:
    """TaskCreate's result: `Created task 3: Plot`, then the checklist."""
    return f"Created task {task.id}: {task.subject}\n\n{tasks.checklist()}"


def updated_text(tasks: TaskList, task: Task, changes: list[str]) -> str:
    """TaskUpdate's result: `Updated task 2 (status pending → in_progress): Fit model` (or
    `Deleted task 2: ...`), then the checklist."""
    if task.status == "deleted":
        return f"Deleted task {task.id}: {task.subject}\n\n{tasks.checklist()}"
    what = ", ".join(changes) or "no change"
    return f"Updated task {task.id} ({what}): {task.subject}\n\n{tasks.checklist()}"
