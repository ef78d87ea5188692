"""How runs reach the session store: `session_store_flush` ("batched" at the end of a run,
"eager" in the background as it goes), `load_timeout_ms` on the reads that open a
session, and the transcript file hooks are told of."""

from __future__ import annotations

import asyncio
import contextlib
import re

import pytest

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    HookMatcher,
    ResultMessage,
    ScriptedModel,
    SystemMessage,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.sessions.entries import chain
from fuxi_notebook._internal.sessions.store import (
    FileSessionStore,
    InMemorySessionStore,
    project_key_for_directory,
)
from fuxi_notebook.errors import ConfigurationError

from ..notebook.kernel_harness import wait_until
from .helpers import block_texts, collect, result_text, tool_results


class _WatchedStore(InMemorySessionStore):
    """Notes each append as it starts; with `gate`, holds each one until it opens."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        super().__init__()
        self.gate = gate
        self.started = asyncio.Event()
        self.committed: list[dict] = []

    async def append(self, key, entries):
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        await super().append(key, entries)
        if "subpath" not in key:
            self.committed.extend(entries)


def _probe(action) -> dict:
    """`mcp_servers` with one tool, `mcp__probe__check`, that runs `action()`."""
    @tool("check", "Look at the store", {})
    async def check(args):
        return {"content": [{"type": "text", "text": await action()}]}

    return {"probe": create_sdk_mcp_server("probe", tools=[check])}


def _checking_model() -> ScriptedModel:
    return ScriptedModel([[text("Checking."), tool_use("mcp__probe__check", {})],
                          [text("Checked.")]])


def _options(model, tmp_path, store, action, flush) -> FuxiAgentOptions:
    return FuxiAgentOptions(model=model, cwd=tmp_path, session_store=store,
                            session_store_flush=flush, mcp_servers=_probe(action),
                            allowed_tools=["mcp__probe__check"])


async def test_eager_writes_while_the_run_goes_on_batched_at_its_end(tmp_path):
    said: dict[str, str] = {}
    for flush in ("batched", "eager"):
        store = _WatchedStore()

        async def stored(store=store, flush=flush) -> str:
            if flush == "eager":  # evidence that the writer got the prompt meanwhile
                await asyncio.wait_for(store.started.wait(), timeout=10)
            return str(len(store.committed))

        model = _checking_model()
        messages, error = await collect("look", _options(model, tmp_path, store, stored,
                                                         flush))
        assert error is None and messages[-1].result == "Checked."
        said[flush] = result_text(tool_results(model.requests[1].messages)[0])
        entries = await store.load({"project_key": project_key_for_directory(tmp_path),
                                    "session_id": messages[-1].session_id})
        assert [e["message"]["role"] for e in chain(entries)] == [
            "user", "assistant", "user", "assistant"]
        assert len(entries) == 4  # written once each: no duplicates, no branches
        shown = {m.uuid for m in messages if isinstance(m, AssistantMessage | UserMessage)}
        assert {u for e in entries for u in e.get("message_uuids", ())} == shown
    assert said == {"batched": "0", "eager": "1"}  # the prompt, while the tool ran


async def test_eager_writing_never_holds_up_the_stream(tmp_path):
    gate = asyncio.Event()
    store = _WatchedStore(gate)

    async def started() -> str:
        await asyncio.wait_for(store.started.wait(), timeout=10)
        return "the store is busy"

    options = _options(_checking_model(), tmp_path, store, started, "eager")
    seen = []
    async with contextlib.aclosing(query(prompt="look", options=options)) as run:
        async for message in run:
            seen.append(message)
            if isinstance(message, UserMessage):  # the tool's result came through ...
                [result] = message.content
                assert "the store is busy" in str(result.content) and not result.is_error
                assert store.committed == [] and not gate.is_set()  # ... the store held
                gate.set()
            if isinstance(message, ResultMessage):  # flushed before the result
                assert [block_texts(e["message"])[0] for e in store.committed
                        ] == ["look", "Checking.", None, "Checked."]
    assert seen[-1].subtype == "success"


class _BrokenStore(InMemorySessionStore):
    async def append(self, key, entries):
        raise OSError("disk full")


async def test_an_eager_store_that_fails_is_reported_at_the_end(tmp_path, monkeypatch):
    from fuxi_notebook._internal.agent import transcript_writer

    monkeypatch.setattr(transcript_writer, "RETRY_DELAYS", (0,))
    model = ScriptedModel([[tool_use("Glob", {"pattern": "*"})], [text("fine")]])
    messages, error = await collect("go", FuxiAgentOptions(
        model=model, cwd=tmp_path, session_store=_BrokenStore(), session_store_flush="eager"))
    problem, result = messages[-2:]
    assert isinstance(problem, SystemMessage) and problem.subtype == "mirror_error"
    assert "disk full" in problem.data["error"]
    assert error is None and result.result == "fine"


class _StuckStore(InMemorySessionStore):
    """A store whose reads never answer."""

    async def load(self, key):
        await asyncio.Event().wait()

    async def list_sessions(self, project_key):
        await asyncio.Event().wait()


@pytest.mark.parametrize(("session", "read"), [
    ({"resume": "0c9b8a7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d"}, "load()"),
    ({"continue_conversation": True}, "list_sessions()"),
])
async def test_a_store_read_that_takes_too_long_fails_the_start(tmp_path, session, read):
    model = ScriptedModel([])
    with pytest.raises(ConfigurationError, match=re.escape(read) + " took longer than "
                                                 r"load_timeout_ms \(20 ms\)"):
        await collect("hi", FuxiAgentOptions(model=model, cwd=tmp_path,
                                             session_store=_StuckStore(), load_timeout_ms=20,
                                             **session))
    assert model.requests == []


async def test_hooks_are_told_the_transcript_file(tmp_path, monkeypatch):
    paths: list[str | None] = []

    async def hook(input_data, tool_use_id, context):
        paths.append(input_data["transcript_path"])
        return {}

    def options(**more) -> FuxiAgentOptions:
        return FuxiAgentOptions(model=ScriptedModel([[text("ok")]]), cwd=tmp_path,
                                hooks={"UserPromptSubmit": [HookMatcher(None, [hook])]},
                                **more)

    messages, _ = await collect("hi", options())
    path = FileSessionStore().path({"project_key": project_key_for_directory(tmp_path),
                                    "session_id": messages[-1].session_id})
    assert paths == [str(path)] and path.is_file()
    mirrored, _ = await collect("hi", options(session_store=InMemorySessionStore()))
    local = FileSessionStore().path({"project_key": project_key_for_directory(tmp_path),
                                     "session_id": mirrored[-1].session_id})
    monkeypatch.setenv("FUXI_SKIP_SESSION_PERSISTENCE", "1")
    await collect("hi", options())  # not written
    await collect("hi", options(session_store=InMemorySessionStore()))  # not a file
    assert paths == [str(path), str(local), None, None] and local.is_file()


async def test_a_client_writes_eagerly_too(tmp_path):
    store = _WatchedStore()

    async def stored() -> str:
        await asyncio.wait_for(store.started.wait(), timeout=10)
        return str(len(store.committed))

    model = _checking_model()
    async with FuxiSDKClient(_options(model, tmp_path, store, stored, "eager")) as client:
        await client.query("look")
        messages = [m async for m in client.receive_response()]
        # saved before the result arrived
        assert [e["message"]["role"] for e in store.committed] == [
            "user", "assistant", "user", "assistant"]
    assert messages[-1].result == "Checked."
    assert result_text(tool_results(model.requests[1].messages)[0]) == "1"


def _checking_twice(tmp_path, action, replies: tuple[str, str, str],
                    session_id: str) -> FuxiAgentOptions:
    """Options of a session (no session_store) whose model says the first reply and
    calls `mcp__probe__check` (running `action`), says the second and calls it again,
    then answers the third."""
    model = ScriptedModel([[text(replies[0]), tool_use("mcp__probe__check", {})],
                           [text(replies[1]), tool_use("mcp__probe__check", {})],
                           [text(replies[2])]])
    return FuxiAgentOptions(model=model, cwd=tmp_path, mcp_servers=_probe(action),
                            allowed_tools=["mcp__probe__check"], session_id=session_id)


def _local_entries(tmp_path, session_id: str) -> list[dict] | None:
    return FileSessionStore().read({"project_key": project_key_for_directory(tmp_path),
                                    "session_id": session_id})


async def test_the_local_transcript_is_written_behind_a_turn_at_a_time(tmp_path):
    """Without a session_store, a turn is on disk while the next one runs (once its batch
    started, BATCH_SECONDS after it ended); the end of the run writes only what is left,
    once, with no branch."""
    seen: list[list[str]] = []
    session: dict[str, str] = {}

    async def stored() -> str:
        """What the file holds at each call; the second waits for the first turn."""
        async def written(count: int) -> list[dict]:
            while len(entries := _local_entries(tmp_path, session["id"]) or []) < count:
                await asyncio.sleep(0)  # a turn to the writer's task, no wait of its own
            return entries
        entries = await asyncio.wait_for(written(3 if seen else 0), timeout=10)
        seen.append([e["message"]["role"] for e in entries])
        return "ok"

    options = _checking_twice(tmp_path, stored, ("First.", "Second.", "Done."),
                              "3f1d2c4b-5a69-4e8f-9a0b-1c2d3e4f5a6b")
    session["id"] = options.session_id
    messages, error = await collect("go", options)
    assert error is None and messages[-1].result == "Done."
    # the first call found nothing yet (its turn is written after it), the second the turn
    assert seen == [[], ["user", "assistant", "user"]]
    entries = _local_entries(tmp_path, session["id"])
    assert [e["message"]["role"] for e in chain(entries)] == [
        "user", "assistant", "user", "assistant", "user", "assistant"]
    assert len(entries) == 6  # each message once: no duplicates, no branches
    shown = {m.uuid for m in messages if isinstance(m, AssistantMessage | UserMessage)}
    assert {u for e in entries for u in e.get("message_uuids", ())} == shown


async def test_turns_that_end_within_a_batch_are_written_in_one_append(tmp_path,
                                                                       monkeypatch):
    """A run of quick turns (a fast model, a replay) appends its turns in batches: three
    turns ending within BATCH_SECONDS of each other and of the run's end are one append;
    with each turn a batch of its own they are written as they go (the real client
    against the fake API, so the event loop runs between turns), and the file is the
    same."""
    from fuxi_notebook._internal.agent import transcript_writer
    from fuxi_notebook._internal.models.anthropic import AnthropicModel
    from fuxi_notebook.testing import FakeMessagesServer, Turn

    appends: list[int] = []
    append = FileSessionStore.append

    async def counted(self, key, entries):
        appends.append(len(entries))
        await append(self, key, entries)

    monkeypatch.setattr(FileSessionStore, "append", counted)
    (tmp_path / "a.txt").write_text("a\n")
    stored = []
    for batch in (60.0, 0.0):  # every turn within one batch; each turn a batch of its own
        monkeypatch.setattr(transcript_writer, "BATCH_SECONDS", batch)
        appends.clear()
        with FakeMessagesServer([Turn([tool_use("Read", {"file_path": "a.txt"})])] * 3
                                + [Turn([text("Done.")])]) as server:
            model = AnthropicModel("claude-sonnet-5-5", api_key="test-key",
                                   base_url=server.url)
            options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
            messages, error = await collect("go", options)
        assert error is None
        session_id = messages[-1].session_id
        entries = _local_entries(tmp_path, session_id) or []
        stored.append([(e["message"]["role"], block_texts(e["message"])) for e in entries])
        assert sum(appends) == len(entries) == 8  # each message once, no branch
        assert len(appends) == (1 if batch else 4)
    assert stored[0] == stored[1]


async def test_an_interrupt_while_a_batch_waits_loses_no_turn(tmp_path, monkeypatch):
    """Interrupted in turn 2 while turn 1's batch has not started yet (BATCH_SECONDS is
    long here): the interrupt's flush writes turn 1, turn 2's call with its interrupted
    result, each once; the next run goes on from there."""
    from fuxi_notebook._internal.agent import transcript_writer

    monkeypatch.setattr(transcript_writer, "BATCH_SECONDS", 600.0)
    calls: list[int] = []
    running = asyncio.Event()

    async def check() -> str:
        calls.append(1)
        if len(calls) == 2:
            running.set()
            await asyncio.Event().wait()  # until the interrupt cancels it
        return "ok"

    options = _checking_twice(tmp_path, check, ("One.", "Two.", "Three."),
                              "7c6b5a49-3827-4165-9483-a7b6c5d4e3f2")
    async with FuxiSDKClient(options) as client:
        await client.query("go")
        reading = asyncio.ensure_future(_drain_response(client))
        await asyncio.wait_for(running.wait(), timeout=30)
        assert _local_entries(tmp_path, options.session_id) is None  # nothing written yet
        await client.interrupt()
        first = await reading
        assert first[-1].subtype == "error_during_execution"
        entries = _local_entries(tmp_path, options.session_id) or []
        assert [block_texts(e["message"])[0] for e in chain(entries)] == [
            "go", "One.", None, "Two.", None]
        assert len(entries) == 5  # each once
        await client.query("on")
        second = await _drain_response(client)
    assert second[-1].result == "Three."
    entries = _local_entries(tmp_path, options.session_id) or []
    assert [block_texts(e["message"])[0] for e in chain(entries)] == [
        "go", "One.", None, "Two.", None, "Three."]


async def _drain_response(client) -> list:
    return [m async for m in client.receive_response()]


async def test_what_the_transcript_stores_passes_redaction_and_keeps_its_chain(
        tmp_path, monkeypatch):
    """Secrets in the prompt, a response, a tool's result and the working folder's name
    are stored redacted, whichever turn writes them (behind or at the end); the uuids that
    link the entries are the loop's own and stay as they are."""
    secret = "hunter2-correct-horse-battery"
    monkeypatch.setenv("FUXI_TEST_API_KEY", secret)
    shape = "sk-ant-api03-" + "Q" * 32
    cwd = tmp_path / f"work-{secret}"
    cwd.mkdir()
    (cwd / "notes.txt").write_text(f"the key is {shape}\n")
    model = ScriptedModel([[text(f"Reading it for {secret}."),
                            tool_use("Read", {"file_path": "notes.txt"})],
                           [text(f"It holds {shape}.")]])
    options = FuxiAgentOptions(model=model, cwd=cwd, allowed_tools=["Read"],
                               session_id="5b4a3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d")
    messages, error = await collect(f"What is in notes.txt, {secret}?", options)
    assert error is None
    raw = next(FileSessionStore().root.rglob(f"{options.session_id}.jsonl")).read_text()
    assert secret not in raw and shape not in raw
    entries = _local_entries(cwd, options.session_id)
    assert entries is not None
    stored = chain(entries)
    assert [block_texts(e["message"])[0] for e in stored] == [
        "What is in notes.txt, [REDACTED]?", "Reading it for [REDACTED].", None,
        "It holds [REDACTED]."]
    assert "[REDACTED]" in stored[2]["message"]["content"][0]["content"]
    assert {e["cwd"] for e in entries} == {str(tmp_path / "work-[REDACTED]")}
    shown = {m.uuid for m in messages if isinstance(m, AssistantMessage | UserMessage)}
    assert {u for e in entries for u in e.get("message_uuids", ())} == shown


