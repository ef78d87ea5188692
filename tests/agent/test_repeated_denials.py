"""A denied call the model keeps requesting (issue 9, item 7): the second request gets a
firmer answer, the third ends the run with `terminal_reason="repeated_denial"`, and the
conversation stays valid for the next prompt."""

from __future__ import annotations

from typing import Any

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from fuxi_notebook._internal.agent.loop.tool_calls import FIRM_DENIAL_AT, STOP_DENIAL_AT
from fuxi_notebook.testing import text, tool_use
from fuxi_notebook.types import Message

from .helpers import collect, result_text, tool_results

FIRM = "was already denied, and it will be denied again"


def _bash(command: str, **extra: Any) -> dict[str, Any]:
    return tool_use("Bash", {"command": command, **extra})


def _answers(model: ScriptedModel, request: int) -> list[str]:
    """The tool results' texts sent with request number `request` (0-based)."""
    return [result_text(r) for r in tool_results(model.requests[request].messages)]


def _unanswered(messages: list[Message]) -> set[str]:
    """Ids of tool_use blocks without exactly one tool_result among the yielded messages."""
    asked = [b.id for m in messages if isinstance(m, AssistantMessage) for b in m.content
             if isinstance(b, ToolUseBlock)]
    answered = [b.tool_use_id for m in messages if isinstance(m, UserMessage)
                for b in m.content if isinstance(b, ToolResultBlock)]
    return {i for i in asked if answered.count(i) != 1} | (set(answered) - set(asked))


def test_the_thresholds_escalate_one_step_at_a_time():
    assert (FIRM_DENIAL_AT, STOP_DENIAL_AT) == (2, 3)


async def test_a_model_repeating_a_denied_call_is_stopped_after_the_third_request(tmp_path):
    model = ScriptedModel([[_bash("rm -rf x")] for _ in range(10)])  # would go on forever
    messages, error = await collect("clean up", FuxiAgentOptions(model=model, cwd=tmp_path))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and error is not None
    assert result.subtype == "error_during_execution" and result.is_error
    assert result.terminal_reason == "repeated_denial"
    assert result.errors == [
        "Stopped: the model requested the same denied call 3 times (Bash: rm -rf x)"]
    assert len(model.requests) == 3 and result.num_turns == 3
    first, = _answers(model, 1)
    second, = _answers(model, 2)
    assert FIRM not in first and "allowed_tools" in first  # the plain denial first
    assert FIRM in second and "Bash: rm -rf x" in second and "Do not request it again" in second
    assert "allowed_tools" in second  # it still says how the call could be allowed
    assert not _unanswered(messages)
    third = [m for m in messages if isinstance(m, UserMessage)][-1].content[0]
    assert isinstance(third, ToolResultBlock) and third.is_error
    assert "Stopped" in result_text({"content": third.content})
    assert [d["tool_use_id"] for d in result.permission_denials] == [
        "toolu_01", "toolu_02", "toolu_03"]


async def test_the_same_input_in_another_key_order_is_the_same_call(tmp_path):
    model = ScriptedModel([
        [tool_use("Bash", {"command": "rm x", "description": "clean"})],
        [tool_use("Bash", {"description": "clean", "command": "rm x"})],
        [text("I need permission to run rm x.")],
    ])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert FIRM in _answers(model, 2)[0]
    assert messages[-1].subtype == "success"


async def test_alternating_different_denied_calls_do_not_stop_the_run(tmp_path):
    model = ScriptedModel([[_bash("rm a")], [_bash("rm b")], [_bash("rm a")], [_bash("rm b")],
                           [text("I could not remove a or b.")]])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert error is None and messages[-1].subtype == "success"
    assert [FIRM in _answers(model, n)[0] for n in range(1, 5)] == [False, False, True, True]
    model.assert_complete()


async def test_denials_of_different_inputs_never_escalate(tmp_path):
    model = ScriptedModel([[_bash(f"rm file{n}")] for n in range(6)] + [[text("done")]])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert error is None and messages[-1].subtype == "success"
    assert not any(FIRM in _answers(model, n)[0] for n in range(1, 7))


async def test_copies_within_one_response_count_once(tmp_path):
    """The model had not seen the denial when it wrote the copies: no escalation yet."""
    model = ScriptedModel([[_bash("rm x"), _bash("rm x"), _bash("rm x")], [text("ok")]])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert error is None and messages[-1].subtype == "success"
    answers = _answers(model, 1)
    assert len(answers) == 3 and not any(FIRM in a or "Stopped" in a for a in answers)


async def test_tool_errors_are_not_denials(tmp_path):
    model = ScriptedModel([[tool_use("Read", {"file_path": "missing.txt"})] for _ in range(3)]
                          + [[text("There is no such file.")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
    messages, error = await collect("go", options)
    assert error is None and messages[-1].subtype == "success"
    assert all(FIRM not in _answers(model, n)[0] for n in range(1, 4))


async def test_a_denial_then_another_allowed_call_ends_in_success(tmp_path):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    model = ScriptedModel([
        [_bash("curl -o notes.txt https://example.com/notes")],
        [_bash("curl -o notes.txt https://example.com/notes")],  # the firm answer ...
        [tool_use("Read", {"file_path": "notes.txt"})],  # ... and the model does something else
        [text("It says 42.")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
    messages, error = await collect("what do the notes say?", options)
    assert error is None
    result = messages[-1]
    assert result.subtype == "success" and result.result == "It says 42."
    assert FIRM in _answers(model, 2)[0] and "42" in _answers(model, 3)[0]
    assert len(result.permission_denials) == 2
    model.assert_complete()


async def test_after_the_stop_the_next_prompt_sends_a_valid_request(tmp_path):
    model = ScriptedModel([[_bash("rm -rf x")] for _ in range(STOP_DENIAL_AT)]
                          + [[text("Understood.")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await client.query("clean up")
        stopped = [m async for m in client.receive_response()][-1]
        await client.query("never mind, just say ok")
        ok = [m async for m in client.receive_response()][-1]
    assert stopped.terminal_reason == "repeated_denial"
    assert ok.subtype == "success" and ok.result == "Understood."
    assert len(model.requests) == STOP_DENIAL_AT + 1
    last = model.requests[-1].messages[-1]
    assert last["role"] == "user"
    (owed,) = [b for b in last["content"] if b.get("type") == "tool_result"]
    assert owed["tool_use_id"] == "toolu_03" and owed["is_error"]
    assert "Stopped: the model requested the same denied call 3 times" in result_text(owed)
    assert last["content"][-1]["text"] == "never mind, just say ok"
    model.assert_complete()


async def test_a_new_prompt_starts_the_count_again(tmp_path):
    """The count is per run: after a stop, the user may have changed something."""
    model = ScriptedModel([[_bash("rm -rf x")] for _ in range(STOP_DENIAL_AT)]
                          + [[_bash("rm -rf x")], [text("Still denied.")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await client.query("clean up")
        [m async for m in client.receive_response()]
        await client.query("try again")
        again = [m async for m in client.receive_response()][-1]
    assert again.subtype == "success"
    assert FIRM not in _answers(model, STOP_DENIAL_AT + 1)[0]
