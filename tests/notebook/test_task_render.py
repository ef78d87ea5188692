"""The task checklist as a cell shows it: in the stored transcript (markdown and plain, exact
and deterministic, as nbval compares them), live in the view and the renderer (one block
updated in place), and in a terminal (one line per change). No browser, no kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook._internal.notebook.display.render import LiveRenderer, TextRenderer
from fuxi_notebook._internal.notebook.display.view import LiveView
from fuxi_notebook._internal.sessions.record import build_record, load_record
from fuxi_notebook._internal.sessions.text.transcript import (
    render_transcript,
    render_transcript_text,
    transcript_segments,
)
from fuxi_notebook._internal.tools.base import ToolContext, ToolError
from fuxi_notebook._internal.tools.tasks import TaskList, task_tools
from fuxi_notebook.types import (
    AssistantMessage,
    Message,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    block_from_wire,
)

from ..sessions.helpers import result_message
from .publisher import RecordingPublisher

Step = str | tuple[str, dict[str, Any]]

#: A data scientist's run: plan, load (a Python call), a mistaken id, finish.
TURNS: list[list[Step]] = [
    ["I'll plan this.", ("TaskCreate", {"subject": "Load sales.csv"}),
     ("TaskCreate", {"subject": "Fit a trend", "activeForm": "Fitting a trend"}),
     ("TaskCreate", {"subject": "Plot"}), ("TaskUpdate", {"taskId": "1", "status": "in_progress"})],
    [("Python", {"code": "df = pd.read_csv('sales.csv')"}),
     ("TaskUpdate", {"taskId": "1", "status": "completed"}),
     ("TaskUpdate", {"taskId": "2", "status": "in_progress"})],
    [("TaskUpdate", {"taskId": "9", "status": "completed"})],
    [("TaskUpdate", {"taskId": "2", "status": "completed"}),
     ("TaskUpdate", {"taskId": "3", "status": "deleted"})],
    ["Done: sales trend upward."],
]


async def _conversation(turns: list[list[Step]], tasks: TaskList | None = None,
                        prompt: str = "Analyse sales.csv") -> list[dict[str, Any]]:
    """Wire messages of a run whose task calls ran the real tools, one after another."""
    tools = {tool.name: tool for tool in task_tools(tasks or TaskList())}
    ctx = ToolContext(cwd=Path.cwd())
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    count = 0
    for turn in turns:
        blocks, results = [], []
        for step in turn:
            if isinstance(step, str):
                blocks.append({"type": "text", "text": step})
                continue
            name, tool_input = step
            count += 1
            call_id = f"t{count}"
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
            content, is_error = "Loaded 48 rows", False
            if name in tools:
                try:
                    content = str((await tools[name].run(tool_input, ctx)).content)
                except ToolError as error:
                    content, is_error = str(error), True
            results.append({"type": "tool_result", "tool_use_id": call_id, "content": content,
                            "is_error": is_error})
        messages.append({"role": "assistant", "content": blocks})
        if results:
            messages.append({"role": "user", "content": results})
    return messages


def _record(messages: list[dict[str, Any]], **extra: Any) -> Any:
    return build_record(cell_id="c1", session_id="s1", parent=None, model="claude-sonnet-5-5",
                        prompt=messages[0]["content"], options={}, messages=messages,
                        approvals=extra.pop("approvals", []),
                        result=result_message(result="Done: sales trend upward."), **extra)


def _stream(messages: list[dict[str, Any]], parent: str | None = None) -> list[Message]:
    """The messages a run yields for these wire messages (one block each)."""
    found: list[Message] = []
    for message in messages[1:]:
        for wire in message["content"]:
            if message["role"] == "assistant":
                found.append(AssistantMessage([block_from_wire(wire)], model="m",
                                              parent_tool_use_id=parent))
            else:
                found.append(UserMessage([ToolResultBlock(wire["tool_use_id"], wire["content"],
                                                          wire["is_error"])],
                                         parent_tool_use_id=parent))
    return found


# -- the stored transcript ------------------------------------------------------------------

async def test_the_transcript_shows_task_calls_as_lines_and_the_final_checklist_once():
    md = render_transcript(_record(await _conversation(TURNS)))
    assert md.startswith(
        "> Analyse sales.csv\n\nI'll plan this.\n\n"
        "**Tasks** · added 1. Load sales.csv, 2. Fit a trend, 3. Plot · "
        "started 1. Load sales.csv\n\n<details><summary><b>Python</b>")
    assert ("</details>\n\n**Tasks** · completed 1. Load sales.csv · started 2. Fit a trend"
            "\n\n<details><summary><b>TaskUpdate</b>") in md
    assert ("<summary><b>TaskUpdate</b> <code>{&quot;taskId&quot;:&quot;9&quot;,&quot;"
            "status&quot;:&quot;completed&quot;}</code> ✗ failed</summary>\n\n```\n"
            "No task with id '9'. Task ids: 1, 2, 3.\n```") in md  # a failure stays a card
    assert md.endswith(
        "</details>\n\n**Tasks** · completed 2. Fit a trend · deleted 3. Plot · 2 of 2 done"
        "\n\n- [x] 1\\. Load sales.csv\n- [x] 2\\. Fit a trend\n\n"
        "Done: sales trend upward.\n\n**Done** · 4 turns")
    assert md.count("- [") == 2 and md.count("<details>") == 2  # Python + the failure


async def test_the_plain_transcript_uses_the_models_symbols():
    text = render_transcript_text(_record(await _conversation(TURNS)))
    assert ("I'll plan this.\n\nTasks · added 1. Load sales.csv, 2. Fit a trend, 3. Plot · "
            "started 1. Load sales.csv\n\nPython: df = pd.read_csv('sales.csv')") in text
    assert ("TaskUpdate: {\"taskId\":\"9\",\"status\":\"completed\"} ✗ failed\n"
            "  ⎿ No task with id '9'. Task ids: 1, 2, 3.") in text
    assert ("Tasks · completed 2. Fit a trend · deleted 3. Plot · 2 of 2 done\n"
            "  ☑ 1. Load sales.csv\n  ☑ 2. Fit a trend\n\nDone: sales trend upward.") in text


async def test_the_transcript_is_the_same_on_every_render_and_after_saving():
    record = _record(await _conversation(TURNS))
    again = load_record(record.model_dump(mode="json"))  # as a saved notebook reads it back
    assert render_transcript(again) == render_transcript(record) == render_transcript(record)
    assert render_transcript_text(again) == render_transcript_text(record)
    # cut after the Python call's figure: the segments still say the same, in order
    cut = _record(await _conversation(TURNS), shown_outputs={"t5": 1})
    segments = transcript_segments(cut)
    assert [s.outputs_of for s in segments] == ["t5", None]
    assert "\n\n".join(s.markdown for s in segments) == render_transcript(cut)
    assert "<code>df = pd.read_csv(&#x27;sales.csv&#x27;)</code> · 1 output below" in (
        segments[0].markdown)


async def test_a_later_cell_shows_tasks_of_an_earlier_one_from_its_results_alone():
    """A record holds one cell; the checklist comes from what the model was shown."""
    tasks = TaskList()
    await _conversation(TURNS[:1], tasks)  # cell 1 made the list
    later = await _conversation([[("TaskList", {})],
                                 [("TaskUpdate", {"taskId": "2", "subject": "Fit a line"})]],
                                tasks, prompt="go on")
    md = render_transcript(_record(later))
    # two responses, nothing said between them: one line
    assert ("> go on\n\n**Tasks** · listed the tasks · edited 2. Fit a line · 0 of 3 done\n\n"
            "- [ ] **1\\. Load sales.csv** (in progress)\n- [ ] 2\\. Fit a line\n"
            "- [ ] 3\\. Plot") in md


async def test_a_task_call_with_an_approval_keeps_its_card():
    messages = await _conversation([[("TaskCreate", {"subject": "A"})]])
    approvals = [{"tool_use_id": "t1", "tool_name": "TaskCreate", "decision": "allow",
                  "source": "user"}]
    md = render_transcript(_record(messages, approvals=approvals))
    assert ("<b>TaskCreate</b> <code>{&quot;subject&quot;:&quot;A&quot;}</code> "
            "(allowed by you)") in md
    assert "**Tasks**" not in md


async def test_model_words_in_the_checklist_are_plain_markdown():
    messages = await _conversation([[("TaskCreate", {"subject": "Sum $ costs <b>now</b>"})]])
    md = render_transcript(_record(messages))
    assert "- [ ] 1\\. Sum \\\\$ costs &lt;b&gt;now&lt;/b&gt;\n" in md  # no math, no HTML


# -- the live view --------------------------------------------------------------------------

def _live(view: LiveView, messages: list[Message]) -> None:
    for message in messages:
        view.apply(message)


async def test_the_live_view_keeps_one_checklist_above_the_status_line():
    stream = _stream(await _conversation(TURNS))
    view = LiveView()
    view.apply(stream[0])
    view.apply(stream[1])  # a TaskCreate call, not answered yet
    assert view.markdown(status=False) == "I'll plan this.\n\n**Tasks** · adding Load sales.csv…"
    _live(view, stream[2:10])  # the first response's calls and results
    first = view.markdown()
    assert first.endswith(
        "**Tasks** · 0 of 3 done\n\n- [ ] **1\\. Load sales.csv** (in progress)\n"
        "- [ ] 2\\. Fit a trend\n- [ ] 3\\. Plot\n\n*starting…*")
    _live(view, stream[10:])
    view.apply(result_message(num_turns=4))
    md = view.markdown()
    assert md.count("**Tasks** · 2 of 2 done") == 1 and md.count("- [x] 1\\.") == 1
    assert ("**Tasks** · completed 2. Fit a trend · deleted 3. Plot\n\n"
            "Done: sales trend upward.\n\n**Tasks** · 2 of 2 done\n\n"
            "- [x] 1\\. Load sales.csv\n- [x] 2\\. Fit a trend\n\n*Done after 4 turns") in md
    assert "<b>TaskUpdate</b>" in md and md.count("<details>") == 2  # the failure, Python
    text = view.text()
    assert "Tasks · 2 of 2 done\n  ☑ 1. Load sales.csv\n  ☑ 2. Fit a trend\n[Done" in text
    # a slice without the status line (a display that ends above a figure) has no checklist
    assert "2 of 2 done" not in view.markdown(0, 3, status=False)


async def test_a_subagents_task_calls_stay_cards_and_leave_the_checklist_alone():
    view = LiveView()
    _live(view, _stream(await _conversation(TURNS[:1])))
    _live(view, _stream(await _conversation([[("TaskCreate", {"subject": "Sub step"})]]),
                        parent="toolu_agent"))
    md = view.markdown()
    assert "<b>TaskCreate</b> <code>{&quot;subject&quot;:&quot;Sub step&quot;}</code>" in md
    assert "Sub step" not in md.split("**Tasks** · 0 of 3 done")[1]



async def test_the_live_renderer_updates_its_one_display_in_place():
    renderer = LiveRenderer()
    publisher = renderer._publisher = RecordingPublisher()
    stream = _stream(await _conversation(TURNS))
    for message in stream:
        renderer.on_message(message)  # coalesced: drawn now or once the interval passed
    renderer.coalescer.close()
    renderer._draw()  # the latest state, as the pending draw would have drawn it
    assert len(renderer.displays) == 1
    assert len({call["id"] for call in publisher.calls}) == 1
    assert [call["update"] for call in publisher.calls] == [False] + [True] * (
        len(publisher.calls) - 1)
    assert renderer.coalescer.flushes <= len(stream)
    shown = publisher.calls[-1]["data"]
    assert shown["text/markdown"].count("**Tasks** · 2 of 2 done") == 1
    assert "Tasks · 2 of 2 done\n  ☑ 1. Load sales.csv" in shown["text/plain"]


# -- a terminal ---------------------------------------------------------------------------------

@pytest.fixture
def printed() -> list[str]:
    return []


async def test_a_terminal_prints_one_line_per_task_change(printed):
    renderer = TextRenderer(write=printed.append)
    for message in _stream(await _conversation(TURNS)):
        renderer.on_message(message)
    lines = "".join(printed).splitlines()
    assert [line for line in lines if line.startswith(("tasks:", "→"))] == [
        "tasks: 0/1 done", "tasks: 0/2 done", "tasks: 0/3 done",
        "tasks: 0/3 done · ◐ Load sales.csv",
        "→ Python df = pd.read_csv('sales.csv')",
        "tasks: 1/3 done", "tasks: 1/3 done · ◐ Fit a trend",
        '→ TaskUpdate {"taskId":"9","status":"completed"}',
        "tasks: 2/3 done", "tasks: 2/2 done"]
    failed = lines.index('→ TaskUpdate {"taskId":"9","status":"completed"}')
    assert lines[failed + 1].startswith("  ✗ failed")
    assert lines[failed + 2] == "  │ No task with id '9'. Task ids: 1, 2, 3."


async def test_a_terminal_prints_nothing_for_reading_the_list(printed):
    tasks = TaskList()
    await _conversation(TURNS[:1], tasks)
    renderer = TextRenderer(write=printed.append)
    for message in _stream(await _conversation([[("TaskList", {}),
                                                 ("TaskGet", {"taskId": "1"})]], tasks)):
        renderer.on_message(message)
    assert printed == []


def test_the_view_without_task_calls_is_unchanged():
    view = LiveView()
    view.apply(AssistantMessage([block_from_wire({"type": "text", "text": "Hi."})], model="m"))
    view.apply(ResultMessage(subtype="success", duration_ms=0, duration_api_ms=0,
                             is_error=False, num_turns=1, session_id="s"))
    assert view.checklist is None and "Tasks" not in view.markdown()