_KILLED_RUN = """
import asyncio, sys
from fuxi_notebook import FuxiAgentOptions, ScriptedModel, create_sdk_mcp_server, query, tool
from fuxi_notebook._internal.models.script import text, tool_use

@tool("hang", "Wait", {})
async def hang(args):
    if args.get("n") == 2:
        print("second call", flush=True)
        await asyncio.Event().wait()
    return {"content": [{"type": "text", "text": "first"}]}

async def main():
    model = ScriptedModel([[text("One."), tool_use("mcp__p__hang", {"n": 1})],
                           [text("Two."), tool_use("mcp__p__hang", {"n": 2})]])
    options = FuxiAgentOptions(model=model, cwd=sys.argv[1], session_id=sys.argv[2],
                               mcp_servers={"p": create_sdk_mcp_server("p", tools=[hang])},
                               allowed_tools=["mcp__p__hang"])
    async for _ in query(prompt="go", options=options):
        pass

asyncio.run(main())
"""


def test_a_killed_process_keeps_the_turns_it_finished(tmp_path):
    """The process dies mid-run (no flush, no finally): the turns before are on disk."""
    import os
    import signal
    import subprocess
    import sys

    session_id = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    script = tmp_path / "run.py"
    script.write_text(_KILLED_RUN)
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path), session_id],
                               stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "second call"  # the run is in turn 2
        wait_until(lambda: len(_local_entries(tmp_path, session_id) or []) == 3)
        assert process.poll() is None  # still running: nothing flushed it at an end
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
    entries = _local_entries(tmp_path, session_id)
    assert entries is not None
    assert [block_texts(e["message"])[0] for e in chain(entries)] == ["go", "One.", None]


