"""Subagents that run in the background (`run_in_background: true`, or an agent whose
definition says `background=True`), for the owners that can take their results later.

The Agent call returns at once ("started in the background", with the agent's id) and
the subagent runs on in a task of its own, its messages kept out of the parent's stream
(its transcript is saved beside the session's as a foreground one's is). When it ends,
the owner is told (`finished`): a `TaskNotificationMessage` for the consumer, and a new
turn for the model whose prompt is the notification (`origin` `{"kind":
"task-notification"}`), as the comparable CLI wakes a session when a background agent
completes. `FuxiSDKClient` queues that turn behind any other prompt; `query()` keeps its
stream open until the background agents it started have ended (at most
`FUXI_BACKGROUND_WAIT_MS`, default 10 minutes; then they are stopped) and runs their
turns. `stop_task(task_id)` stops one: a `TaskUpdatedMessage` (killed) and a
notification (stopped) follow, and no turn. Where no owner takes them (the notebook, the
ACP agent, a subagent's own calls) an agent asked to run in the background runs in the
foreground and its result says so.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ....errors import ConfigurationError
from ....extra_types import (
    TaskNotificationMessage,
    TaskNotificationStatus,
    TaskStartedMessage,
    TaskUpdatedMessage,
)
from ....types import Message, new_uuid
from ...tools.base import ToolOutput

__all__ = ["TASK_ORIGIN", "BackgroundAgents", "Finished", "wait_limit"]

#: the origin of the turn a finished background agent starts
TASK_ORIGIN: dict[str, Any] = {"kind": "task-notification"}


@dataclass
class _Task:
    task_id: str
    tool_use_id: str | None
    description: str
    agent_type: str
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task[ToolOutput] | None = None
    stopped: bool = False


@dataclass
class Finished:
    """A background agent that ended: what to show, and the turn it starts (None when it
    was stopped on request)."""

    messages: list[Message]
    prompt: str | None


def wait_limit() -> float:
    """How long `query()` waits for its background agents, in seconds."""
    raw = os.environ.get("FUXI_BACKGROUND_WAIT_MS", "").strip()
    try:
        value = int(raw) if raw else 600_000
    except ValueError:
        raise ConfigurationError("FUXI_BACKGROUND_WAIT_MS must be a whole number of "
                                 f"milliseconds, not {raw!r}") from None
    return max(value, 0) / 1000


class BackgroundAgents:
    """The background subagents of one conversation, and the news of their ends."""

    def __init__(self, session_id: Callable[[], str]) -> None:
        self._session_id = session_id
        self._running: dict[str, _Task] = {}
        self.finished: asyncio.Queue[Finished] = asyncio.Queue()
        self._wake = asyncio.Event()

    def start(self, run: Callable[[], Awaitable[ToolOutput]], *, task_id: str,
              tool_use_id: str | None, description: str, agent_type: str,
              release: Callable[[], None]) -> None:
        """Run `run()` detached from the call that started it (its messages reach no
        run's stream; its TaskStartedMessage goes to the stream of the run whose call
        started it); `release` frees its concurrency slot when it ends."""
        from ...tools.progress import detached_context
        from ..loop.relay import relay, without_relay

        entry = _Task(task_id, tool_use_id, description, agent_type)
        context = without_relay(detached_context(contextvars.copy_context()))

        async def body() -> ToolOutput:
            try:
                return await run()
            finally:
                release()

        entry.task = asyncio.get_running_loop().create_task(body(), context=context)
        entry.task.add_done_callback(lambda task: self._ended(entry, task))
        self._running[task_id] = entry
        relay(TaskStartedMessage(
            subtype="task_started", data={"task_id": task_id, "description": description,
                                          "tool_use_id": tool_use_id,
                                          "task_type": "local_agent"},
            task_id=task_id, description=description, uuid=new_uuid(),
            session_id=self._session_id(), tool_use_id=tool_use_id, task_type="local_agent"))

    def running(self) -> bool:
        return bool(self._running)

    def changed(self) -> Coroutine[Any, Any, Any]:
        """An awaitable that returns once another agent has ended (its news is in
        `finished`). The wake-up is reset now, when this is called (with `finished`
        found empty), not when it is first awaited: an agent that ends in between still
        wakes it."""
        self._wake.clear()
        return self._wake.wait()

    def stop(self, task_id: str) -> None:
        """Stop one; ConfigurationError naming the running ones if there is no such."""
        entry = self._running.get(task_id)
        if entry is None or entry.task is None:
            running = ", ".join(self._running) or "none"
            raise ConfigurationError(f"there is no background task {task_id!r} (running: "
                                     f"{running})")
        entry.stopped = True
        entry.task.cancel()

    async def close(self) -> None:
        """Stop every one still running, and wait until they have unwound."""
        tasks = [e.task for e in self._running.values() if e.task is not None]
        for entry in self._running.values():
            entry.stopped = True
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _ended(self, entry: _Task, task: asyncio.Task[ToolOutput]) -> None:
        self._running.pop(entry.task_id, None)
        status: TaskNotificationStatus
        if task.cancelled():
            status, text = "stopped", "It was stopped before it finished."
        elif task.exception() is not None:
            error = task.exception()
            status, text = "failed", f"It failed: {type(error).__name__}: {error}"
        else:
            output = task.result()
            status = "failed" if output.is_error else "completed"
            text = output.content if isinstance(output.content, str) else "\n".join(
                str(b.get("text", "")) for b in output.content if isinstance(b, dict))
        seconds = time.monotonic() - entry.started
        summary = f'Agent "{entry.description}" {status} after {seconds:.1f} s'

        data = {"task_id": entry.task_id, "status": status, "summary": summary,
                "tool_use_id": entry.tool_use_id}
        messages: list[Message] = []
        if entry.stopped:
            messages.append(TaskUpdatedMessage(
                subtype="task_updated", data={"task_id": entry.task_id,
                                              "patch": {"status": "killed"}},
                task_id=entry.task_id, patch={"status": "killed"}, status="killed",
                session_id=self._session_id(), uuid=new_uuid()))
        messages.append(TaskNotificationMessage(
            subtype="task_notification", data=data, task_id=entry.task_id,
            status=status, summary=summary, uuid=new_uuid(), session_id=self._session_id(),
            tool_use_id=entry.tool_use_id))
        prompt = None if entry.stopped else (
            f"<task-notification>\n<task-id>{entry.task_id}</task-id>\n"
            f"<status>{status}</status>\n<summary>{summary}</summary>\n"
            f"<result>{text}</result>\n</task-notification>")
        self.finished.put_nowait(Finished(messages, prompt))
        self._wake.set()
