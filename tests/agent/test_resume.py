"""Sessions across processes: resume, continue, fork, session_id, resume_session_at; every
run is saved (the store is read back as a new process would read it)."""

from __future__ import annotations

import contextlib

import pytest

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    UserMessage,
    query,
)
from fuxi_notebook._internal.sessions.api import get_session_messages, list_sessions
from fuxi_notebook._internal.sessions.store import (
    FileSessionStore,
    InMemorySessionStore,
    project_key_for_directory,
)
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.testing import text, tool_use

from .helpers import block_texts, collect


def _texts(request) -> list[str]:
    """What each message of a model request says (text, or the tool call / result)."""
    said = []
    for message in request.messages:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            said.append(block.get("text") or block.get("name") or block["type"])
    return said


async def _run(prompt: str, tmp_path, *answers, **options) -> tuple[ScriptedModel, list]:
    model = ScriptedModel([[text(a)] for a in answers])
    messages, _ = await collect(prompt, FuxiAgentOptions(model=model, cwd=tmp_path, **options))
    return model, messages


def _session_files(tmp_path) -> list:
    folder = FileSessionStore().project_dir(project_key_for_directory(tmp_path))
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


async def test_resume_gives_the_model_the_earlier_conversation(tmp_path):
    _, first = await _run("My name is Ada.", tmp_path, "Hello Ada.")
    session_id = first[-1].session_id
    model, later = await _run("What is my name?", tmp_path, "Ada.", resume=session_id)
    assert _texts(model.requests[0]) == ["My name is Ada.", "Hello Ada.", "What is my name?"]
    assert later[0].data["session_id"] == later[-1].session_id == session_id
    assert [block_texts(m.message)[0] for m in get_session_messages(
        session_id, tmp_path)] == ["My name is Ada.", "Hello Ada.", "What is my name?", "Ada."]


async def test_resuming_an_unknown_session_names_it(tmp_path):
    with pytest.raises(ConfigurationError, match="no session 1234-nope"):
        await _run("hi", tmp_path, resume="1234-nope")


async def test_continue_takes_the_latest_session_of_the_directory(tmp_path):
    model, messages = await _run("nothing yet", tmp_path, "fresh", continue_conversation=True)
    assert _texts(model.requests[0]) == ["nothing yet"]  # none to continue: a new one
    await _run("second session", tmp_path, "two")
    other = tmp_path / "other"
    other.mkdir()
    await _run("elsewhere", other, "not here")
    model, later = await _run("and now?", tmp_path, "three", continue_conversation=True)
    assert _texts(model.requests[0]) == ["second session", "two", "and now?"]
    assert later[-1].session_id != messages[-1].session_id


async def test_a_fork_goes_on_under_a_new_id_and_leaves_the_original_as_it_was(tmp_path):
    _, first = await _run("Plan A?", tmp_path, "A it is.")
    original = first[-1].session_id
    [path] = _session_files(tmp_path)
    saved = path.read_bytes()
    model, fork = await _run("Plan B?", tmp_path, "B then.", resume=original,
                             fork_session=True)
    assert _texts(model.requests[0]) == ["Plan A?", "A it is.", "Plan B?"]
    new_id = fork[0].data["session_id"]
    assert new_id != original and fork[-1].session_id == new_id
    assert path.read_bytes() == saved
    assert len(get_session_messages(new_id, tmp_path)) == 4
    assert len(get_session_messages(original, tmp_path)) == 2


async def test_session_id_names_a_new_session_or_a_fork(tmp_path):
    chosen = "6f1c3a52-9d2e-4b7a-8c1f-0e5d4b3a2f10"
    _, messages = await _run("hi", tmp_path, "hello", session_id=chosen)
    assert messages[0].data["session_id"] == messages[-1].session_id == chosen
    with pytest.raises(ConfigurationError, match="already in use"):
        await _run("again", tmp_path, session_id=chosen)
    fork_id = "0c9b8a7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"
    _, forked = await _run("on", tmp_path, "ok", resume=chosen, fork_session=True,
                           session_id=fork_id)
    assert forked[-1].session_id == fork_id


