"""Sessions as the comparable SDK's module functions, so code written for it runs.

The sync functions read the local files (`FileSessionStore`: `~/.fuxi/projects/`, or
`FUXI_CONFIG_DIR`) or, when `directory` is a `.ipynb` file, the sessions that notebook's
`%%fuxi` cells recorded (read-only: renaming, tagging, deleting or forking there raises
ConfigurationError). `directory=None` means every project. The async `*_from_store` /
`*_via_store` variants take any `SessionStore` first and one project (`directory`, default
the current directory). A session's subagents are side transcripts of it
(`list_subagents`, `get_subagent_messages`); `import_session_to_store` copies a session
from the local files or a notebook into another store.

    for info in list_sessions("analysis.ipynb"):
        print(info.session_id, info.summary)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from ...errors import ConfigurationError
from .entries import SUBAGENT_PREFIX, chain, fold_summary, is_message, meta_entry, remapped
from .store import FileSessionStore, SessionKey, SessionStore, project_key_for_directory

__all__ = [
    "ForkSessionResult",
    "SDKSessionInfo",
    "SessionMessage",
    "delete_session",
    "delete_session_via_store",
    "fork_session",
    "fork_session_via_store",
    "get_session_info",
    "get_session_info_from_store",
    "get_session_messages",
    "get_session_messages_from_store",
    "get_subagent_messages",
    "get_subagent_messages_from_store",
    "import_session_to_store",
    "list_sessions",
    "list_sessions_from_store",
    "list_subagents",
    "list_subagents_from_store",
    "rename_session",
    "rename_session_via_store",
    "tag_session",
    "tag_session_via_store",
]

_T = TypeVar("_T")
_Directory = str | os.PathLike[str] | None


@dataclass
class SDKSessionInfo:
    """One session as a listing shows it; times in milliseconds since the epoch.

    `summary` is the custom title, else a recorded summary, else the first prompt."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """One message of a session's conversation; `message` is the Messages-API dict.

    A subagent's message (`get_subagent_messages`) has `parent_tool_use_id`, the Agent call
    that started the subagent, and `parent_agent_id`, the subagent that made that call
    (None: the main agent made it)."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: dict[str, Any]
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


@dataclass
class ForkSessionResult:
    """The id of the copy `fork_session` made."""

    session_id: str


# -- sync: the local files, or a notebook ---------------------------------------------------

def list_sessions(directory: _Directory = None, limit: int | None = None, offset: int = 0,
                  include_worktrees: bool = True) -> list[SDKSessionInfo]:
    """The sessions of `directory` (None: of every project), newest first. With
    `include_worktrees`, a directory in a git repository also lists the sessions of the
    repository's other worktrees."""
    store, keys = _local(directory, include_worktrees)
    return _sync(_list(store, keys, limit, offset))


def get_session_info(session_id: str, directory: _Directory = None) -> SDKSessionInfo | None:
    """The session's listing entry; None if there is no such session."""
    store, keys = _local(directory)
    return _sync(_info(store, keys, session_id))


def get_session_messages(session_id: str, directory: _Directory = None,
                         limit: int | None = None, offset: int = 0) -> list[SessionMessage]:
    """The messages of the session's conversation, oldest first ([] if there is none)."""
    store, keys = _local(directory)
    return _sync(_messages(store, keys, session_id, limit, offset))


def list_subagents(session_id: str, directory: _Directory = None) -> list[str]:
    """The ids of the subagents whose transcripts the session keeps ([] if none)."""
    store, keys = _local(directory)
    return _sync(_subagents(store, keys, session_id))


def get_subagent_messages(session_id: str, agent_id: str, directory: _Directory = None,
                          limit: int | None = None, offset: int = 0) -> list[SessionMessage]:
    """The messages of one subagent's conversation, oldest first ([] if there is none)."""
    store, keys = _local(directory)
    return _sync(_subagent_messages(store, keys, session_id, agent_id, limit, offset))


def rename_session(session_id: str, title: str, directory: _Directory = None) -> None:
    """Give the session a title (listings show it as the summary)."""
    store, keys = _local(directory)
    _sync(_rename(store, keys, session_id, title))


def tag_session(session_id: str, tag: str | None, directory: _Directory = None) -> None:
    """Tag the session (None removes the tag)."""
    store, keys = _local(directory)
    _sync(_tag(store, keys, session_id, tag))


