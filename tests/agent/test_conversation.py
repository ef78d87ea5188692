"""A conversation that continues with new options: continue, resume, fork; replay turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.agent.session import Conversation, Session
from fuxi_notebook._internal.models.replay import ReplayModel
from fuxi_notebook.options import PermissionRuleValue, PermissionUpdate
from fuxi_notebook.testing import text, tool_use
from fuxi_notebook.types import ResultMessage, UserMessage


async def _play(session: Session, prompt: str) -> list:
    return [m async for m in run_prompt(Run(session), prompt)]


async def test_continued_keeps_the_conversation_and_takes_the_new_options(tmp_path: Path):
    (tmp_path / "a.txt").write_text("alpha\n")
    first = ScriptedModel([[tool_use("Read", {"file_path": "a.txt"})], [text("read it")]])
    session = build_session(FuxiAgentOptions(model=first, cwd=tmp_path, max_turns=3))
    session.permissions.apply([PermissionUpdate(type="addRules", behavior="allow",
                                                rules=[PermissionRuleValue("Bash", "ls")])])
    await _play(session, "read a.txt")
    second = ScriptedModel([[text("still here")]], name="other-model")
    later = session.continued(FuxiAgentOptions(model=second, cwd=tmp_path, max_turns=9))
    assert later.id == session.id and later.options.max_turns == 9
    assert later.model_name == "other-model"
    assert str(tmp_path / "a.txt") in later.tool_ctx.read_files  # Edit may follow the Read
    assert any(str(r) == "Bash(ls)" for r in later.permissions.rules["allow"])
    await _play(later, "and now?")
    sent = second.requests[0].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert later.usage.tokens["input_tokens"] == 30  # usage carried over, then added


async def test_a_fork_leaves_the_original_branch_intact(tmp_path: Path):
    session = build_session(FuxiAgentOptions(model=ScriptedModel([[text("one")]]), cwd=tmp_path))
    await _play(session, "first")
    branch = session.snapshot().forked("fork-id")
    forked = build_session(FuxiAgentOptions(model=ScriptedModel([[text("two")]]), cwd=tmp_path),
                     conversation=branch)
    await _play(forked, "second")
    assert forked.id == "fork-id" and len(forked.history) == 4
    assert len(session.history) == 2 and session.id != "fork-id"


async def test_resume_from_saved_history_sends_it_and_pending_results(tmp_path: Path):
    history = [{"role": "user", "content": "list"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                  "name": "Bash",
                                                  "input": {"command": "ls"}}]}]
    pending = [{"type": "tool_result", "tool_use_id": "t1", "content": "Not executed"}]
    model = ScriptedModel([[text("ok")]])
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path),
                      conversation=Conversation(id="saved", history=history,
                                                pending_results=pending))
    messages = await _play(session, "go on")
    assert messages[-1].session_id == "saved"
    last = model.requests[0].messages[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[-1]["text"] == "go on"


async def test_an_invalid_resumed_history_fails_like_the_api_would(tmp_path: Path):
    broken = [{"role": "user", "content": "x"},
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                 "name": "Bash", "input": {}}]}]
    session = build_session(FuxiAgentOptions(model=ScriptedModel([[text("never")]]), cwd=tmp_path),
                      conversation=Conversation(history=broken))
    messages = await _play(session, "go on")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_during_execution"
    assert "without `tool_result`" in result.errors[0]


async def test_replay_model_plays_recorded_turns_and_the_tools_run_again(tmp_path: Path):
    recorded = [{"role": "user", "content": "make a file"},
                {"role": "assistant", "content": [
                    text("Writing it."),
                    {"type": "tool_use", "id": "toolu_A", "name": "Write",
                     "input": {"file_path": "new.txt", "content": "hi\n"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_A",
                                              "content": "old result"}]},
                {"role": "assistant", "content": "Done."}]
    turns = [m["content"] if isinstance(m["content"], list) else [text(m["content"])]
             for m in recorded if m["role"] == "assistant"]
    model = ReplayModel(turns, name="claude-sonnet-5-5")
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Write"]))
    messages = await _play(session, "make a file")
    assert (tmp_path / "new.txt").read_text() == "hi\n"
    results = [m for m in messages if isinstance(m, UserMessage)]
    assert results[0].content[0].tool_use_id == "toolu_A"  # the recorded id
    final = messages[-1]
    assert final.result == "Done." and final.total_cost_usd == 0 and model.remaining == 0


async def test_replay_past_the_record_ends_with_an_error_not_a_call(tmp_path: Path):
    model = ReplayModel([[tool_use("Glob", {"pattern": "*"}, id="toolu_G")]], name="m")
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path))
    messages = await _play(session, "go")
    assert messages[-1].subtype == "error_during_execution"
    assert "further than the record" in messages[-1].errors[0]


def test_bad_options_leave_the_conversation_untouched(tmp_path: Path):
    session = build_session(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path))
    from fuxi_notebook.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        session.continued(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path,
                                           max_turns=0))
    assert session.history == []


async def test_a_text_file_named_png_does_not_poison_the_conversation(tmp_path: Path):
    # sent as image/png it would make the API (and our fakes) reject every later request
    (tmp_path / "chart.png").write_text("a caption, not a picture\n")
    model = ScriptedModel([[tool_use("Read", {"file_path": "chart.png"})], [text("a caption")],
                           [text("still fine")]])
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path))
    first = await _play(session, "look at chart.png")
    second = await _play(session, "and now?")
    assert first[-1].subtype == "success" and second[-1].subtype == "success"
