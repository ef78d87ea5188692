"""FuxiSDKClient: one conversation over many prompts, with queueing and interrupts.

Prompts go into an inbox and are answered in order by one worker task, so a prompt sent
while a turn runs is queued, never dropped. Messages go to an unbounded outbox that
`receive_messages()` drains (no back-pressure deadlock when the consumer is slow).

Connected from another event loop (trio), the client keeps its asyncio machinery on a
bridge (common/foreign_loop.py): each public method runs there, awaited from the
caller's loop, and the user's callbacks run back on the caller's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Coroutine
from types import TracebackType
from typing import Any, TypeVar

from ...errors import ClientNotConnectedError, ConfigurationError
from ...options import FuxiAgentOptions, PermissionMode, PermissionUpdate
from ...types import Message, ResultMessage
from ..checkpoints.history import Rewound
from ..common.foreign_loop import AsyncioBridge, needs_bridge
from .loop.loop import run_prompt
from .loop.run import Run
from .mcp_link import start_servers
from .persist import Transcript, open_session
from .project_link import load_project
from .query import prompt_content, prompt_origin, prompt_verbatim
from .session import Session
from .subagents.background import TASK_ORIGIN, BackgroundAgents

__all__ = ["FuxiSDKClient"]

_CLOSED = object()
_R = TypeVar("_R")


def _bridged(method: Callable[..., Coroutine[Any, Any, _R]]
             ) -> Callable[..., Coroutine[Any, Any, _R]]:
    """Run the method on the client's asyncio bridge when called from another loop."""
    @functools.wraps(method)
    async def wrapper(self: FuxiSDKClient, *args: Any, **kwargs: Any) -> _R:
        bridge = self._bridge
        if bridge is None or bridge.inside():
            return await method(self, *args, **kwargs)
        return await bridge.call(functools.partial(method, self, *args, **kwargs))
    return wrapper


def _bridged_stream(method: Callable[..., AsyncGenerator[Message, None]]
                    ) -> Callable[..., AsyncGenerator[Message, None]]:
    """The same, for a method that yields messages."""
    @functools.wraps(method)
    async def wrapper(self: FuxiSDKClient, *args: Any, **kwargs: Any
                      ) -> AsyncGenerator[Message, None]:
        bridge = self._bridge
        messages = method(self, *args, **kwargs)
        if bridge is not None and not bridge.inside():
            messages = bridge.iterate(messages)
        async with contextlib.aclosing(messages) as each:
            async for message in each:
                yield message
    return wrapper