def delete_session(session_id: str, directory: _Directory = None) -> None:
    """Delete the session's transcript."""
    store, keys = _local(directory)
    _sync(_delete(store, keys, session_id))


def fork_session(session_id: str, directory: _Directory = None,
                 up_to_message_id: str | None = None,
                 title: str | None = None) -> ForkSessionResult:
    """Copy the session's conversation (up to and including `up_to_message_id`) into a new
    session with new message uuids; the original stays as it is."""
    store, keys = _local(directory)
    return _sync(_fork(store, keys, session_id, up_to_message_id, title))


# -- async: any SessionStore ----------------------------------------------------------------

async def list_sessions_from_store(session_store: SessionStore, directory: _Directory = None,
                                   limit: int | None = None,
                                   offset: int = 0) -> list[SDKSessionInfo]:
    """`list_sessions` over a store (its `list_session_summaries` or `list_sessions`)."""
    return await _list(session_store, [project_key_for_directory(directory)], limit, offset)


async def get_session_info_from_store(session_store: SessionStore, session_id: str,
                                      directory: _Directory = None) -> SDKSessionInfo | None:
    return await _info(session_store, [project_key_for_directory(directory)], session_id)


async def get_session_messages_from_store(session_store: SessionStore, session_id: str,
                                          directory: _Directory = None,
                                          limit: int | None = None,
                                          offset: int = 0) -> list[SessionMessage]:
    return await _messages(session_store, [project_key_for_directory(directory)],
                           session_id, limit, offset)


async def list_subagents_from_store(session_store: SessionStore, session_id: str,
                                    directory: _Directory = None) -> list[str]:
    """`list_subagents` over a store (it needs `list_subkeys`)."""
    return await _subagents(session_store, [project_key_for_directory(directory)], session_id)


async def get_subagent_messages_from_store(session_store: SessionStore, session_id: str,
                                           agent_id: str, directory: _Directory = None,
                                           limit: int | None = None,
                                           offset: int = 0) -> list[SessionMessage]:
    return await _subagent_messages(session_store, [project_key_for_directory(directory)],
                                    session_id, agent_id, limit, offset)


async def rename_session_via_store(session_store: SessionStore, session_id: str, title: str,
                                   directory: _Directory = None) -> None:
    await _rename(session_store, [project_key_for_directory(directory)], session_id, title)


async def tag_session_via_store(session_store: SessionStore, session_id: str,
                                tag: str | None, directory: _Directory = None) -> None:
    await _tag(session_store, [project_key_for_directory(directory)], session_id, tag)


async def delete_session_via_store(session_store: SessionStore, session_id: str,
                                   directory: _Directory = None) -> None:
    await _delete(session_store, [project_key_for_directory(directory)], session_id)


async def fork_session_via_store(session_store: SessionStore, session_id: str,
                                 directory: _Directory = None,
                                 up_to_message_id: str | None = None,
                                 title: str | None = None) -> ForkSessionResult:
    return await _fork(session_store, [project_key_for_directory(directory)], session_id,
                       up_to_message_id, title)


