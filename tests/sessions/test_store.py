"""Session stores: the in-memory and the file store behave alike; files survive torn writes."""

from __future__ import annotations

import os
import stat
from typing import get_args

import pytest

from fuxi_notebook._internal.sessions.store import (
    MAX_PROJECT_KEY,
    FileSessionStore,
    InMemorySessionStore,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreFlushMode,
    config_dir,
    fold_session_summary,
    project_key_for_directory,
)
from fuxi_notebook.errors import ConfigurationError

KEY = {"project_key": "-work-repo", "session_id": "s-1"}


def _entry(n: int) -> dict:
    return {"type": "user", "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
            "session_id": "s-1", "message": {"role": "user", "content": f"prompt {n}"}}


@pytest.fixture(params=["memory", "file"])
def store(request, tmp_path):
    return InMemorySessionStore() if request.param == "memory" else FileSessionStore(tmp_path)


async def test_entries_come_back_in_order_and_as_copies(store):
    assert isinstance(store, SessionStore)
    assert await store.load(KEY) is None
    await store.append(KEY, [_entry(0), _entry(1)])
    await store.append(KEY, [_entry(2)])
    loaded = await store.load(KEY)
    assert [e["uuid"] for e in loaded] == ["u0", "u1", "u2"]
    loaded[0]["uuid"] = "changed"
    assert (await store.load(KEY))[0]["uuid"] == "u0"


async def test_sessions_are_listed_per_project_oldest_change_first(store):
    for session in ("a", "b", "c"):
        await store.append({"project_key": "p", "session_id": session}, [_entry(0)])
    await store.append({"project_key": "p", "session_id": "a"}, [_entry(1)])
    await store.append({"project_key": "other", "session_id": "z"}, [_entry(0)])
    listed = await store.list_sessions("p")
    assert [s["session_id"] for s in listed] == ["b", "c", "a"]
    assert all(isinstance(s["mtime"], int) for s in listed)
    assert listed[0]["mtime"] <= listed[1]["mtime"] <= listed[2]["mtime"]
    assert await store.list_sessions("nothing here") == []


async def test_summaries_fold_each_session(store):
    await store.append(KEY, [_entry(0), {"type": "custom-title", "customTitle": "Named"}])
    [summary] = await store.list_session_summaries("-work-repo")
    assert summary["session_id"] == "s-1"
    assert summary["data"]["summary"] == "Named" and summary["data"]["first_prompt"] == "prompt 0"


async def test_side_transcripts_are_subkeys_and_go_with_the_session(store):
    await store.append(KEY, [_entry(0)])
    await store.append({**KEY, "subpath": "subagents/agent-1"}, [_entry(0)])
    await store.append({**KEY, "subpath": "subagents/agent-2"}, [_entry(0)])
    assert await store.list_subkeys(KEY) == ["subagents/agent-1", "subagents/agent-2"]
    assert await store.list_sessions("-work-repo") == [
        {"session_id": "s-1", "mtime": (await store.list_sessions("-work-repo"))[0]["mtime"]}]
    await store.delete({**KEY, "subpath": "subagents/agent-1"})
    assert await store.list_subkeys(KEY) == ["subagents/agent-2"]
    await store.delete(KEY)
    assert await store.load(KEY) is None
    assert await store.list_subkeys(KEY) == []


async def test_the_file_layout_and_its_permissions(tmp_path):
    store = FileSessionStore(tmp_path)
    await store.append(KEY, [_entry(0)])
    path = tmp_path / "projects" / "-work-repo" / "s-1.jsonl"
    assert store.path(KEY) == path and path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.file_size(KEY) == path.stat().st_size
    assert store.project_keys() == ["-work-repo"]


@pytest.fixture(params=[0o022, 0o277], ids=["umask-022", "umask-277"])
def umask(request):
    """A umask for the test (mkdir's mode alone gives 0o500 under 0o277), then the old one."""
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


