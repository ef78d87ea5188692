"""Sessions that outlive the process, for `query()` and `FuxiSDKClient`.

When a session starts, `open_session` reads the session options (`resume`,
`continue_conversation`, `fork_session`, `session_id`, `resume_session_at`) and loads the
conversation they name from the store: `options.session_store`, else the JSONL files of
`cwd` under `~/.fuxi/projects/` (`FUXI_CONFIG_DIR`); a store read that takes longer than
`load_timeout_ms` fails the start. After each run, `Transcript.flush` appends what the
conversation gained (prompts, responses, tool results, results still owed) and what its
subagents did (side transcripts) before the run's ResultMessage is passed on, so a
`resume` right after it finds them; `session_store_flush="eager"` also writes each message
in the background as the run yields it (transcript_writer.py). Hooks get the JSONL file as
`transcript_path` when the store is a `FileSessionStore`.

Writing to the default files is on, as in the comparable SDK; `FUXI_SKIP_SESSION_PERSISTENCE=1`
turns it off (a `session_store` given in the options is always written). With a
`session_store`, the local files are written too and the store gets a mirror of them, as
that SDK's CLI does: the local copy survives a failing store, and the local session
functions read it; a resume reads the store. The user folder is the one `options.env`
names (`FUXI_CONFIG_DIR`), as that CLI takes its folder from the env it starts with.
The notebook keeps its sessions in the .ipynb and does not come through here. A
conversation loaded from a store gets its messages back, never "Always allow" rules: a
transcript is data anyone could have edited.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid as _uuid
import warnings
from collections.abc import AsyncGenerator, Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import ConfigurationError, ProcessError
from ...options import FuxiAgentOptions
from ...types import Message, ResultMessage, new_uuid
from .assemble import build_session
from .session import Conversation, Session
from .transcript_writer import Transcript

if TYPE_CHECKING:
    from ..sessions.store import SessionKey

__all__ = ["SKIP_ENV", "Transcript", "open_session", "recorded"]

SKIP_ENV = "FUXI_SKIP_SESSION_PERSISTENCE"
_T = TypeVar("_T")


async def open_session(options: FuxiAgentOptions, *, extra_tools: list[Any] | None = None,
                       mcp: Any = None, settings: Any = None
                       ) -> tuple[Session, Transcript | None]:
    """The session the options ask for, and where its runs are written (None: nowhere).

    Raises ConfigurationError for conflicting session options, an unknown session or
    message, or a saved history the API would reject."""
    from ..common.switches import config_dir_of
    from ..sessions.store import FileSessionStore, project_key_for_directory

    _check(options)
    with config_dir_of(options.env):  # the files of the user folder `env` names
        store = options.session_store if options.session_store is not None else (
            FileSessionStore())
    cwd = (Path(options.cwd).expanduser() if options.cwd is not None else Path.cwd()).resolve()
    project = project_key_for_directory(cwd)
    reader = _Reader(store, options.load_timeout_ms)
    conversation, written = await _conversation(options, reader, project, cwd)
    session = build_session(options, extra_tools=extra_tools, conversation=conversation,
                            mcp=mcp, project=settings)
    skipped = os.environ.get(SKIP_ENV, "").strip().lower() in ("1", "true", "yes")
    if not options.persist_session or (options.session_store is None and skipped):
        return session, None
    key: SessionKey = {"project_key": project, "session_id": session.id}
    local = None
    if options.session_store is not None and not skipped:  # kept locally too, and mirrored
        with config_dir_of(options.env):
            local = FileSessionStore()
        if isinstance(store, FileSessionStore) and store.root.resolve() == local.root.resolve():
            local = None
    transcript = Transcript(store, key, str(session.cwd), written, _git_branch(cwd),
                            eager=options.session_store_flush == "eager", local=local,
                            behind=options.session_store is None)
    transcript.attach(session)
    shown_path = local if local is not None else store
    if isinstance(shown_path, FileSessionStore):
        session.transcript_path = str(shown_path.path(key))
    return session, transcript


class _Reader:
    """The store's reads while a session opens (`load`, and `list_sessions` for
    `continue_conversation`), each bounded by `load_timeout_ms`."""

    def __init__(self, store: Any, timeout_ms: int) -> None:
        self.store = store
        self.timeout_ms = timeout_ms

    async def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        return await self._timed(self.store.load(key), "load()")

    async def list_sessions(self, project_key: str) -> list[dict[str, Any]]:
        lister = getattr(self.store, "list_sessions", None)
        if lister is None:
            raise ConfigurationError("continue_conversation needs a session_store with "
                                     f"list_sessions(); {type(self.store).__name__} has none")
        return await self._timed(lister(project_key), "list_sessions()")

    async def _timed(self, call: Awaitable[_T], what: str) -> _T:
        try:
            return await asyncio.wait_for(call, self.timeout_ms / 1000)
        except TimeoutError:
            raise ConfigurationError(
                f"the session store's {what} took longer than load_timeout_ms "
                f"({self.timeout_ms} ms); raise load_timeout_ms if the store is slow"
            ) from None


def _check(options: FuxiAgentOptions) -> None:
    """The session options that cannot go together, refused before anything runs."""
    store = options.session_store
    if store is not None and not (callable(getattr(store, "append", None))
                                  and callable(getattr(store, "load", None))):
        raise ConfigurationError("session_store must have async append(key, entries) and "
                                 "load(key) methods (see fuxi_notebook._internal.sessions.store)")
    if options.resume is not None and options.continue_conversation:
        raise ConfigurationError("resume and continue_conversation cannot be used together: "
                                 "resume names the session, continue takes the latest")
    if options.resume is not None and (not isinstance(options.resume, str)
                                       or not options.resume):
        raise ConfigurationError(f"resume must be a session id, not {options.resume!r}")
    going_on = options.resume is not None or options.continue_conversation
    if options.session_id is not None:
        try:
            _uuid.UUID(str(options.session_id))
        except ValueError:
            raise ConfigurationError(f"session_id must be a UUID, not "
                                     f"{options.session_id!r}") from None
        if going_on and not options.fork_session:
            raise ConfigurationError("session_id with resume or continue_conversation needs "
                                     "fork_session=True (a resumed session keeps its id)")
    if options.fork_session and not going_on:
        raise ConfigurationError("fork_session needs resume or continue_conversation: it "
                                 "forks the session they load")
    if options.resume_session_at is not None and options.resume is None:
        raise ConfigurationError("resume_session_at needs resume (the session it cuts)")
    if options.resume_drops_turn is not None and options.resume_session_at is None:
        raise ConfigurationError("resume_drops_turn needs resume_session_at (the cut whose "
                                 "dropped turn it names)")
    if store is not None and options.enable_file_checkpointing:
        raise ConfigurationError("session_store cannot be combined with "
                                 "enable_file_checkpointing (checkpoints are kept on this "
                                 "machine's disk and would diverge from the stored transcript)")
    if options.session_store_flush not in ("batched", "eager"):
        raise ConfigurationError("session_store_flush must be 'batched' or 'eager', not "
                                 f"{options.session_store_flush!r}")
    timeout = options.load_timeout_ms
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigurationError(f"load_timeout_ms must be a positive number, not {timeout!r}")


async def _conversation(options: FuxiAgentOptions, store: _Reader, project: str, cwd: Path
                        ) -> tuple[Conversation, list[tuple[str, dict[str, Any]]]]:
    """The conversation to go on with, and its messages already in the store (by uuid)."""
    from ..sessions.entries import chain, conversation_parts

    source = options.resume
    if source is None and options.continue_conversation:
        source = await _latest(store, project)
    if source is None:  # a new session (also: nothing to continue yet)
        return Conversation(id=await _unused(options.session_id, store, project)), []
    entries = await store.load({"project_key": project, "session_id": source})
    if entries is None:
        raise ConfigurationError(f"resume: no session {source} for the directory {cwd}")
    try:
        kept = chain(entries, at=options.resume_session_at)
        history, pending, written = conversation_parts(kept)
    except ConfigurationError as error:
        raise ConfigurationError(f"session {source}: {error}") from None
    if options.resume_drops_turn is not None:
        _check_dropped_turn(chain(entries), kept, options.resume_drops_turn)
    conversation = Conversation(id=source, history=history, pending_results=pending)
    if options.fork_session:  # the copy goes on; the original stays as it is
        new_id = await _unused(options.session_id, store, project)
        return conversation.forked(new_id), []
    return conversation, written


def _check_dropped_turn(whole: list[dict[str, Any]], kept: list[dict[str, Any]],
                        prompt: str) -> None:
    """Refuse a cut that would drop more than the turn of `prompt`: everything after the
    cut must be that prompt and what answered it (tool calls, their results), never
    another prompt the caller may not have seen. The comparable CLI's check, and its
    words, which callers match on."""
    from ..sessions.entries import is_prompt

    def refuse(why: str) -> ProcessError:
        return ProcessError(f"Resume rejected by --resume-drops-turn: {why}")

    cut = kept[-1]["uuid"] if kept else None
    at = next((i for i, entry in enumerate(whole) if entry["uuid"] == cut), None)
    if at is None:
        raise refuse(f"the cut {cut} is not on the session's current branch")
    dropped = whole[at + 1:]
    if not dropped:
        raise refuse("nothing follows the cut, so there is no turn to drop")
    first = dropped[0]
    if not is_prompt(first) or prompt not in (first["uuid"], *(first.get("message_uuids") or ())):
        raise refuse(f"the entry after the cut is {first['uuid']}, not the prompt {prompt}")
    later = next((entry for entry in dropped[1:] if is_prompt(entry)), None)
    if later is not None:
        raise refuse(f"the dropped range also holds the prompt {later['uuid']}, which is "
                     "not part of that turn")


async def _latest(store: _Reader, project: str) -> str | None:
    """The session of the project that changed last (None: it has none)."""
    listed = await store.list_sessions(project)
    best = None
    for item in listed:  # among equal times, the one listed later
        if best is None or item["mtime"] >= best["mtime"]:
            best = item
    return best["session_id"] if best is not None else None


async def _unused(session_id: str | None, store: _Reader, project: str) -> str:
    """`session_id` (or a new id) for a new session; one already in use is refused."""
    if session_id is None:
        return new_uuid()
    if await store.load({"project_key": project, "session_id": session_id}) is not None:
        raise ConfigurationError(f"session_id {session_id} is already in use")
    return session_id


def _git_branch(cwd: Path) -> str | None:
    """The branch checked out where the session runs (None outside git, or detached);
    kept while the files it read stay as they were (common/reading.py)."""
    from ..common.reading import remembered

    return remembered(("git branch", cwd), lambda: _read_git_branch(cwd))


def _read_git_branch(cwd: Path) -> str | None:
    """The branch `HEAD` names in the repository around `cwd` (None: none, detached, or
    unreadable). `.git` (a folder, or a worktree's `gitdir:` file) and `HEAD` come with a
    checkout, so they are read by the bounded reader: a FIFO, a device or a huge file
    there is no branch, never a hang or a full memory."""
    from ..common.reading import note, read_inside

    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        note(dot_git)
        if not os.path.lexists(dot_git):
            continue
        try:
            if not dot_git.is_dir():  # a worktree: `gitdir: <its folder in the main repo>`
                pointer = read_inside(dot_git, None, _MAX_GIT_FILE_CHARS)
                if pointer is None or pointer.truncated:
                    return None
                dot_git = folder / pointer.text.partition("gitdir:")[2].strip()
                note(dot_git)
            head = read_inside(dot_git / "HEAD", None, _MAX_GIT_FILE_CHARS)
        except (OSError, ValueError, ConfigurationError):  # not a file, not UTF-8, ...
            return None
        text = head.text.strip() if head is not None and not head.truncated else ""
        return text.removeprefix("ref: refs/heads/") if text.startswith("ref: ") else None
    return None


#: `.git` and `HEAD` hold one line (a path, a ref): anything longer is no branch
_MAX_GIT_FILE_CHARS = 4096


async def recorded(messages: AsyncGenerator[Message, None], session: Session,
                   transcript: Transcript | None) -> AsyncGenerator[Message, None]:
    """A run's messages, its new part stored before its ResultMessage is passed on. If the
    consumer stops early, the run is closed first (its owed results join the conversation)
    and what it got to is stored then."""
    ended = False  # the run's result was passed on (after a flush, reported if it failed)
    try:
        async for message in messages:
            if transcript is not None:
                transcript.observe(message)
                if isinstance(message, ResultMessage):
                    ended = True
                    problem = await transcript.flush(session.snapshot())
                    if problem is not None:
                        yield problem
            yield message
    finally:
        await messages.aclose()
        if transcript is not None and not ended:
            problem = await transcript.flush(session.snapshot(), stopped=True)
            if problem is not None:
                with contextlib.suppress(Exception):
                    warnings.warn(problem.data["error"], RuntimeWarning, stacklevel=2)