@pytest.mark.parametrize(("options", "complaint"), [
    ({"resume": "x", "continue_conversation": True}, "cannot be used together"),
    ({"session_id": "not-a-uuid"}, "must be a UUID"),
    ({"resume": "x", "session_id": "6f1c3a52-9d2e-4b7a-8c1f-0e5d4b3a2f10"},
     "needs fork_session=True"),
    ({"fork_session": True}, "fork_session needs resume"),
    ({"resume_session_at": "u"}, "resume_session_at needs resume"),
    ({"session_store": object()}, "session_store must have"),
    ({"session_store_flush": "sometimes"}, "session_store_flush must be 'batched' or"),
    ({"load_timeout_ms": 0}, "load_timeout_ms must be a positive number"),
])
async def test_conflicting_session_options_are_refused_before_anything_runs(
        tmp_path, options, complaint):
    model = ScriptedModel([])
    with pytest.raises(ConfigurationError, match=complaint):
        await collect("hi", FuxiAgentOptions(model=model, cwd=tmp_path, **options))
    assert model.requests == [] and _session_files(tmp_path) == []


async def test_resume_session_at_branches_at_a_message_the_run_showed(tmp_path):
    async with FuxiSDKClient(FuxiAgentOptions(
            model=ScriptedModel([[text("red")], [text("round")]]), cwd=tmp_path)) as client:
        await client.query("Colour of the ball?")
        first = [m async for m in client.receive_response()]
        await client.query("Shape?")
        [m async for m in client.receive_response()]
    session_id = first[-1].session_id
    [answer] = [m.uuid for m in first if isinstance(m, AssistantMessage)]
    model, _ = await _run("Size?", tmp_path, "small", resume=session_id,
                          resume_session_at=answer)
    assert _texts(model.requests[0]) == ["Colour of the ball?", "red", "Size?"]
    # the branch is the session now; the cut part stays in the file
    model, _ = await _run("And?", tmp_path, "done", resume=session_id)
    assert _texts(model.requests[0]) == ["Colour of the ball?", "red", "Size?", "small", "And?"]
    with pytest.raises(ConfigurationError, match="no message nowhere"):
        await _run("x", tmp_path, resume=session_id, resume_session_at="nowhere")