@pytest.mark.parametrize("failing", ["local", "store", "both"])
async def test_each_entry_reaches_each_destination_once_with_one_uuid(tmp_path, monkeypatch,
                                                                      failing):
    """Issue 35, finding 7: when one destination's append fails and the other's
    succeeds, the next flush sends each destination exactly what it lacks, with the
    uuids it was first given: a store that keeps every append has each entry once, and
    the local transcript has every entry too."""
    from fuxi_notebook._internal.agent import transcript_writer

    monkeypatch.setattr(transcript_writer, "RETRY_DELAYS", ())
    store = _WatchedStore()
    broken = {"local": failing in ("local", "both"), "store": failing in ("store", "both")}
    real_local = FileSessionStore.append

    async def local_append(self, key, entries):
        if broken["local"]:
            raise OSError("local disk full")
        await real_local(self, key, entries)

    async def store_append(key, entries):
        if broken["store"]:
            raise OSError("store down")
        await _WatchedStore.append(store, key, entries)

    monkeypatch.setattr(FileSessionStore, "append", local_append)
    monkeypatch.setattr(store, "append", store_append)
    model = ScriptedModel([[text("one")], [text("two")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, session_store=store)
    async with FuxiSDKClient(options) as client:
        await client.query("first prompt")
        first = [m async for m in client.receive_response()]
        broken.update(local=False, store=False)
        await client.query("second prompt")
        second = [m async for m in client.receive_response()]
        session_id = client.session.id
    assert any(getattr(m, "subtype", None) == "mirror_error" for m in first)
    assert not any(getattr(m, "subtype", None) == "mirror_error" for m in second)
    stored = [e["uuid"] for e in store.committed]
    local = [e["uuid"] for e in _local_entries(tmp_path, session_id) or []
             if "uuid" in e]
    assert len(stored) == len(set(stored)) == 4, stored  # two prompts, two answers
    assert local == stored  # the same entries, the same uuids, each once
    assert [block_texts(e["message"])[0] for e in store.committed] == [
        "first prompt", "one", "second prompt", "two"]
