"""The task-list tools: behaviour, errors, rebuilding from history, permissions, and call
order through the real loop (their calls run concurrently, as `read` tools)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from fuxi_notebook import FuxiAgentOptions, HookMatcher, ScriptedModel
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.agent.session import Conversation, Session
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.tools.base import ToolContext, ToolError, kind_of
from fuxi_notebook._internal.tools.task_list import (
    MAX_TASKS,
    Change,
    ChecklistItem,
    parse_change,
    parse_checklist,
    progress_line,
)
from fuxi_notebook._internal.tools.tasks import TaskList, task_tools
from fuxi_notebook.types import ResultMessage

from ..agent.helpers import result_text, tool_results


class Tools:
    """The four tools over one list, called by name."""

    def __init__(self, tasks: TaskList | None = None) -> None:
        self.tasks = tasks if tasks is not None else TaskList()
        self.by_name = {tool.name: tool for tool in task_tools(self.tasks)}

    async def __call__(self, name: str, ctx: ToolContext, **tool_input: Any) -> str:
        output = await self.by_name[name].run(tool_input, ctx)
        assert not output.is_error and isinstance(output.content, str)
        return output.content


@pytest.fixture
def tools() -> Tools:
    return Tools()


async def test_create_gives_ids_in_order_and_the_whole_checklist(tools, ctx):
    assert await tools("TaskCreate", ctx, subject="Load data") == (
        "Created task 1: Load data\n\nTasks (0 of 1 done):\n☐ 1. Load data")
    await tools("TaskCreate", ctx, subject="  Fit\n  model ", description="  ridge  ",
                activeForm="Fitting the model")
    out = await tools("TaskCreate", ctx, subject="Plot")
    assert out == ("Created task 3: Plot\n\nTasks (0 of 3 done):\n☐ 1. Load data\n"
                   "☐ 2. Fit model\n☐ 3. Plot")
    fit = tools.tasks.find("2")
    assert (fit.subject, fit.description, fit.active_form, fit.status) == (
        "Fit model", "ridge", "Fitting the model", "pending")


async def test_update_marks_progress_and_says_what_changed(tools, ctx):
    for subject in ("Load data", "Fit model", "Plot"):
        await tools("TaskCreate", ctx, subject=subject)
    await tools("TaskUpdate", ctx, taskId="1", status="completed")
    out = await tools("TaskUpdate", ctx, taskId=2, status="in_progress")  # an int id too
    assert out == ("Updated task 2 (status pending → in_progress): Fit model\n\n"
                   "Tasks (1 of 3 done):\n☑ 1. Load data\n◐ 2. Fit model (in progress)\n"
                   "☐ 3. Plot")
    out = await tools("TaskUpdate", ctx, taskId="3", subject="Plot residuals",
                      description="vs fitted")
    assert out.startswith("Updated task 3 (subject, description): Plot residuals\n")
    assert (await tools("TaskUpdate", ctx, taskId="3", status="pending")).startswith(
        "Updated task 3 (no change): Plot residuals\n")
    assert await tools("TaskList", ctx) == (
        "Tasks (1 of 3 done):\n☑ 1. Load data\n◐ 2. Fit model (in progress)\n"
        "☐ 3. Plot residuals")


async def test_one_task_in_progress_is_guidance_not_a_rule(tools, ctx):
    assert "one task in_progress at a time" in tools.by_name["TaskUpdate"].description
    await tools("TaskCreate", ctx, subject="A")
    await tools("TaskCreate", ctx, subject="B")
    await tools("TaskUpdate", ctx, taskId="1", status="in_progress")
    out = await tools("TaskUpdate", ctx, taskId="2", status="in_progress")
    assert "◐ 1. A (in progress)\n◐ 2. B (in progress)" in out
    assert out.endswith("Note: 2 tasks are in progress; keep one in progress at a time and "
                        "mark each completed as soon as it is done.")
    assert [item.status for item in parse_checklist(out)] == ["in_progress"] * 2


async def test_deleting_hides_a_task_and_its_id_is_never_reused(tools, ctx):
    await tools("TaskCreate", ctx, subject="A")
    await tools("TaskCreate", ctx, subject="B")
    out = await tools("TaskUpdate", ctx, taskId="1", status="deleted")
    assert out == "Deleted task 1: A\n\nTasks (0 of 1 done):\n☐ 2. B"
    with pytest.raises(ToolError, match="Task 1 was deleted; ids are not reused"):
        await tools("TaskUpdate", ctx, taskId="1", status="pending")
    assert (await tools("TaskCreate", ctx, subject="C")).startswith("Created task 3: C")
    await tools("TaskUpdate", ctx, taskId="2", status="deleted")
    await tools("TaskUpdate", ctx, taskId="3", status="deleted")
    assert await tools("TaskList", ctx) == "Tasks: none."


@pytest.mark.parametrize(("name", "tool_input", "message"), [
    ("TaskUpdate", {"taskId": "9", "status": "completed"}, "No task with id '9'. Task ids: 1."),
    ("TaskGet", {"taskId": "#4"}, "No task with id '4'"),
    ("TaskUpdate", {"taskId": "1"}, "Nothing to update"),
    ("TaskUpdate", {"taskId": "1", "status": "done"}, "Unknown status 'done'"),
    ("TaskUpdate", {"taskId": "1", "subject": " \n "}, "The subject must not be empty"),
    ("TaskCreate", {"subject": "   "}, "The subject must not be empty"),
    ("TaskCreate", {"subject": "x" * 201}, "keep it under 200"),
])
async def test_mistakes_are_tool_errors_that_change_nothing(tools, ctx, name, tool_input,
                                                            message):
    await tools("TaskCreate", ctx, subject="Only")
    before = tools.tasks.to_json()
    with pytest.raises(ToolError, match=re.escape(message)):
        await tools.by_name[name].run(tool_input, ctx)
    assert tools.tasks.to_json() == before


async def test_a_list_is_a_plan_not_a_database(ctx):
    tools = Tools(TaskList.from_json({"tasks": [
        {"id": str(n), "subject": f"step {n}"} for n in range(1, MAX_TASKS + 1)]}))
    with pytest.raises(ToolError, match=f"already holds {MAX_TASKS} tasks"):
        await tools("TaskCreate", ctx, subject="one more")


async def test_get_shows_one_task_in_full(tools, ctx):
    await tools("TaskCreate", ctx, subject="Fit model", description="ridge, then\nlasso",
                activeForm="Fitting the model")
    await tools("TaskUpdate", ctx, taskId="1", status="in_progress")
    assert await tools("TaskGet", ctx, taskId="1") == (
        "Task 1: Fit model\nStatus: in progress\nActive form: Fitting the model\n"
        "Description:\nridge, then\nlasso")


def test_the_list_round_trips_through_json_and_drops_nonsense():
    tasks = TaskList()
    tasks.create("A", "details", "Doing A")
    tasks.create("B")
    tasks.update("2", status="deleted")
    data = tasks.to_json()
    assert data == {"next_id": 3, "tasks": [
        {"id": "1", "subject": "A", "description": "details", "activeForm": "Doing A",
         "status": "pending"},
        {"id": "2", "subject": "B", "description": "", "activeForm": "", "status": "deleted"}]}
    assert TaskList.from_json(data) == tasks
    odd = TaskList.from_json({"next_id": "x", "tasks": [
        {"id": "7", "subject": "kept"}, {"id": "a", "subject": "bad id"},
        {"id": "8", "subject": ""}, {"id": "9", "subject": "s", "status": "odd"}, "junk"]})
    assert [t.id for t in odd.tasks] == ["7"] and odd.next_id == 8


def test_the_tools_are_reads_bound_to_the_list_they_are_given():
    tasks = TaskList()
    made = task_tools(tasks)
    assert [t.name for t in made] == ["TaskCreate", "TaskUpdate", "TaskList", "TaskGet"]
    assert all(kind_of(t) == "read" and t.tasks is tasks for t in made)


# -- reading results back ------------------------------------------------------------------

def test_results_are_read_back_as_checklist_and_change():
    out = ("Updated task 2 (status pending → in_progress): Fit (v2): final\n\n"
           "Tasks (1 of 2 done):\n☑ 1. Load data\n◐ 2. Fit (v2): final (in progress)")
    assert parse_checklist(out) == [ChecklistItem("1", "Load data", "completed"),
                                    ChecklistItem("2", "Fit (v2): final", "in_progress")]
    assert parse_change("TaskUpdate", {}, out) == Change("started", "2", "Fit (v2): final")
    assert parse_change("TaskCreate", {"subject": "x"}, "Created task 4: x\n\n") == Change(
        "added", "4", "x")
    assert parse_change("TaskUpdate", {"taskId": "3"}, "replaced by a hook") == Change(
        "updated", "3", "")
    assert parse_checklist("Task 1: x\nStatus: pending") is None
    assert parse_checklist([{"type": "text", "text": "Tasks: none."}]) == []
    assert progress_line(parse_checklist(out)) == "tasks: 1/2 done · ◐ Fit (v2): final"


# -- rebuilding from a history -----------------------------------------------------------------

def _call(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def _result(call_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content,
            "is_error": is_error}


def test_the_list_is_rebuilt_from_the_successful_calls_of_a_history():
    history = [
        {"role": "user", "content": [{"type": "text", "text": "plan it"}]},
        {"role": "assistant", "content": [
            _call("a", "TaskCreate", {"subject": "Load"}),
            _call("b", "TaskCreate", {"subject": "Fit"}),
            _call("c", "TaskUpdate", {"taskId": "2", "status": "in_progress"}),
            _call("d", "TaskUpdate", {"taskId": "1", "status": "completed"})]},
        {"role": "user", "content": [
            # the results name the ids the calls got: they win over replay order
            _result("a", "Created task 2: Load\n\n…"),
            _result("b", [{"type": "text", "text": "Created task 1: Fit\n\n…"}]),
            _result("c", "Updated task 2 …"),
            _result("d", "Permission denied", is_error=True)]},  # never happened
        {"role": "assistant", "content": [
            _call("e", "TaskCreate", {"subject": "Plot"}), _call("f", "TaskList", {})]},
        {"role": "user", "content": [_result("e", "replaced by a hook"), _result("f", "")]},
    ]
    tasks = TaskList.from_history(history)
    assert [(t.id, t.subject, t.status) for t in tasks.tasks] == [
        ("1", "Fit", "pending"), ("2", "Load", "in_progress"), ("3", "Plot", "pending")]
    assert tasks.next_id == 4


def test_task_tools_rebuild_only_a_list_never_used():
    history = [{"role": "assistant", "content": [_call("a", "TaskCreate", {"subject": "X"})]},
               {"role": "user", "content": [_result("a", "Created task 1: X")]}]
    fresh = TaskList()
    task_tools(fresh, history)
    assert [t.subject for t in fresh.tasks] == ["X"]
    used = TaskList()
    used.create("Y")
    task_tools(used, history)  # in use: the list is the truth (a history may be shortened)
    assert [t.subject for t in used.tasks] == ["Y"]


# -- through the loop -------------------------------------------------------------------------

async def _run(tasks: TaskList, turns: list[list[dict[str, Any]]],
               **options: Any) -> tuple[ScriptedModel, Session, list[Any]]:
    model = ScriptedModel([*turns, [text("ok")]])
    session = build_session(FuxiAgentOptions(model=model, **options),
                      conversation=Conversation(tasks=tasks))
    messages = [m async for m in run_prompt(Run(session), "go")]
    return model, session, messages


_BATCH = [tool_use("TaskCreate", {"subject": "Load"}), tool_use("TaskCreate", {"subject": "Fit"}),
          tool_use("TaskUpdate", {"taskId": "1", "status": "in_progress"}),
          tool_use("Glob", {"pattern": "*.csv"}),  # another read tool in the same batch
          tool_use("TaskUpdate", {"taskId": "1", "status": "completed"}),
          tool_use("TaskCreate", {"subject": "Plot"}),
          tool_use("TaskUpdate", {"taskId": "2", "status": "in_progress"}),
          tool_use("TaskList", {})]


def _results(model: ScriptedModel) -> list[str]:
    return [result_text(r) for r in tool_results(model.requests[1].messages)]


async def test_concurrent_calls_of_one_response_apply_in_call_order(tmp_path):
    tasks = TaskList()
    model, session, _ = await _run(tasks, [_BATCH], cwd=tmp_path)
    results = _results(model)
    assert [r.split("\n", 1)[0] for r in results[:3]] == [
        "Created task 1: Load", "Created task 2: Fit",
        "Updated task 1 (status pending → in_progress): Load"]
    assert results[4].startswith("Updated task 1 (status in_progress → completed): Load")
    assert results[5].startswith("Created task 3: Plot")
    final = "Tasks (1 of 3 done):\n☑ 1. Load\n◐ 2. Fit (in progress)\n☐ 3. Plot"
    assert results[7] == final
    assert tasks.checklist() == final
    assert TaskList.from_history(session.history) == tasks  # what a resume rebuilds


async def test_order_holds_when_a_hook_suspends_every_call_alike(tmp_path):
    seen: list[str] = []

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict:
        seen.append(data["tool_name"])
        await asyncio.sleep(0)  # every call suspends here before it runs
        return {}

    tasks = TaskList()
    model, _, _ = await _run(tasks, [_BATCH], cwd=tmp_path,
                             hooks={"PreToolUse": [HookMatcher(hooks=[hook])]})
    assert seen.count("TaskCreate") == 3
    assert _results(model)[7] == tasks.checklist() == (
        "Tasks (1 of 3 done):\n☑ 1. Load\n◐ 2. Fit (in progress)\n☐ 3. Plot")


@pytest.mark.parametrize("mode", ["default", "plan", "dontAsk", "acceptEdits", "auto"])
async def test_no_mode_asks_for_the_task_tools(tmp_path, mode):
    asked: list[str] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        raise AssertionError("never asked")

    tasks = TaskList()
    calls = [tool_use("TaskCreate", {"subject": "A"}), tool_use("TaskGet", {"taskId": "1"}),
             tool_use("TaskUpdate", {"taskId": "1", "status": "completed"}),
             tool_use("TaskList", {})]
    model, _, messages = await _run(tasks, [calls], cwd=tmp_path, permission_mode=mode,
                                    can_use_tool=can_use_tool)
    assert asked == []
    assert not any(r.get("is_error") for r in tool_results(model.requests[1].messages))
    assert tasks.checklist() == "Tasks (1 of 1 done):\n☑ 1. A"
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.permission_denials


async def test_a_deny_rule_still_removes_a_task_tool(tmp_path):
    tasks = TaskList()
    model, session, _ = await _run(tasks, [[tool_use("TaskCreate", {"subject": "A"})]],
                                   cwd=tmp_path, disallowed_tools=["TaskCreate"])
    assert "TaskCreate" not in session.registry and "TaskList" in session.registry
    assert _results(model)[0].startswith("No such tool available: TaskCreate.")
    assert tasks.tasks == []


async def test_a_continued_conversation_keeps_its_list(tmp_path):
    """The list is the conversation's: a new session over it goes on with its ids."""
    tasks = TaskList()
    await _run(tasks, [[tool_use("TaskCreate", {"subject": "A"})]], cwd=tmp_path)
    model, _, _ = await _run(tasks, [[tool_use("TaskCreate", {"subject": "B"})]],
                             cwd=tmp_path)
    assert _results(model)[0].startswith("Created task 2: B\n\nTasks (0 of 2 done):\n☐ 1. A")