async def test_results_still_owed_come_back_with_the_next_prompt(tmp_path):
    model = ScriptedModel([[tool_use("Bash", {"command": "echo one"})],
                           [tool_use("Bash", {"command": "echo two"})]])
    messages, error = await collect("run it", FuxiAgentOptions(
        model=model, cwd=tmp_path, allowed_tools=["Bash"], max_turns=1))
    assert error is not None and error.subtype == "error_max_turns"  # "echo two" is owed
    later = ScriptedModel([[text("noted")]])
    await collect("and?", FuxiAgentOptions(model=later, cwd=tmp_path,
                                           resume=messages[-1].session_id))
    last = later.requests[0].messages[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"] and last[-1]["text"] == "and?"
    assert last[0]["tool_use_id"] == later.requests[0].messages[-2]["content"][0]["id"]
    # the owed results now travel with "and?" in the stored conversation too (a branch)
    third = ScriptedModel([[text("ok")]])
    await collect("more", FuxiAgentOptions(model=third, cwd=tmp_path,
                                           resume=messages[-1].session_id))
    assert _texts(third.requests[0])[-5:] == ["Bash", "tool_result", "and?", "noted", "more"]


async def test_a_client_resumes_and_saves_each_run(tmp_path):
    _, first = await _run("one", tmp_path, "1")
    session_id = first[-1].session_id
    model = ScriptedModel([[text("2")], [text("3")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path,
                                              resume=session_id)) as client:
        for prompt in ("two", "three"):
            await client.query(prompt)
            [m async for m in client.receive_response()]
            # saved before the result arrived: another process could resume now
            said = [block_texts(m.message)[0]
                    for m in get_session_messages(session_id, tmp_path)]
            assert said[-2:] == [prompt, {"two": "2", "three": "3"}[prompt]]
    assert _texts(model.requests[1]) == ["one", "1", "two", "2", "three"]


async def test_a_store_in_the_options_mirrors_the_local_file_and_resumes_from_it(
        tmp_path, monkeypatch):
    """As the comparable SDK's CLI does: the local transcript is written and the store
    gets a mirror of it; a resume reads the store (the local file may be gone)."""
    store = InMemorySessionStore()
    _, first = await _run("remember 7", tmp_path, "ok", session_store=store)
    [local] = _session_files(tmp_path)
    local.unlink()
    model, _ = await _run("what number?", tmp_path, "7", session_store=store,
                          resume=first[-1].session_id)
    assert _texts(model.requests[0]) == ["remember 7", "ok", "what number?"]
    assert len(await store.list_sessions(project_key_for_directory(tmp_path))) == 1
    assert len(get_session_messages(first[-1].session_id, tmp_path)) == 2  # this run's
    monkeypatch.setenv("FUXI_SKIP_SESSION_PERSISTENCE", "1")  # then only the store
    _, third = await _run("and now?", tmp_path, "7", session_store=store)
    assert third[-1].session_id not in {s.session_id for s in list_sessions(tmp_path)}


async def test_persistence_can_be_switched_off(tmp_path, monkeypatch):
    _, first = await _run("saved", tmp_path, "yes")
    monkeypatch.setenv("FUXI_SKIP_SESSION_PERSISTENCE", "1")
    model, _ = await _run("not saved", tmp_path, "right", resume=first[-1].session_id)
    assert _texts(model.requests[0]) == ["saved", "yes", "not saved"]  # reading still works
    assert len(get_session_messages(first[-1].session_id, tmp_path)) == 2
    await _run("nor this", tmp_path, "no")
    assert len(list_sessions(tmp_path)) == 1


class _BrokenStore(InMemorySessionStore):
    async def append(self, key, entries):
        raise OSError("disk full")


async def test_a_failing_store_is_reported_and_the_run_still_ends_well(tmp_path, monkeypatch):
    from fuxi_notebook._internal.agent import transcript_writer

    monkeypatch.setattr(transcript_writer, "RETRY_DELAYS", (0, 0))
    _, messages = await _run("hi", tmp_path, "hello", session_store=_BrokenStore())
    problem, result = messages[-2:]
    assert isinstance(problem, SystemMessage) and problem.subtype == "mirror_error"
    assert "disk full" in problem.data["error"]
    assert isinstance(result, ResultMessage) and result.subtype == "success"


async def test_stopping_early_still_saves_a_conversation_that_can_go_on(tmp_path):
    model = ScriptedModel([[text("Looking."), tool_use("Bash", {"command": "echo hi"})],
                           [text("never reached")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash"])
    async with contextlib.aclosing(query(prompt="go", options=options)) as run:
        async for message in run:
            if isinstance(message, SystemMessage):
                session_id = message.data["session_id"]
            if isinstance(message, UserMessage):  # the tool's result: stop reading here
                break
    later = ScriptedModel([[text("fine")]])
    messages, error = await collect("go on", FuxiAgentOptions(model=later, cwd=tmp_path,
                                                              resume=session_id))
    assert error is None and messages[-1].result == "fine"
    assert _texts(later.requests[0]) == ["go", "Looking.", "Bash", "tool_result", "go on"]


async def test_a_notebooks_session_can_be_resumed_but_not_written(tmp_path):
    from fuxi_notebook._internal.sessions.notebook_store import NotebookSessionStore

    from ..sessions.notebooks import SID, write_notebook

    store = NotebookSessionStore(write_notebook(tmp_path, owed=True))
    model, messages = await _run("go on", tmp_path, "ok", session_store=store, resume=SID,
                                 fork_session=True)
    sent = model.requests[0].messages
    assert _texts(model.requests[0])[:1] == ["Fix the failing test"] and len(sent) == 13
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "text"]  # owed by d
    problem = messages[-2]
    assert problem.subtype == "mirror_error" and "read-only" in problem.data["error"]
    assert messages[-1].subtype == "success"
