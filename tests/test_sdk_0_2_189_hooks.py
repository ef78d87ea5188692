"""The comparable SDK 0.2.189's hook surface, renamed: the stop events carry
`session_crons` (always, and always empty here: nothing schedules prompts), a Stop hook's
`additionalContext` makes the agent go on with it, and the typed inputs and outputs it
added are declared."""

from __future__ import annotations

from typing import Any

from fuxi_notebook import (
    FuxiAgentOptions,
    HookMatcher,
    PermissionRequestHookInput,
    ScriptedModel,
    StopHookInput,
    StopHookSpecificOutput,
    SubagentStopHookInput,
    UserPromptSubmitHookSpecificOutput,
)
from fuxi_notebook._internal.common.reminders import REMINDER_OPEN
from fuxi_notebook._internal.models.script import text, tool_use

from .agent.helpers import collect
from .agent.subagent_helpers import delegating, worker


def _recording(events: list[tuple[str, dict[str, Any]]], event: str,
               answer: Any = None) -> HookMatcher:
    async def callback(input_data, tool_use_id, context):
        events.append((event, input_data))
        return answer(input_data) if answer is not None else {}
    return HookMatcher(hooks=[callback])


async def test_the_stop_events_carry_session_crons_always_empty(tmp_path):
    events: list[tuple[str, dict[str, Any]]] = []
    hooks = {event: [_recording(events, event)] for event in ("Stop", "SubagentStop")}
    model = delegating([tool_use("Glob", {"pattern": "*"})], [text("Found it.")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, agents=worker(),
                                         hooks=hooks))
    assert [event for event, _ in events] == ["SubagentStop", "Stop"]
    for event, data in events:
        assert data["session_crons"] == [], event
        assert "background_tasks" not in data  # declared, not sent


async def test_a_stop_hooks_additional_context_makes_the_agent_go_on_with_it(tmp_path):
    events: list[tuple[str, dict[str, Any]]] = []

    def once(input_data: dict[str, Any]) -> StopHookSpecificOutput | dict[str, Any]:
        if input_data["stop_hook_active"]:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "Stop",
                                       "additionalContext": "Also list the tests."}}

    model = ScriptedModel([[text("Done.")], [text("Done, and the tests are listed.")]])
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, hooks={"Stop": [_recording(events, "Stop", once)]}))
    assert error is None
    assert messages[-1].result == "Done, and the tests are listed."
    assert [data["stop_hook_active"] for _, data in events] == [False, True]
    sent = model.requests[1].messages[-1]["content"]
    assert [b["text"] for b in sent] == [f"{REMINDER_OPEN}\nAlso list the tests.\n"
                                         "</system-reminder>"]  # feedback, not an error
    assert "Stop hook feedback" not in str(sent)


async def test_a_stop_hook_that_keeps_adding_context_is_cut_off(tmp_path):
    calls: list[bool] = []

    def always(input_data: dict[str, Any]) -> dict[str, Any]:
        calls.append(input_data["stop_hook_active"])
        return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "more"}}

    model = ScriptedModel([[text(f"answer {i}")] for i in range(12)])
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, hooks={"Stop": [_recording([], "Stop", always)]}))
    assert error is None and messages[-1].subtype == "success"
    assert len(model.requests) == 9  # the first answer and eight continuations


def test_the_typed_inputs_and_outputs_declare_the_new_keys():
    for typed in (StopHookInput, SubagentStopHookInput):
        assert {"session_crons", "background_tasks"} <= typed.__optional_keys__
    assert {"prompt_id", "effort"} <= StopHookInput.__optional_keys__
    assert {"agent_id", "agent_type"} <= PermissionRequestHookInput.__optional_keys__
    assert "suppressOriginalPrompt" in UserPromptSubmitHookSpecificOutput.__annotations__
    assert "additionalContext" in StopHookSpecificOutput.__annotations__


async def test_a_subagent_stop_hooks_additional_context_makes_the_subagent_go_on(tmp_path):
    """SubagentStop's `additionalContext`, as Stop's: the subagent goes on with it (a
    reminder, not an error), and the parent reads the subagent's final answer."""
    events: list[tuple[str, dict[str, Any]]] = []

    def once(input_data: dict[str, Any]) -> dict[str, Any]:
        if input_data["stop_hook_active"]:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "SubagentStop",
                                       "additionalContext": "Also name the file."}}

    model = delegating([text("Found it.")], [text("Found it: settings.toml.")])
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, agents=worker(),
        hooks={"SubagentStop": [_recording(events, "SubagentStop", once)]}))
    assert error is None and messages[-1].result == "all done"
    assert [data["stop_hook_active"] for _, data in events] == [False, True]
    went_on = model.requests[2].messages[-1]["content"]
    assert [b["text"] for b in went_on] == [f"{REMINDER_OPEN}\nAlso name the file.\n"
                                            "</system-reminder>"]
    assert "hook feedback" not in str(went_on)
    # the parent's model read the subagent's last answer, not the first
    assert "settings.toml" in str(model.requests[3].messages[-1]["content"])


def _prompt_hook(output: dict[str, Any]) -> dict[str, list[HookMatcher]]:
    async def callback(input_data, tool_use_id, context):
        return {**output, "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                 **output.get("hookSpecificOutput", {})}}
    return {"UserPromptSubmit": [HookMatcher(hooks=[callback])]}


async def test_a_prompt_hooks_session_title_names_the_stored_session(tmp_path, monkeypatch):
    from fuxi_notebook import list_sessions

    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "home"))
    hooks = _prompt_hook({"hookSpecificOutput": {"sessionTitle": "Q3 revenue check"}})
    model = ScriptedModel([[text("Looked.")]])
    messages, error = await collect("look at the numbers", FuxiAgentOptions(
        model=model, cwd=tmp_path, hooks=hooks))
    assert error is None
    [info] = list_sessions(directory=str(tmp_path))
    assert info.session_id == messages[-1].session_id
    assert info.custom_title == "Q3 revenue check" and info.summary == "Q3 revenue check"
    assert info.first_prompt == "look at the numbers"  # the prompt itself is unchanged


async def test_a_blocked_prompt_is_never_echoed_nor_stored(tmp_path, monkeypatch):
    """`suppressOriginalPrompt` asks that the block message leave the prompt out: here no
    block message quotes a prompt, and a blocked prompt is stored nowhere, with or
    without it; a blocked prompt's sessionTitle is not applied (as there)."""
    from fuxi_notebook import list_sessions

    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "home"))
    secret = "my card is 4111 1111 1111 1111"
    for suppress in (True, False):
        hooks = _prompt_hook({"decision": "block", "reason": "Card numbers stay out.",
                              "hookSpecificOutput": {"suppressOriginalPrompt": suppress,
                                                     "sessionTitle": "never"}})
        model = ScriptedModel([])
        messages, error = await collect(secret, FuxiAgentOptions(
            model=model, cwd=tmp_path, hooks=hooks))
        assert error is not None and "Card numbers stay out." in str(error)
        assert secret not in str(error) and all(secret not in repr(m) for m in messages)
        assert model.requests == []
    stored = "".join(p.read_text() for p in (tmp_path / "home").rglob("*.jsonl"))
    assert "4111" not in stored
    assert all(info.custom_title is None for info in list_sessions(directory=str(tmp_path)))