async def import_session_to_store(session_id: str, store: SessionStore, *,
                                  directory: _Directory = None, include_subagents: bool = True,
                                  batch_size: int = 500) -> SessionKey:
    """Copy a session from the local files (`directory` as in `get_session_info`; a
    `.ipynb` file: the sessions its cells recorded) into `store`, under the same key, so
    that `query()` with `session_store=store` can resume it. A notebook's sessions go under
    the project of the folder that holds it (where its kernel runs).

    Entries are appended `batch_size` at a time, the subagents' transcripts first (with
    `include_subagents`) and the session's last, so a session found in `store` is complete.
    Returns the key written. Raises ConfigurationError if there is no such session, or
    `store` has it already (a second copy would double every message)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be a positive integer, not {batch_size!r}")
    source, keys = _local(directory)
    found, entries = await _found(source, keys, session_id)
    key = found
    if directory is not None and Path(directory).suffix == ".ipynb":
        key = _key(project_key_for_directory(Path(directory).expanduser().resolve().parent),
                   session_id)
    if await store.load(key) is not None:
        raise ConfigurationError(f"session {session_id} is in the store already")
    for subpath in await source.list_subkeys(found) if include_subagents else []:
        side = await source.load({**found, "subpath": subpath})
        await _append_batches(store, {**key, "subpath": subpath}, side or [], batch_size)
    await _append_batches(store, key, entries, batch_size)
    return key


async def _append_batches(store: SessionStore, key: SessionKey, entries: list[dict[str, Any]],
                          size: int) -> None:
    for start in range(0, len(entries), size):
        await store.append(key, entries[start:start + size])


# -- one implementation behind both ---------------------------------------------------------

def _sync(work: Coroutine[Any, Any, _T]) -> _T:
    """Run store work to the end from sync code, also inside a running event loop (a
    Jupyter cell), where it runs on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def _local(directory: _Directory, worktrees: bool = False) -> tuple[Any, list[str] | None]:
    """The store and project keys `directory` means (None: every project's)."""
    if directory is not None and Path(directory).suffix == ".ipynb":
        from .notebook_store import NotebookSessionStore

        return NotebookSessionStore(directory), [str(Path(directory).expanduser())]
    store = FileSessionStore()
    if directory is None:
        return store, None
    keys = [project_key_for_directory(directory)]
    if worktrees:
        keys += [k for k in map(project_key_for_directory, _worktrees(Path(directory)))
                 if k not in keys]
    return store, keys


