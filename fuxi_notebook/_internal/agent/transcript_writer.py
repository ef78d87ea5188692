"""Writing a session's runs to its store: what the conversation gained, and its subagents'.

A `Transcript` knows what of the conversation the store has already (by uuid) and
appends only what changed: new messages hang at the end of the stored chain, and a
message that changed since it was written (owed results joined by the next prompt)
starts a branch at its parent (see sessions/entries.py). Each subagent the session starts
(`Session.on_subagent`) gets a side transcript of its own, subpath
`subagents/agent-<agentId>`, written the same way.

`flush` writes at the end of each run, before its ResultMessage is passed on. With
`session_store_flush="eager"`, `observe` also hands what changed to a background task as
each message is yielded, so the stream never waits for the store; order is kept (one
task, one queue), and `flush` waits for that task before it writes the rest. The local
transcript of a session without a `session_store` (`behind`) is written behind the same
way, in batches of turns: when a round of tool results has joined the conversation, the
writer appends the turns that ended in the next `BATCH_SECONDS` (while the next request
is answered; a model's answer takes seconds, so that is most often one turn), so a long
run's turns are on disk as it goes (a crash loses the current turn, and one that ended
in the last 50 ms); a run that ends sooner writes them in its flush, with the rest.
(A `session_store`'s "batched" appends stay one per run, as the comparable SDK's.) An
append that fails is retried (`RETRY_DELAYS`), then reported
as a `mirror_error` SystemMessage; the next flush tries again.

Each entry gets its uuid once, when it is first made, and each destination (the local
files, the store) keeps the entries it has not taken yet: a flush after a failure sends
each destination exactly what it lacks, with the same uuids, so that every entry reaches
every destination once (a store that dedupes by uuid drops a retried partial write).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ...types import (
    AssistantMessage,
    ContentBlock,
    Message,
    StreamEvent,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    block_to_wire,
    new_uuid,
)
from .session import Conversation, Session

if TYPE_CHECKING:
    from ..sessions.store import SessionKey

__all__ = ["BATCH_SECONDS", "RETRY_DELAYS", "Transcript"]

#: pauses between the attempts to append to a store that failed (then `mirror_error`)
RETRY_DELAYS: tuple[float, ...] = (0.05, 0.25)
#: how long a turn written behind waits for later turns to join its append
BATCH_SECONDS = 0.05

_Job = tuple["_Chain", int, list[dict[str, Any]]]


@dataclass
class _Chain:
    """One transcript in the store (the session's, or a subagent's) and what of it is
    written.

    Attributes:
        written: (uuid, message) of the stored chain the conversation continues.
        fields: what each of its message entries carries besides the message (a
            subagent's id, type and Agent call).
        tool_use_id: the Agent call its shown messages are tagged with (None: the main
            agent's own messages).
        noted: the messages last handed to the eager writer (the history's own objects,
            compared by identity, so noting costs nothing while nothing changed).
    """

    key: SessionKey
    conversation: Conversation | None = None
    written: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    noted: list[dict[str, Any]] = field(default_factory=list)
    #: the subagent whose conversation this is (kept while it runs in the background)
    owner: Any = None
    #: destination ("local", "store") -> entries made but not yet taken by it, in order
    undelivered: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def view(self) -> list[dict[str, Any]]:
        """The conversation as a store keeps it: owed results are its last message."""
        if self.conversation is None:
            return []
        view = list(self.conversation.history)
        if self.conversation.pending_results:
            view.append({"role": "user", "content": list(self.conversation.pending_results)})
        return view


class Transcript:
    """Where one session's runs are written, and what is written already.

    Attributes:
        shown: the messages the runs yielded that no entry names yet: an entry also
            carries their uuids (`message_uuids`), so `resume_session_at` takes those too.
        eager: each change goes to the store as the run yields it (else at its end).
        local: the local files written first when `store` is the options' own store, as
            the comparable SDK's CLI keeps its local transcript and mirrors it to the
            store: the local copy stays whole if the store fails, and the local session
            functions (`list_subagents`, `get_session_messages`) read it.
    """

    def __init__(self, store: Any, key: SessionKey, cwd: str,
                 written: list[tuple[str, dict[str, Any]]], git_branch: str | None = None,
                 *, eager: bool = False, local: Any = None, behind: bool = False) -> None:
        self.store = store
        self.local = local
        self.key = key
        self.cwd = cwd
        self.git_branch = git_branch
        self.eager = eager
        self.behind = behind and not eager
        self.shown: list[AssistantMessage | UserMessage] = []
        self._main = _Chain(key, written=list(written))
        self._sides: list[_Chain] = []  # subagents not yet written since they started
        self._queue: asyncio.Queue[_Job] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._behind: asyncio.Task[None] | None = None  # the last batch written behind
        self._due: list[dict[str, Any]] | None = None  # the view the next batch writes
        self._timer: asyncio.TimerHandle | None = None  # when it starts
        self._title: str | None = None  # the custom title last stored

    @property
    def written(self) -> list[tuple[str, dict[str, Any]]]:
        """(uuid, message) of the session's stored chain."""
        return self._main.written

    def attach(self, session: Session) -> None:
        """Follow `session`: its subagents are saved too, and (eager) its conversation as
        it grows."""
        self._main.conversation = session.conversation
        session.on_subagent = self.keep_subagent
        if self.behind:
            session.on_turn = self._turn_ended

    def keep_subagent(self, child: Any, tool_use_id: str | None) -> None:
        """Save a subagent's conversation (a SubagentSession's) as a side transcript."""
        fields: dict[str, Any] = {"isSidechain": True, "agentId": child.agent_id,
                                  "agentType": child.agent_type,
                                  "parentToolUseId": tool_use_id}
        parent_agent = getattr(child.parent, "agent_id", None)
        if parent_agent is not None:
            fields["parentAgentId"] = parent_agent
        from ..sessions.entries import SUBAGENT_PREFIX

        key: SessionKey = {**self.key, "subpath": SUBAGENT_PREFIX + child.agent_id}
        self._sides.append(_Chain(key, child.conversation, fields=fields,
                                  tool_use_id=tool_use_id, owner=child))

    def observe(self, message: Message) -> None:
        """Note a message the run yields (eager: and hand what changed to the writer)."""
        if isinstance(message, AssistantMessage | UserMessage) and message.uuid:
            self.shown.append(message)
        if self.eager and not isinstance(message, StreamEvent):
            for chain in (self._main, *self._sides):
                self._note(chain)

    async def flush(self, conversation: Conversation, *,
                    stopped: bool = False) -> SystemMessage | None:
        """Append what the conversation and its subagents gained since the last flush.
        Never raises: a store that keeps failing gives a `mirror_error` SystemMessage to
        pass on, and the next flush tries again.

        `stopped`: the consumer stopped reading while tools ran, so the conversation may
        still wait for their results: the stored one gets those it showed (the others as
        not run), so that it can be resumed."""
        await self._drain()
        failed: tuple[SessionKey, str] | None = None
        for side in list(self._sides):  # their runs have ended: written once more, done
            problem = await self._write(side, side.view())
            if problem is not None:
                failed = failed or (side.key, problem)
            elif not getattr(side.owner, "running_in_background", False):
                self._sides.remove(side)  # (one in the background: again at the next flush)
        self._main.conversation = conversation
        self._note_title(conversation.title)
        view = self._main.view()
        if stopped and not conversation.pending_results:
            view.extend(self._answered(view))
        problem = await self._write(self._main, view)
        if problem is not None:
            failed = (self.key, problem)
        if failed is None:
            self.shown.clear()
            return None
        return SystemMessage(subtype="mirror_error", data={
            "type": "system", "subtype": "mirror_error", "uuid": new_uuid(),
            "session_id": self.key["session_id"], "key": dict(failed[0]),
            "error": failed[1]})

    def _note_title(self, title: str | None) -> None:
        """A title the session was given (a hook's `sessionTitle`) is stored as its
        `custom-title` entry, once per change, as `rename_session` stores one."""
        if not title or title == self._title:
            return
        from ..sessions.entries import meta_entry
        from ..sessions.redact import redact_text

        self._title = title
        entry = meta_entry("custom-title", redact_text(title), self.key["session_id"])
        for destination in ("local", "store") if self.local is not None else ("store",):
            self._main.undelivered.setdefault(destination, []).append(entry)

    # -- eager: a background writer ---------------------------------------------------------

    def _note(self, chain: _Chain) -> None:
        """Hand the writer what changed in the chain's conversation since it was noted."""
        changed = self._changed(chain)
        if changed is None:
            return
        if self._queue is None:
            queue: asyncio.Queue[_Job] = asyncio.Queue()
            self._queue = queue
            self._worker = asyncio.get_running_loop().create_task(self._write_queued(queue))
        start, tail = changed
        self._queue.put_nowait((chain, start, copy.deepcopy(tail)))

    @staticmethod
    def _changed(chain: _Chain, view: list[dict[str, Any]] | None = None
                 ) -> tuple[int, list[dict[str, Any]]] | None:
        """Where the chain's conversation (`view`: as it is now) differs from what was
        last noted, and its messages from there (None: nothing changed); they are noted
        now."""
        view = chain.view() if view is None else view
        noted = chain.noted
        start, same_up_to = 0, min(len(view), len(noted))
        while start < same_up_to and view[start] is noted[start]:
            start += 1
        if start == len(view) == len(noted):
            return None
        chain.noted = view
        return start, view[start:]

    def _turn_ended(self) -> None:
        """Write the turn behind (`behind`), with the turns that end in the next
        `BATCH_SECONDS`: the conversation as it is now (the messages themselves: the
        history replaces them, never changes them in place, as the request body relies
        on too) is what the batch will write."""
        self._due = self._main.view()
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                BATCH_SECONDS, self._write_due)

    def _write_due(self) -> None:
        """Start the batch: one task per batch, each after the one before."""
        self._timer = None
        due, self._due = self._due, None
        changed = self._changed(self._main, due) if due is not None else None
        if changed is not None:
            self._behind = asyncio.get_running_loop().create_task(
                self._write_behind(self._behind, self._main, *changed))

    async def _write_behind(self, before: asyncio.Task[None] | None, chain: _Chain,
                            start: int, tail: list[dict[str, Any]]) -> None:
        if before is not None:
            await before
        with contextlib.suppress(Exception):  # a failure is retried by the flush
            await self._write(chain, tail, start=start)

    async def _write_queued(self, queue: asyncio.Queue[_Job]) -> None:
        while True:
            chain, start, tail = await queue.get()
            try:  # a failure is retried by the flush, which reports it
                with contextlib.suppress(Exception):
                    await self._write(chain, tail, start=start)
            finally:
                queue.task_done()

    async def _drain(self) -> None:
        """Wait until the writer has written what it was handed, then stop it."""
        if self._timer is not None:  # a batch not started: the flush writes its turns
            self._timer.cancel()
            self._timer = self._due = None
        behind = self._behind
        if behind is not None:  # a cancelled flush leaves it to finish, and to the next
            if not behind.done():  # (most often it is: it ran while the API answered)
                await asyncio.shield(behind)
            self._behind = None
        worker, queue = self._worker, self._queue
        if worker is None or queue is None:
            return
        try:
            await queue.join()
        finally:
            self._worker = self._queue = None
            worker.cancel()
        await asyncio.wait([worker])

    # -- writing ----------------------------------------------------------------------------

    async def _write(self, chain: _Chain, view: list[dict[str, Any]], *,
                     start: int = 0) -> str | None:
        """Append what `view` (the chain's messages from `start` on; the ones before it
        are written) has beyond what is written. None once written, or if nothing is
        new; else what went wrong."""
        from ..sessions.entries import message_entry, now_iso
        from ..sessions.redact import redact

        written = chain.written
        if start > len(written):  # an earlier write failed: the flush writes from there
            return None
        same = start
        while (same - start < len(view) and same < len(written)
               and written[same][1] == view[same - start]):
            same += 1
        new = view[same - start:]
        if not new:
            return await self._deliver(chain)  # what a failed append left, if anything
        shown = [m for m in self.shown if m.parent_tool_use_id == chain.tool_use_id]
        parent = written[same - 1][0] if same else None
        entries: list[dict[str, Any]] = []
        pairs: list[tuple[str, Any]] = []
        used: set[str] = set()
        # what is stored passes redaction, as a notebook's records do: the messages and
        # what else the entries carry from outside (once per write: the secrets to look
        # for are gathered per call); not the uuids and times made here, which redaction
        # could only break (a changed uuid would cut the chain). No copy before: a
        # message in the history is replaced, never changed in place (as the request
        # body relies on too, models/wire_body.py), and redaction copies.
        meta, clean = redact(({"session_id": self.key["session_id"], "cwd": self.cwd,
                               "git_branch": self.git_branch, "fields": chain.fields}, new))
        stamp = now_iso()  # one write, one time
        for message, redacted in zip(new, clean, strict=True):
            aliases = _aliases(shown, message, used)
            uuid = aliases[-1] if aliases else new_uuid()
            entry = message_entry(redacted, uuid=uuid, parent=parent,
                                  session_id=meta["session_id"], cwd=meta["cwd"],
                                  aliases=aliases, git_branch=meta["git_branch"],
                                  timestamp=stamp)
            entries.append({**entry, **meta["fields"]})
            pairs.append((uuid, message))
            parent = uuid
        # made once: whatever each destination takes now, these are their uuids
        chain.written = written[:same] + pairs
        self.shown = [m for m in self.shown if m.uuid not in used]  # named now
        for destination in ("local", "store") if self.local is not None else ("store",):
            chain.undelivered.setdefault(destination, []).extend(entries)
        return await self._deliver(chain)

    async def _deliver(self, chain: _Chain) -> str | None:
        """Give each destination the entries it has not taken yet; None once both have
        them, else what went wrong (after the retries). The local copy goes first."""
        problems = []
        local = chain.undelivered.get("local")
        if self.local is not None and local:
            try:
                await self.local.append(chain.key, local)
                chain.undelivered["local"] = []
            except Exception as error:
                problems.append(f"the local transcript was not written: {error}")
        pending = chain.undelivered.get("store")
        if pending:
            problem = await self._append_to_store(chain.key, pending)
            if problem is None:
                chain.undelivered["store"] = []
            else:
                problems.insert(0, problem)
        return problems[0] if problems else None

    async def _append_to_store(self, key: SessionKey, entries: list[dict[str, Any]]
                               ) -> str | None:
        last: Exception | None = None
        for delay in (*RETRY_DELAYS, None):
            try:
                await self.store.append(key, entries)
                return None
            except ConfigurationError as error:  # e.g. a read-only store: retrying is no use
                return str(error)
            except Exception as error:
                last = error
            if delay is not None:
                await asyncio.sleep(delay)
        return f"the session store failed to save the run: {type(last).__name__}: {last}"

    def _answered(self, view: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The results that answer the last response's calls ([] if none are owed)."""
        from .loop.tool_calls import not_executed

        last = view[-1] if view else None
        if last is None or last["role"] != "assistant":
            return []
        calls = [b for b in last["content"] if b.get("type") == "tool_use"]
        shown = {b.tool_use_id: block_to_wire(b) for m in self.shown
                 if isinstance(m, UserMessage) and isinstance(m.content, list)
                 for b in m.content if isinstance(b, ToolResultBlock)}
        results = [shown.get(call["id"]) or not_executed(
            [call], "the run was stopped before it finished")[0] for call in calls]
        return [{"role": "user", "content": results}] if results else []


def _aliases(shown: list[AssistantMessage | UserMessage], message: dict[str, Any],
             used: set[str]) -> list[str]:
    """The uuids of the yielded messages that showed this one: the blocks of one response
    (one `message_id`), or the tool results it carries."""
    content = message.get("content") or []
    found: list[str] = []
    if message["role"] == "assistant":
        response: Any = _NOTHING
        for item in shown:
            if (isinstance(item, AssistantMessage) and item.uuid not in used
                    and response in (_NOTHING, item.message_id)
                    and any(_same_block(b, content) for b in item.content)):
                response = item.message_id
                found.append(str(item.uuid))
    else:
        ids = {b.get("tool_use_id") for b in content if b.get("type") == "tool_result"}
        found = [str(s.uuid) for s in shown if isinstance(s, UserMessage)
                 and s.uuid not in used and isinstance(s.content, list)
                 and any(getattr(b, "tool_use_id", None) in ids for b in s.content)]
    used.update(found)
    return found


_NOTHING = object()


def _same_block(block: ContentBlock, content: list[dict[str, Any]]) -> bool:
    """Whether a yielded block is one of the message's blocks."""
    fields = {"text": "text", "thinking": "thinking", "tool_use": "id"}
    name = fields.get(block.type)
    return name is not None and any(
        b.get("type") == block.type and b.get(name) == getattr(block, name) for b in content)
