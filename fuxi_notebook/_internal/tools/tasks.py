"""The task-list tools: TaskCreate, TaskUpdate, TaskList and TaskGet.

The model plans multi-step work as a short checklist and ticks it off; the cell shows it
as one checklist (`sessions/checklist.py`). `task_tools(tasks)` binds the four tools to
one `TaskList` (`task_list.py`), the conversation's: the tools hold no state of their own.

Why kind "read": the tools change only this checklist, never a file, the kernel or the
outside world, so no permission mode should ever ask for them. The permission judge calls
a `read` tool that reaches nothing (no path, URL or command) *safe*, which every mode
approves (`dontAsk` included), and not a change, so `plan` mode lets it through as well;
`edit` would ask in the default and plan modes. A deny or ask rule naming a tool still
applies. The price of "read": consecutive calls run concurrently (`agent/tool_calls.py`
gathers them, started in the model's order). So each call changes the list synchronously
at the start of `run`, with no await before it: the calls of one response take effect in
call order (unless a PreToolUse hook suspends longer for an earlier call than for a later
one), and their results keep call order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .base import DeclaredTool, ToolContext, ToolOutput
from .task_list import STATUSES, TaskList, created_text, updated_text

__all__ = ["TaskCreateTool", "TaskGetTool", "TaskList", "TaskListTool", "TaskUpdateTool",
           "task_tools"]

#: an id as the model may send it ("2" or 2)
_TASK_ID: dict[str, Any] = {"type": ["string", "integer"], "minLength": 1}


class _TaskTool(DeclaredTool):
    """A tool bound to one checklist; kind "read" (see the module docstring)."""

    kind = "read"
    defer_by_default = True  # a checklist is for long tasks: loaded when one starts

    def __init__(self, tasks: TaskList) -> None:
        self.tasks = tasks


class TaskCreateTool(_TaskTool):
    """Add a pending task."""

    name = "TaskCreate"
    description = (
        "Add a task to your checklist for this conversation. Plan with it when the work has "
        "three or more distinct steps (load, clean, model, plot...) or the user asks for "
        "several things; skip it for a single quick step. `subject`: a short imperative "
        "(\"Fit the baseline model\"); `description`: details, optional; `activeForm`: the "
        "subject as an ongoing action (\"Fitting the baseline model\"), optional. A new "
        "task is pending; the result gives its id and the whole checklist, which the user "
        "sees too. Then mark tasks with TaskUpdate as you go.")

    def __init__(self, tasks: TaskList) -> None:
        super().__init__(tasks)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {"subject": {"type": "string", "minLength": 1},
                           "description": {"type": "string"},
                           "activeForm": {"type": "string"}},
            "required": ["subject"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Create it now, before any await (see the module docstring on order)."""
        task = self.tasks.create(input["subject"], input.get("description") or "",
                                 input.get("activeForm") or "")
        return ToolOutput(content=created_text(self.tasks, task))


class TaskUpdateTool(_TaskTool):
    """Change a task's status or text."""

    name = "TaskUpdate"
    description = (
        "Change a task of your checklist, by its `taskId`: `status` in_progress when you "
        "start it, completed as soon as it is done (not in a batch at the end), pending to "
        "reopen it, deleted to remove it; or a new `subject`, `description` or "
        "`activeForm`. Keep exactly one task in_progress at a time. Mark a task completed "
        "only when it is fully done: if it is blocked or failed, keep it in progress and "
        "add a task for what is needed. The result shows the whole checklist.")

    def __init__(self, tasks: TaskList) -> None:
        super().__init__(tasks)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {"taskId": _TASK_ID,
                           "status": {"type": "string", "enum": list(STATUSES)},
                           "subject": {"type": "string", "minLength": 1},
                           "description": {"type": "string"},
                           "activeForm": {"type": "string"}},
            "required": ["taskId"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Update it now, before any await (see the module docstring on order)."""
        task, changes = self.tasks.update(
            input["taskId"], status=input.get("status"), subject=input.get("subject"),
            description=input.get("description"), active_form=input.get("activeForm"))
        return ToolOutput(content=updated_text(self.tasks, task, changes))


class TaskListTool(_TaskTool):
    """Show the checklist."""

    name = "TaskList"
    description = ("Show your checklist: every task with its id and status (☐ pending, "
                   "◐ in progress, ☑ completed).")

    def __init__(self, tasks: TaskList) -> None:
        super().__init__(tasks)
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {},
                                             "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=self.tasks.checklist())


class TaskGetTool(_TaskTool):
    """Show one task in full."""

    name = "TaskGet"
    description = ("Show one task of your checklist in full, by its `taskId`: subject, "
                   "status, description and activeForm.")

    def __init__(self, tasks: TaskList) -> None:
        super().__init__(tasks)
        self.input_schema: dict[str, Any] = {
            "type": "object", "properties": {"taskId": _TASK_ID},
            "required": ["taskId"], "additionalProperties": False}

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        task = self.tasks.find(input["taskId"])
        lines = [f"Task {task.id}: {task.subject}",
                 f"Status: {task.status.replace('_', ' ')}"]
        if task.active_form:
            lines.append(f"Active form: {task.active_form}")
        if task.description:
            lines.append(f"Description:\n{task.description}")
        return ToolOutput(content="\n".join(lines))


def task_tools(tasks: TaskList,
               history: Iterable[Mapping[str, Any]] | None = None) -> list[DeclaredTool]:
    """The four tools, bound to `tasks`. With `history`, a list never used yet is first
    rebuilt from it (a conversation resumed from a store or from a notebook's records
    holds its messages, not its list); a list in use is the truth, even where the history
    was shortened."""
    if history is not None and not tasks.touched:
        tasks.replay(history)
    return [TaskCreateTool(tasks), TaskUpdateTool(tasks), TaskListTool(tasks),
            TaskGetTool(tasks)]
