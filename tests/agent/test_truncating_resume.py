"""Truncating resume as the comparable SDK's e2e test_truncating_resume checks it: a
two-turn session forked at the end of turn 1 with `resume_drops_turn` naming turn 2's
prompt forks cleanly, turn 2 gone; naming anything else is refused with the
comparable CLI's words ("Resume rejected by --resume-drops-turn:"), and nothing is
forked or written. Transcripts keep a plain prompt as a string, as that CLI does, so
`SessionMessage.message["content"]` compares equal to the prompt."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fuxi_notebook import (
    AssistantMessage,
    ConfigurationError,
    FuxiAgentOptions,
    FuxiSDKClient,
    ProcessError,
    ResultMessage,
    ScriptedModel,
    get_session_messages,
    list_sessions,
    query,
)
from fuxi_notebook.testing import text, tool_use

TURN_1 = "Reply with exactly: one"
TURN_2 = "Reply with exactly: two"
TURN_3 = "Reply with exactly: three"


@pytest.fixture(autouse=True)
def _sessions_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "home"))
    monkeypatch.delenv("FUXI_SKIP_SESSION_PERSISTENCE", raising=False)


async def _two_turn_session(cwd: Path, second: list | None = None) -> tuple[str, str, str]:
    """(session id, last uuid of turn 1, prompt uuid of turn 2), as the e2e test finds
    them: the turn-1 assistant message seen live, turn 2's prompt in the transcript."""
    script = [[text("one")], *(second or [[text("two")]])]
    options = FuxiAgentOptions(model=ScriptedModel(script), cwd=cwd, max_turns=3,
                               allowed_tools=["Glob"])
    last: AssistantMessage | None = None
    results: list[ResultMessage] = []
    async with FuxiSDKClient(options) as client:
        await client.query(TURN_1)
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                last = message
            elif isinstance(message, ResultMessage):
                results.append(message)
        await client.query(TURN_2)
        results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    assert last is not None and last.uuid and not any(r.is_error for r in results)
    session_id = results[-1].session_id
    found = get_session_messages(session_id, directory=str(cwd))
    uuids = [m.uuid for m in found]
    turn_2 = next(i for i, m in enumerate(found)
                  if m.type == "user" and m.message.get("content") == TURN_2)
    assert turn_2 == uuids.index(last.uuid) + 1
    return session_id, last.uuid, found[turn_2].uuid


def _prompts(session_id: str, cwd: Path) -> list[str]:
    return [m.message["content"] for m in get_session_messages(session_id, directory=str(cwd))
            if m.type == "user" and isinstance(m.message.get("content"), str)]


def _fork(cwd: Path, session_id: str, keep_at: str, drops: str,
          model: ScriptedModel | None = None) -> FuxiAgentOptions:
    return FuxiAgentOptions(model=model or ScriptedModel([]), cwd=cwd, max_turns=1,
                            resume=session_id, fork_session=True, resume_session_at=keep_at,
                            resume_drops_turn=drops)


@pytest.mark.parametrize("second", [None, [[tool_use("Glob", {"pattern": "*"})], [text("two")]]],
                         ids=["text", "with-a-tool-call"])
async def test_dropping_the_turn_that_follows_the_cut_forks_cleanly(tmp_path, second):
    session_id, keep_at, turn_2 = await _two_turn_session(tmp_path, second)
    script = ScriptedModel([[text("three")]])
    options = _fork(tmp_path, session_id, keep_at, turn_2, script)
    forked = [m async for m in query(prompt=TURN_3, options=options)
              if isinstance(m, ResultMessage)][-1]
    assert not forked.is_error and forked.session_id != session_id
    assert _prompts(forked.session_id, tmp_path) == [TURN_1, TURN_3]
    assert _prompts(session_id, tmp_path) == [TURN_1, TURN_2]  # the source is untouched
    sent = script.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [(b["type"], b["text"]) for b in sent[0]["content"]] == [("text", TURN_1)]  # a block


async def test_naming_another_prompt_is_refused_and_nothing_is_written(tmp_path):
    session_id, keep_at, _ = await _two_turn_session(tmp_path)
    before = {s.session_id for s in list_sessions(directory=str(tmp_path))}
    script = ScriptedModel([])
    options = _fork(tmp_path, session_id, keep_at, str(uuid.uuid4()), script)
    with pytest.raises(ProcessError) as raised:
        async for _ in query(prompt=TURN_3, options=options):
            pass
    assert "Resume rejected by --resume-drops-turn:" in str(raised.value)
    assert _prompts(session_id, tmp_path) == [TURN_1, TURN_2]
    assert {s.session_id for s in list_sessions(directory=str(tmp_path))} == before
    assert script.requests == []  # the model was never asked


async def test_a_cut_that_would_drop_two_turns_is_refused(tmp_path):
    """A cut at turn 1's prompt would drop turn 1's answer and all of turn 2: the entry
    after the cut is not the prompt named, so it is refused."""
    session_id, _, turn_2 = await _two_turn_session(tmp_path)
    first_prompt = get_session_messages(session_id, directory=str(tmp_path))[0]
    options = _fork(tmp_path, session_id, first_prompt.uuid, turn_2)
    with pytest.raises(ProcessError, match="Resume rejected by --resume-drops-turn: the entry "
                                           "after the cut"):
        async for _ in query(prompt=TURN_3, options=options):
            pass


def test_drops_turn_without_a_cut_is_a_configuration_error(tmp_path):
    options = FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path, resume=str(uuid.uuid4()),
                               resume_drops_turn=str(uuid.uuid4()))

    async def run() -> None:
        async for _ in query(prompt="hi", options=options):
            pass

    import asyncio
    with pytest.raises(ConfigurationError, match="resume_drops_turn needs resume_session_at"):
        asyncio.run(run())