class FuxiSDKClient:
    """A persistent agent conversation.

    Use this when several prompts should share one conversation, or when you need
    `interrupt()` or to send prompts while a turn is still running. Use `query()` for
    one-off tasks.

    Example::

        async with FuxiSDKClient(options) as client:
            await client.query("List the Python files")
            async for message in client.receive_response():
                print(message)
    """

    def __init__(self, options: FuxiAgentOptions | None = None, *,
                 extra_tools: list[Any] | None = None, background: bool = True) -> None:
        """`extra_tools`: tool objects offered beside the built-in ones (the ACP agent's
        kernel tools), declared as any tool declares itself (tools/base.py).
        `background=False`: Agent calls never run in the background, so every turn is
        one the caller prompted (the ACP agent pairs each prompt with one response)."""
        self.options = options or FuxiAgentOptions()
        self.extra_tools = list(extra_tools or [])
        self.allows_background = background
        self.session: Session | None = None
        #: prompts waiting, each with the `origin` its message was stamped with and whether
        #: it is sent as typed (`client_composed: true`)
        self._inbox: asyncio.Queue[tuple[str | list[dict[str, Any]], dict[str, Any] | None,
                                         bool]] = asyncio.Queue()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._feeders: set[asyncio.Task[None]] = set()
        self._turn: asyncio.Task[ResultMessage | None] | None = None
        self._run: Run | None = None
        self._interrupt_next = False  # interrupt() came before the queued prompt started
        self._transcript: Transcript | None = None  # where each run is saved (persist.py)
        self._mcp: Any = None  # the MCP servers, from connect() to disconnect()
        self._project: Any = None  # the project settings read at connect()
        self._bridge: AsyncioBridge | None = None  # connected from another loop (trio)
        self._background: BackgroundAgents | None = None  # subagents running on their own
        self._news: asyncio.Task[None] | None = None  # passes on their ends

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Start the session (validating the options) and optionally send a first prompt."""
        if self._worker is None and self._bridge is None and needs_bridge():
            self._bridge = AsyncioBridge()
            await self._bridge.start()
            try:
                await self._bridge.call(self._connect)
            except BaseException:
                await self._bridge.close()
                self._bridge = None
                raise
        else:
            await self._bridged_connect()
        if prompt is not None:
            await self.query(prompt)

    @_bridged
    async def _bridged_connect(self) -> None:
        await self._connect()

    async def _connect(self) -> None:
        if self._worker is None:
            project = self._project = load_project(self.options)  # read once, kept for /clear
            self._mcp = await start_servers(self.options, self.options.cwd, project)
            try:
                self.session, self._transcript = await open_session(
                    self.options, extra_tools=self.extra_tools or None, mcp=self._mcp,
                    settings=project)
            except BaseException:
                await self._close_servers()
                raise
            self._take_background()
            self._worker = asyncio.get_running_loop().create_task(self._serve())

    def _take_background(self) -> None:
        """Let the session's Agent calls run in the background; when one ends, its
        notification goes out and its turn joins the prompts (background.py)."""
        assert self.session is not None
        if not self.allows_background:
            return
        self._background = BackgroundAgents(lambda: self.session.id if self.session else "")
        self.session.background = self._background
        self._news = asyncio.get_running_loop().create_task(self._pass_on(self._background))

    async def _pass_on(self, background: BackgroundAgents) -> None:
        while True:
            finished = await background.finished.get()
            for message in finished.messages:
                self._outbox.put_nowait(message)
            if finished.prompt is not None:
                self._inbox.put_nowait((finished.prompt, dict(TASK_ORIGIN), False))

    async def _stop_background(self) -> None:
        news, self._news = self._news, None
        background, self._background = self._background, None
        if background is not None:
            await background.close()
        if news is not None:
            news.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await news

    async def query(self, prompt: str | AsyncIterable[dict[str, Any]],
                    session_id: str = "default") -> None:
        """Queue a prompt (or every message of an async iterable); returns at once."""
        if self._bridge is not None and not self._bridge.inside():
            if not isinstance(prompt, str):  # read on this loop, where it was written
                prompt = self._bridge.feed(prompt)
            await self._bridge.call(functools.partial(self.query, prompt, session_id))
            return
        self._require_connected()
        if isinstance(prompt, str):
            self._inbox.put_nowait((prompt, None, False))
            return
        feeder = asyncio.get_running_loop().create_task(self._feed(prompt))
        self._feeders.add(feeder)
        feeder.add_done_callback(self._feeders.discard)

    async def _feed(self, prompt: AsyncIterable[dict[str, Any]]) -> None:
        async for message in prompt:
            self._inbox.put_nowait((prompt_content(message), prompt_origin(message),
                                    prompt_verbatim(message)))

    @_bridged_stream
    async def receive_messages(self) -> AsyncGenerator[Message, None]:
        """Every message of every run, until `disconnect()`."""
        self._require_connected()
        while True:
            message = await self._outbox.get()
            if message is _CLOSED:
                self._outbox.put_nowait(_CLOSED)  # wake other receivers too
                return
            yield message

    async def receive_response(self) -> AsyncGenerator[Message, None]:
        """Messages up to and including the next ResultMessage."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    @_bridged
    async def interrupt(self) -> None:
        """Stop the running turn; it ends with an `error_during_execution` result.
        Prompts queued behind it still run. Called right after `query()`, before that
        prompt's turn began, it stops that turn (which then never calls the model);
        with nothing running or queued it returns at once."""
        self._require_connected()
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._turn)
        elif not self._inbox.empty():
            self._interrupt_next = True

    @_bridged
    async def set_permission_mode(self, mode: PermissionMode) -> None:
        """Switch the permission mode for the calls that follow (also mid-turn), through
        the same path an approval's `setMode` update takes."""
        from ..permissions.engine import check_mode

        self._require_connected()
        assert self.session is not None
        check_mode(mode)
        self.session.permissions.apply([PermissionUpdate(type="setMode", mode=mode,
                                                         destination="session")])

    @_bridged
    async def set_model(self, model: str | None = None) -> None:
        """Use another model from the next request on (None: `FUXI_MODEL` or the package
        default); the conversation goes on. A budget needs a model with a known price."""
        from ..models.anthropic import AnthropicModel, resolve_model
        from ..models.names import model_name
        from ..models.pricing import check_budget, endpoint_of

        self._require_connected()
        assert self.session is not None
        current = self.session.model
        # the same provider and key (a helper's too) for the new id
        chosen = (current.renamed(model_name(model)) if isinstance(current, AnthropicModel)
                  and (model is None or isinstance(model, str)) else resolve_model(model))
        check_budget(self.session.options.max_budget_usd, chosen.name, endpoint_of(chosen))
        self.session.model = chosen

    @_bridged
    async def get_server_info(self) -> dict[str, Any] | None:
        """What the session offers, as the `init` message reports it (tools, model,
        permission mode, working directory, ...); None before `connect()`."""
        if self.session is None or self._worker is None:
            return None
        return dict(self.session.init_message().data)

    @_bridged
    async def get_context_usage(self) -> dict[str, Any]:
        """How full the context window is: total tokens, per category (system prompt,
        tools, messages, free, reserved), the window, the percentage and the automatic
        compaction threshold. The total is the API's count of the last request plus an
        estimate of what joined since (see context/tokens.py)."""
        from .loop.compacting import context_usage

        self._require_connected()
        assert self.session is not None
        return context_usage(self.session)

    @_bridged
    async def get_mcp_status(self) -> dict[str, Any]:
        """`{"mcpServers": [...]}`: each MCP server's name, status (connected / failed),
        server info, error and tools."""
        self._require_connected()
        return {"mcpServers": list(self._mcp.status()) if self._mcp is not None else []}

    @_bridged
    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Restart one MCP server (e.g. after it failed or died); the conversation goes on."""
        await self._servers(server_name).reconnect(server_name)

    @_bridged
    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Switch one MCP server off (stopped; its tools answer that it is disabled) or on."""
        await self._servers(server_name).set_enabled(server_name, enabled)

    def _servers(self, server_name: str) -> Any:
        self._require_connected()
        if self._mcp is None:
            raise ConfigurationError(f"there is no MCP server {server_name!r}: the client "
                                     "has no mcp_servers")
        return self._mcp

    @_bridged
    async def stop_task(self, task_id: str) -> None:
        """Stop a subagent running in the background (its id: the `task_id` of its
        TaskStartedMessage). A TaskUpdatedMessage (killed) and a TaskNotificationMessage
        (stopped) follow; the model is not woken for it. ConfigurationError names the
        running ones when there is no such task."""
        self._require_connected()
        if self._background is None:
            raise ConfigurationError(f"there is no background task {task_id!r}")
        self._background.stop(task_id)

    @_bridged
    async def rewind_files(self, user_message_id: str) -> Rewound:
        """Put the files the agent's calls changed back as they were at a user message
        (the `uuid` of a UserMessage this conversation yielded: a prompt, with
        `extra_args={"replay-user-messages": None}`, or a tool result). Needs
        `enable_file_checkpointing=True`; Write, Edit and code (Bash, Python) are all
        covered, in the working folders. Files the calls created are removed. The
        conversation itself is not rewound. Returns what was restored, removed, and could
        not be (a file over the size caps); the comparable SDK returns None."""
        self._require_connected()
        checkpoints = self.session.checkpoints if self.session is not None else None
        if checkpoints is None:
            raise ConfigurationError("rewind_files needs enable_file_checkpointing=True: "
                                     "without it no file was checkpointed")
        if user_message_id not in checkpoints.history.marks:
            raise ConfigurationError(f"no file checkpoint for message {user_message_id!r}: "
                                     "give the uuid of a UserMessage of this session")
        return checkpoints.history.rewind(user_message_id)

    async def disconnect(self) -> None:
        """Stop everything; pending prompts are dropped, receivers end, and the MCP
        servers stop (no server process outlives the client)."""
        bridge = self._bridge
        if bridge is not None and not bridge.inside():
            try:
                await bridge.call(self._disconnect)
            finally:
                self._bridge = None
                await bridge.close()
            return
        await self._disconnect()

    async def _disconnect(self) -> None:
        await self._stop_background()  # before the servers they may use
        tasks = [*self._feeders, *([self._worker] if self._worker else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._worker = None
        await self._close_servers()
        self._outbox.put_nowait(_CLOSED)

    async def _close_servers(self) -> None:
        servers, self._mcp = self._mcp, None
        if servers is not None:
            await asyncio.shield(servers.close())

    async def __aenter__(self) -> FuxiSDKClient:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.disconnect()

    def _require_connected(self) -> None:
        if self._worker is None or self.session is None:
            raise ClientNotConnectedError("call connect() (or use 'async with') first")

    async def _serve(self) -> None:
        assert self.session is not None
        while True:
            content, origin, verbatim = await self._inbox.get()
            verbatim = verbatim or self.session.options.verbatim_prompts  # no `/command`
            if not verbatim and isinstance(content, str) and content.strip() == "/clear":
                await self._clear(origin)
                continue
            self._run = Run(self.session, origin=origin, verbatim=verbatim)
            self._turn = asyncio.get_running_loop().create_task(self._play(self._run, content))
            if self._interrupt_next:  # interrupted before it began: it never starts
                self._interrupt_next = False
                self._turn.cancel()
            try:
                result = await asyncio.shield(self._turn)
            except asyncio.CancelledError:
                if not self._turn.cancelled():  # the worker itself is being stopped
                    self._turn.cancel()
                    raise
                result = self._run.result(
                    "error_during_execution", errors=["Interrupted by the user."],
                    terminal_reason="aborted_tools" if self._run.tool_turns
                    else "aborted_streaming")
            except Exception as error:  # keep serving: a receiver must always get a result
                result = self._run.result(
                    "error_during_execution", errors=[f"{type(error).__name__}: {error}"],
                    terminal_reason="model_error")
            await self._save_then_send(result)

    async def _clear(self, origin: dict[str, Any] | None) -> None:
        """`/clear`: a fresh conversation in this client (a new session: empty history,
        totals from zero, its own transcript), told by a ConversationResetMessage stamped
        with the old session's id, then the result of the `/clear` turn (no model call)."""
        import dataclasses
        import uuid

        from ...extra_types import ConversationResetMessage

        assert self.session is not None
        old = self.session.id
        await self._stop_background()  # the old conversation's agents end with it
        fresh = dataclasses.replace(self.options, resume=None, continue_conversation=False,
                                    fork_session=False, session_id=None,
                                    resume_session_at=None)
        self.session, self._transcript = await open_session(
            fresh, extra_tools=self.extra_tools or None, mcp=self._mcp, settings=self._project)
        self._take_background()
        self._outbox.put_nowait(ConversationResetMessage(
            new_conversation_id=str(uuid.uuid4()), uuid=str(uuid.uuid4()), session_id=old))
        self._outbox.put_nowait(Run(self.session, origin=origin).result("success", text=""))

    async def _play(self, run: Run, content: str | list[dict[str, Any]]) -> ResultMessage | None:
        """Pass the run's messages on, all but its result (sent once the run is saved)."""
        result = None
        async for message in run_prompt(run, content):
            if self._transcript is not None:
                self._transcript.observe(message)
            if isinstance(message, ResultMessage):
                result = message
            else:
                self._outbox.put_nowait(message)
        return result

    async def _save_then_send(self, result: ResultMessage | None) -> None:
        """The run reaches the store before its result reaches a receiver, so a `resume`
        right after the result finds it."""
        if self._transcript is not None and self.session is not None:
            problem = await self._transcript.flush(self.session.snapshot())
            if problem is not None:
                self._outbox.put_nowait(problem)
        if result is not None:
            self._outbox.put_nowait(result)