def _worktrees(directory: Path) -> list[Path]:
    """The roots of the worktrees of the git repository `directory` is in ([] if none)."""
    try:
        done = subprocess.run(["git", "-C", str(directory), "worktree", "list", "--porcelain"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [Path(line[len("worktree "):]) for line in done.stdout.splitlines()
            if line.startswith("worktree ")]


def _keys(store: Any, keys: list[str] | None) -> list[str]:
    return keys if keys is not None else store.project_keys()


def _method(store: Any, name: str, needed_for: str) -> Any:
    method = getattr(store, name, None)
    if method is None:
        raise ConfigurationError(f"{needed_for} needs a session store with {name}(); "
                                 f"{type(store).__name__} has none")
    return method


def _page(items: list[_T], limit: int | None, offset: int) -> list[_T]:
    items = items[max(offset, 0):]
    return items if limit is None else items[:max(limit, 0)]


def _session_info(store: Any, key: SessionKey, mtime: int | None,
                  data: dict[str, Any]) -> SDKSessionInfo:
    size = store.file_size(key) if hasattr(store, "file_size") else None
    return SDKSessionInfo(
        session_id=key["session_id"], summary=data.get("summary") or "",
        last_modified=int(data.get("last_modified") or mtime or 0), file_size=size,
        custom_title=data.get("custom_title"), first_prompt=data.get("first_prompt"),
        git_branch=data.get("git_branch"), cwd=data.get("cwd"), tag=data.get("tag"),
        created_at=data.get("created_at"))


async def _list(store: Any, keys: list[str] | None, limit: int | None,
                offset: int) -> list[SDKSessionInfo]:
    infos: dict[str, SDKSessionInfo] = {}
    for project in _keys(store, keys):
        summaries = getattr(store, "list_session_summaries", None)
        if summaries is not None:
            items = [(s["session_id"], s["mtime"], s["data"]) for s in await summaries(project)]
        else:
            items = []
            for listed in await _method(store, "list_sessions", "listing sessions")(project):
                entries = await store.load(_key(project, listed["session_id"]))
                if entries is not None:
                    items.append((listed["session_id"], listed["mtime"], fold_summary(entries)))
        for session_id, mtime, data in items:
            infos.setdefault(session_id, _session_info(store, _key(project, session_id),
                                                       mtime, data))
    # newest first; among equal times, the one the store listed later first
    ordered = sorted(reversed(list(infos.values())), key=lambda i: i.last_modified,
                     reverse=True)
    return _page(ordered, limit, offset)


def _key(project_key: str, session_id: str) -> SessionKey:
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError(f"a session id must be a non-empty string, not {session_id!r}")
    return {"project_key": project_key, "session_id": session_id}


async def _find(store: Any, keys: list[str] | None,
                session_id: str) -> tuple[SessionKey, list[dict[str, Any]]] | None:
    for project in _keys(store, keys):
        key = _key(project, session_id)
        entries = await store.load(key)
        if entries is not None:
            return key, entries
    return None


async def _found(store: Any, keys: list[str] | None,
                 session_id: str) -> tuple[SessionKey, list[dict[str, Any]]]:
    found = await _find(store, keys, session_id)
    if found is None:
        raise ConfigurationError(f"no session {session_id} "
                                 f"{'anywhere' if keys is None else 'in this directory'}")
    return found


async def _info(store: Any, keys: list[str] | None, session_id: str) -> SDKSessionInfo | None:
    found = await _find(store, keys, session_id)
    if found is None:
        return None
    key, entries = found
    data = fold_summary(entries)
    mtime = None
    if data["last_modified"] is None and hasattr(store, "list_sessions"):
        mtime = next((s["mtime"] for s in await store.list_sessions(key["project_key"])
                      if s["session_id"] == session_id), None)
    return _session_info(store, key, mtime, data)


async def _messages(store: Any, keys: list[str] | None, session_id: str, limit: int | None,
                    offset: int) -> list[SessionMessage]:
    found = await _find(store, keys, session_id)
    if found is None:
        return []
    return _page(_conversation(found[1], session_id), limit, offset)


def _conversation(entries: list[dict[str, Any]], session_id: str) -> list[SessionMessage]:
    return [SessionMessage(type=e["type"], uuid=e["uuid"], session_id=session_id,
                           message=e["message"],
                           parent_tool_use_id=_text(e.get("parentToolUseId")),
                           parent_agent_id=_text(e.get("parentAgentId")))
            for e in chain(entries) if is_message(e)]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


async def _subagents(store: Any, keys: list[str] | None, session_id: str) -> list[str]:
    lister = _method(store, "list_subkeys", "listing a session's subagents")
    for project in _keys(store, keys):
        subpaths = await lister(_key(project, session_id))
        if subpaths:
            return [p[len(SUBAGENT_PREFIX):] for p in subpaths
                    if p.startswith(SUBAGENT_PREFIX) and "/" not in p[len(SUBAGENT_PREFIX):]]
    return []


async def _subagent_messages(store: Any, keys: list[str] | None, session_id: str,
                             agent_id: str, limit: int | None,
                             offset: int) -> list[SessionMessage]:
    if not isinstance(agent_id, str) or not agent_id:
        raise ConfigurationError(f"an agent id must be a non-empty string, not {agent_id!r}")
    for project in _keys(store, keys):
        entries = await store.load({**_key(project, session_id),
                                    "subpath": SUBAGENT_PREFIX + agent_id})
        if entries is not None:
            return _page(_conversation(entries, session_id), limit, offset)
    return []


async def _rename(store: Any, keys: list[str] | None, session_id: str, title: str) -> None:
    if not isinstance(title, str) or not title.strip():
        raise ConfigurationError("a session title must be a non-empty string")
    key, _ = await _found(store, keys, session_id)
    await store.append(key, [meta_entry("custom-title", title.strip(), session_id)])


async def _tag(store: Any, keys: list[str] | None, session_id: str, tag: str | None) -> None:
    if tag is not None and (not isinstance(tag, str) or not tag.strip()):
        raise ConfigurationError("a tag must be a non-empty string (None removes the tag)")
    key, _ = await _found(store, keys, session_id)
    await store.append(key, [meta_entry("tag", tag.strip() if tag else None, session_id)])


async def _delete(store: Any, keys: list[str] | None, session_id: str) -> None:
    key, _ = await _found(store, keys, session_id)
    await _method(store, "delete", "deleting a session")(key)


async def _fork(store: Any, keys: list[str] | None, session_id: str, up_to: str | None,
                title: str | None) -> ForkSessionResult:
    from ...types import new_uuid

    key, entries = await _found(store, keys, session_id)
    try:
        kept = chain(entries, at=up_to)
    except ConfigurationError:
        raise ConfigurationError(f"session {session_id} has no message {up_to}") from None
    if not kept:
        raise ConfigurationError(f"session {session_id} has no messages to fork")
    new_id = new_uuid()
    copies = remapped(kept, new_id)
    if title is not None and title.strip():
        copies.append(meta_entry("custom-title", title.strip(), new_id))
    await store.append(_key(key["project_key"], new_id), copies)
    return ForkSessionResult(session_id=new_id)