async def test_every_folder_the_store_creates_is_private_and_no_other_changes(tmp_path, umask):
    """mkdir(parents=True, mode=0o700) would leave `projects/` (which lists every project
    path) and the folders above it 0o755: readable by anyone."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    root = shared / "home" / ".fuxi"  # two folders missing above the store's own
    store = FileSessionStore(root)
    await store.append({**KEY, "subpath": "subagents/deep/agent-1"}, [_entry(0)])
    await store.append(KEY, [_entry(1)])
    project = root / "projects" / "-work-repo"
    created = [shared / "home", root, root / "projects", project, project / "s-1",
               project / "s-1" / "subagents", project / "s-1" / "subagents" / "deep"]
    assert {str(f.relative_to(shared)): oct(stat.S_IMODE(f.stat().st_mode)) for f in created} \
        == {str(f.relative_to(shared)): "0o700" for f in created}
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # it was there: left as it was
    assert [e["uuid"] for e in await store.load(KEY)] == ["u1"]


async def test_a_folder_that_already_exists_keeps_its_mode(tmp_path, umask):
    (tmp_path / "projects").mkdir()
    os.chmod(tmp_path / "projects", 0o750)
    await FileSessionStore(tmp_path).append(KEY, [_entry(0)])
    assert stat.S_IMODE((tmp_path / "projects").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "projects" / "-work-repo").stat().st_mode) == 0o700


def test_the_default_root_follows_fuxi_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "conf"))
    assert config_dir() == tmp_path / "conf" and FileSessionStore().root == tmp_path / "conf"
    monkeypatch.delenv("FUXI_CONFIG_DIR")
    assert config_dir() == config_dir().home() / ".fuxi"


async def test_a_torn_last_line_is_skipped_and_the_next_batch_stays_readable(tmp_path):
    store = FileSessionStore(tmp_path)
    await store.append(KEY, [_entry(0), _entry(1)])
    with store.path(KEY).open("ab") as file:  # a crash in the middle of a write
        file.write(b'{"type": "user", "uuid": "u2", "mess')
    assert [e["uuid"] for e in await store.load(KEY)] == ["u0", "u1"]
    await store.append(KEY, [_entry(3)])
    assert [e["uuid"] for e in await store.load(KEY)] == ["u0", "u1", "u3"]
    assert store.path(KEY).read_bytes().endswith(b"\n")


async def test_a_key_can_never_name_a_file_outside_the_store(tmp_path):
    store = FileSessionStore(tmp_path / "root")
    for key in ({"project_key": "..", "session_id": "s"},
                {"project_key": "p", "session_id": "../../escape"},
                {"project_key": "p", "session_id": "s", "subpath": "a/../../b"},
                {"project_key": "p", "session_id": ""}):
        with pytest.raises(ConfigurationError, match="cannot name a session file"):
            await store.append(key, [_entry(0)])
    assert not (tmp_path / "escape.jsonl").exists()


def test_project_keys_replace_every_other_character_and_stay_unique_when_cut(tmp_path):
    folder = tmp_path / "my project.v2"
    folder.mkdir()
    key = project_key_for_directory(folder)
    assert key == str(folder.resolve()).translate(
        {ord(c): "-" for c in str(folder.resolve()) if not c.isalnum()})
    assert key.endswith("-my-project-v2")
    long_a, long_b = "/x" * 150 + "/a", "/x" * 150 + "/b"
    key_a, key_b = project_key_for_directory(long_a), project_key_for_directory(long_b)
    assert key_a != key_b and key_a[:MAX_PROJECT_KEY] == key_b[:MAX_PROJECT_KEY]
    assert len(key_a) < MAX_PROJECT_KEY + 12 and key_a.replace("-", "").isalnum()


def test_a_symlinked_directory_is_the_same_project(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    assert project_key_for_directory(tmp_path / "link") == project_key_for_directory(real)


# -- the store types the comparable SDK exports ------------------------------------------

def _stamped(n: int, **fields) -> dict:
    return {**_entry(n), "timestamp": f"2026-01-05T10:00:0{n}.000Z", **fields}


def test_folding_a_summary_append_by_append_is_folding_it_at_once():
    entries = [_stamped(0, cwd="/work/repo"), {"type": "tag", "tag": "keep"},
               _stamped(1, gitBranch="main"), {"type": "summary", "summary": "Recorded"},
               {"type": "custom-title", "customTitle": "Named"}, _stamped(2)]
    whole = fold_session_summary(None, KEY, entries)
    summary = None
    for start in range(0, len(entries), 2):
        summary = fold_session_summary(summary, KEY, entries[start:start + 2])
    assert summary == whole
    assert whole["session_id"] == "s-1" and whole["mtime"] == 1767607202000  # the newest
    data = whole["data"]
    assert (data["summary"], data["first_prompt"], data["tag"], data["cwd"],
            data["git_branch"]) == ("Named", "prompt 0", "keep", "/work/repo", "main")
    assert (data["created_at"], data["last_modified"]) == (1767607200000, 1767607202000)
    assert fold_session_summary(None, KEY, entries[:4])["data"]["summary"] == "Recorded"
    assert fold_session_summary(whole, KEY, [], mtime=5)["mtime"] == 5  # the store's time
    side = {**KEY, "subpath": "subagents/agent-1"}
    assert fold_session_summary(whole, side, [_stamped(3, customTitle="x")]) == whole


def test_the_exported_store_types():
    assert get_args(SessionStoreFlushMode) == ("batched", "eager")
    assert SessionListSubkeysKey.__required_keys__ == {"project_key", "session_id"}
    assert SessionStoreEntry.__required_keys__ == {"type"}
    assert {"uuid", "parentUuid", "message", "isSidechain", "agentId"} <= (
        SessionStoreEntry.__optional_keys__)


async def test_the_in_memory_store_keeps_summaries_as_it_appends():
    store = InMemorySessionStore()
    await store.append(KEY, [_entry(0)])
    await store.append({**KEY, "subpath": "subagents/agent-1"}, [_entry(5)])
    await store.append(KEY, [{"type": "custom-title", "customTitle": "Named"}])
    [summary] = await store.list_session_summaries("-work-repo")
    assert summary["data"] == fold_session_summary(
        None, KEY, [_entry(0), {"type": "custom-title", "customTitle": "Named"}])["data"]
    assert summary["mtime"] == (await store.list_sessions("-work-repo"))[0]["mtime"]
    await store.delete(KEY)
    assert await store.list_session_summaries("-work-repo") == []
