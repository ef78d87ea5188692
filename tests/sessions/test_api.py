"""The sessions API of the comparable SDK: over any store, over the local files, and over a
notebook's recorded sessions (read-only)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from fuxi_notebook._internal.sessions.api import (
    delete_session,
    delete_session_via_store,
    fork_session,
    fork_session_via_store,
    get_session_info,
    get_session_info_from_store,
    get_session_messages,
    get_session_messages_from_store,
    get_subagent_messages,
    get_subagent_messages_from_store,
    import_session_to_store,
    list_sessions,
    list_sessions_from_store,
    list_subagents,
    list_subagents_from_store,
    rename_session,
    rename_session_via_store,
    tag_session,
    tag_session_via_store,
)
from fuxi_notebook._internal.sessions.entries import message_entry
from fuxi_notebook._internal.sessions.store import (
    FileSessionStore,
    InMemorySessionStore,
    project_key_for_directory,
)
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.types import new_uuid

from ..agent.helpers import block_texts
from .helpers import run_messages
from .notebooks import FORK, SID, exchange, write_notebook


def _turns(session_id: str, prompts: list[str], cwd: str) -> list[dict]:
    """A transcript: each prompt answered by `answer N`."""
    entries, parent = [], None
    for number, prompt in enumerate(prompts):
        for message in ({"role": "user", "content": [{"type": "text", "text": prompt}]},
                        {"role": "assistant",
                         "content": [{"type": "text", "text": f"answer {number}"}]}):
            uuid = new_uuid()
            entries.append(message_entry(message, uuid=uuid, parent=parent,
                                         session_id=session_id, cwd=cwd))
            parent = uuid
    return entries


@pytest.fixture(params=["memory", "file"])
def store(request, tmp_path):
    return InMemorySessionStore() if request.param == "memory" else FileSessionStore(
        tmp_path / "store")


async def _save(store, directory, session_id, prompts):
    key = {"project_key": project_key_for_directory(directory), "session_id": session_id}
    await store.append(key, _turns(session_id, prompts, str(directory)))
    return key


# -- any store ----------------------------------------------------------------------------

async def test_sessions_are_listed_newest_first_with_what_a_listing_shows(store, tmp_path):
    await _save(store, tmp_path, "old", ["first task", "more"])
    await _save(store, tmp_path, "new", ["second task"])
    await _save(store, tmp_path / "store", "elsewhere", ["another project"])
    infos = await list_sessions_from_store(store, tmp_path)
    assert [i.session_id for i in infos] == ["new", "old"]
    old = infos[1]
    assert old.summary == old.first_prompt == "first task" and old.cwd == str(tmp_path)
    assert old.created_at <= old.last_modified <= infos[0].last_modified
    assert (old.file_size is None) == isinstance(store, InMemorySessionStore)
    assert [i.session_id for i in await list_sessions_from_store(store, tmp_path, limit=1,
                                                                 offset=1)] == ["old"]
    assert await get_session_info_from_store(store, "old", tmp_path) == old
    assert await get_session_info_from_store(store, "nope", tmp_path) is None


async def test_messages_follow_the_conversation_with_paging(store, tmp_path):
    await _save(store, tmp_path, "s", ["one", "two"])
    messages = await get_session_messages_from_store(store, "s", tmp_path)
    assert [m.type for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2].message == {"role": "user", "content": "two"}  # a plain prompt: a string
    assert all(m.session_id == "s" and m.parent_tool_use_id is None for m in messages)
    page = await get_session_messages_from_store(store, "s", tmp_path, limit=2, offset=1)
    assert [m.uuid for m in page] == [m.uuid for m in messages[1:3]]
    assert await get_session_messages_from_store(store, "missing", tmp_path) == []


async def test_a_branch_replaces_what_it_branched_from(store, tmp_path):
    key = await _save(store, tmp_path, "s", ["one", "two"])
    first_answer = (await store.load(key))[1]["uuid"]
    await store.append(key, [message_entry(
        {"role": "user", "content": [{"type": "text", "text": "instead"}]}, uuid="branch",
        parent=first_answer, session_id="s", cwd=None)])
    messages = await get_session_messages_from_store(store, "s", tmp_path)
    assert [m.uuid for m in messages][-2:] == [first_answer, "branch"] and len(messages) == 3


async def test_rename_and_tag_show_in_the_listing(store, tmp_path):
    await _save(store, tmp_path, "s", ["the prompt"])
    await rename_session_via_store(store, "s", "  A title ", tmp_path)
    await tag_session_via_store(store, "s", "keep", tmp_path)
    info = await get_session_info_from_store(store, "s", tmp_path)
    assert (info.summary, info.custom_title, info.tag) == ("A title", "A title", "keep")
    assert info.first_prompt == "the prompt"
    await tag_session_via_store(store, "s", None, tmp_path)
    assert (await get_session_info_from_store(store, "s", tmp_path)).tag is None
    with pytest.raises(ConfigurationError, match="non-empty"):
        await rename_session_via_store(store, "s", "  ", tmp_path)
    with pytest.raises(ConfigurationError, match="no session nope"):
        await tag_session_via_store(store, "nope", "x", tmp_path)


async def test_a_fork_copies_up_to_a_message_under_new_ids(store, tmp_path):
    key = await _save(store, tmp_path, "s", ["one", "two"])
    original = await store.load(key)
    cut = original[1]["uuid"]
    fork = await fork_session_via_store(store, "s", tmp_path, up_to_message_id=cut,
                                        title="Try two")
    copied = await get_session_messages_from_store(store, fork.session_id, tmp_path)
    assert [m.message for m in copied] == [e["message"] for e in original[:2]]
    assert not {m.uuid for m in copied} & {e["uuid"] for e in original}
    assert await store.load(key) == original  # the original is untouched
    info = await get_session_info_from_store(store, fork.session_id, tmp_path)
    assert info.custom_title == "Try two"
    whole = await fork_session_via_store(store, "s", tmp_path)
    assert len(await get_session_messages_from_store(store, whole.session_id, tmp_path)) == 4
    with pytest.raises(ConfigurationError, match="has no message nowhere"):
        await fork_session_via_store(store, "s", tmp_path, up_to_message_id="nowhere")


async def test_a_message_can_be_named_by_the_uuid_a_run_showed_it_under(store, tmp_path):
    key = {"project_key": project_key_for_directory(tmp_path), "session_id": "s"}
    entries = _turns("s", ["one", "two"], str(tmp_path))
    entries[1]["message_uuids"] = ["shown-block-1", "shown-block-2"]
    await store.append(key, entries)
    fork = await fork_session_via_store(store, "s", tmp_path, up_to_message_id="shown-block-1")
    assert len(await get_session_messages_from_store(store, fork.session_id, tmp_path)) == 2


async def test_delete(store, tmp_path):
    await _save(store, tmp_path, "s", ["one"])
    await delete_session_via_store(store, "s", tmp_path)
    assert await list_sessions_from_store(store, tmp_path) == []
    with pytest.raises(ConfigurationError, match="no session s"):
        await delete_session_via_store(store, "s", tmp_path)


# -- the local files (FUXI_CONFIG_DIR, set per test by conftest) -------------------------

async def _save_locally(directory, session_id, prompts):
    return await _save(FileSessionStore(), directory, session_id, prompts)


async def test_the_sync_functions_read_and_change_the_local_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    await _save_locally(tmp_path / "a", "in-a", ["task a"])
    await _save_locally(tmp_path / "b", "in-b", ["task b"])
    # sync functions called inside a running event loop, as in a Jupyter cell
    assert [i.session_id for i in list_sessions(tmp_path / "a")] == ["in-a"]
    assert {i.session_id for i in list_sessions()} == {"in-a", "in-b"}  # every project
    assert get_session_info("in-b").cwd == str(tmp_path / "b")
    assert [m.type for m in get_session_messages("in-a", tmp_path / "a")] == ["user",
                                                                               "assistant"]
    rename_session("in-a", "Renamed")
    tag_session("in-a", "t", tmp_path / "a")
    assert get_session_info("in-a", tmp_path / "a").summary == "Renamed"
    fork = fork_session("in-a", tmp_path / "a", title="Copy")
    assert get_session_info(fork.session_id, tmp_path / "a").custom_title == "Copy"
    delete_session("in-a")
    assert [i.session_id for i in list_sessions(tmp_path / "a")] == [fork.session_id]
    assert get_session_info("in-a") is None


def test_the_sync_functions_outside_an_event_loop(tmp_path):
    assert list_sessions(tmp_path) == [] and get_session_messages("x", tmp_path) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_worktrees_of_the_repository_are_listed_together(tmp_path):
    repo, tree = tmp_path / "repo", tmp_path / "tree"
    repo.mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q",
        "--allow-empty", "-m", "start")
    git("worktree", "add", "-q", str(tree))
    await _save_locally(repo, "main-one", ["in the repo"])
    await _save_locally(tree, "tree-one", ["in the worktree"])
    assert {i.session_id for i in list_sessions(repo)} == {"main-one", "tree-one"}
    assert [i.session_id for i in list_sessions(repo, include_worktrees=False)] == ["main-one"]


# -- a notebook ---------------------------------------------------------------------------

def test_a_notebooks_sessions_are_listed_and_read_like_any_others(tmp_path):
    path = write_notebook(tmp_path)
    infos = list_sessions(path)
    assert [i.session_id for i in infos] == [FORK, SID]  # the fork ran last
    assert infos[1].first_prompt == "Fix the failing test" and infos[1].cwd == "/work/nb"
    assert infos[1].last_modified == 1767607500000  # 2026-01-05 10:05 UTC, cell b
    assert get_session_info(SID, str(path)).created_at == 1767607200000  # cell a
    own = get_session_messages(SID, path)
    _, answer = exchange("Now add a test", "Added.")
    assert [m.message for m in own] == [  # the SDK run's plain prompt is kept as a string
        *run_messages(), {"role": "user", "content": "Now add a test"}, answer]
    forked = get_session_messages(FORK, path)
    assert [m.message for m in forked[:8]] == [m.message for m in own[:8]]
    assert forked[-1].message["content"] == [{"type": "text", "text": "Other."}]
    assert not {m.uuid for m in forked} & {m.uuid for m in own}
    assert [m.uuid for m in get_session_messages(SID, path)] == [m.uuid for m in own]
    assert get_session_info("nope", path) is None and get_session_messages("nope", path) == []


def test_a_notebooks_sessions_are_read_only(tmp_path):
    path = write_notebook(tmp_path)
    before = path.read_bytes()
    for change in (lambda: rename_session(SID, "x", path), lambda: tag_session(SID, "x", path),
                   lambda: delete_session(SID, path), lambda: fork_session(SID, path)):
        with pytest.raises(ConfigurationError, match=r"analysis\.ipynb is a notebook: its "
                                                     "sessions are read-only"):
            change()
    assert path.read_bytes() == before


# -- subagents and importing -------------------------------------------------------------

async def _save_with_subagent(store, directory, session_id):
    key = await _save(store, directory, session_id, ["delegate it"])
    side = _turns(session_id, ["the task"], str(directory))
    for entry in side:
        entry.update(isSidechain=True, agentId="a1", agentType="worker",
                     parentToolUseId="toolu_01")
    await store.append({**key, "subpath": "subagents/agent-a1"}, side)
    return key


async def test_subagents_are_listed_and_read_over_any_store(store, tmp_path):
    await _save_with_subagent(store, tmp_path, "s")
    assert await list_subagents_from_store(store, "s", tmp_path) == ["a1"]
    assert await list_subagents_from_store(store, "nope", tmp_path) == []
    messages = await get_subagent_messages_from_store(store, "s", "a1", tmp_path)
    assert [block_texts(m.message)[0] for m in messages] == ["the task", "answer 0"]
    assert {(m.session_id, m.parent_tool_use_id, m.parent_agent_id) for m in messages} == {
        ("s", "toolu_01", None)}
    assert await get_subagent_messages_from_store(store, "s", "a2", tmp_path) == []
    with pytest.raises(ConfigurationError, match="agent id"):
        await get_subagent_messages_from_store(store, "s", "", tmp_path)


class _Counting(InMemorySessionStore):
    def __init__(self):
        super().__init__()
        self.batches: list[tuple[str | None, int]] = []

    async def append(self, key, entries):
        self.batches.append((key.get("subpath"), len(entries)))
        await super().append(key, entries)


async def test_a_local_session_is_imported_into_a_store_with_its_subagents(tmp_path):
    key = await _save_with_subagent(FileSessionStore(), tmp_path, "s")
    target = _Counting()
    assert await import_session_to_store("s", target, batch_size=1) == key
    # the subagents first, the session last, in batches of one
    assert target.batches == [("subagents/agent-a1", 1)] * 2 + [(None, 1)] * 2
    assert await target.load(key) == FileSessionStore().read(key)
    assert [m.uuid for m in await get_session_messages_from_store(target, "s", tmp_path)] == [
        m.uuid for m in get_session_messages("s", tmp_path)]
    assert await list_subagents_from_store(target, "s", tmp_path) == ["a1"]
    with pytest.raises(ConfigurationError, match="in the store already"):
        await import_session_to_store("s", target, directory=tmp_path)
    alone = InMemorySessionStore()
    await import_session_to_store("s", alone, directory=tmp_path, include_subagents=False)
    assert await alone.list_subkeys(key) == []
    with pytest.raises(ConfigurationError, match="no session nope"):
        await import_session_to_store("nope", alone)
    with pytest.raises(ConfigurationError, match="batch_size must be a positive"):
        await import_session_to_store("s", alone, batch_size=0)


async def test_a_notebooks_session_is_imported_under_its_folder_and_can_go_on(tmp_path):
    from fuxi_notebook import FuxiAgentOptions, ResultMessage, ScriptedModel, query
    from fuxi_notebook.testing import text

    path = write_notebook(tmp_path)
    assert list_subagents(SID, path) == [] and get_subagent_messages(SID, "a1", path) == []
    target = InMemorySessionStore()
    key = await import_session_to_store(SID, target, directory=path)
    assert key == {"project_key": project_key_for_directory(tmp_path), "session_id": SID}
    imported = await get_session_messages_from_store(target, SID, tmp_path)
    assert [m.message for m in imported] == [m.message for m in get_session_messages(SID,
                                                                                    path)]
    model = ScriptedModel([[text("ok")]])
    async for message in query(prompt="go on", options=FuxiAgentOptions(
            model=model, cwd=tmp_path, session_store=target, resume=SID)):
        last = message
    assert isinstance(last, ResultMessage) and last.subtype == "success"
    assert model.requests[0].messages[0]["content"][0]["text"] == "Fix the failing test"
