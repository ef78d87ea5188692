"""The ACP methods: each ACP session is one `FuxiSDKClient` conversation.

- `session/prompt` runs the loop as `query()` does and streams what it yields
  (updates.py); it returns why the turn stopped. One prompt runs at a time in a session.
- A permission ask is `session/request_permission` with allow once / always / reject;
  "always" adds what the notebook's "Always allow" adds (the tool's declared rule), and
  its name says exactly that. Its title and content show the call whole (shown.py).
  It is asked from inside the loop, so it first waits until the prompt's updates have
  caught up with the call (`_caught_up`): the client gets the text written before the
  call, then the call, then the ask, in the order the model wrote them.
- Every method is called through guard.py (server.py wraps the agent): bad params are a
  JSON-RPC invalid-params error of one line, never a traceback.
- `session/cancel` interrupts as the notebook's interrupt does: the loop answers every
  open call, and a call the client saw start and never saw end is marked failed.
- Sessions are saved in the JSONL store; `session/load` resumes one and replays its
  conversation to the client. The client's MCP servers join the session's.
- Permission modes are the session's ACP modes; model and effort its config options.
- An API error answers the prompt with a JSON-RPC error (-32000 "authentication
  required" when the key is refused); another failure (the budget, say) ends the answer
  with one line saying why.
- A project whose settings need trust (hook commands, `.mcp.json` servers, allow rules)
  runs without them until the user trusts it: the question goes through the client,
  once per session, before the first prompt runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema

from ...errors import ConfigurationError, FuxiSDKError
from ...options import (
    EFFORT_LEVELS,
    PERMISSION_MODES,
    FuxiAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from ...types import ResultMessage
from ..common.version import VERSION
from ..sessions.text.markdown import code_span
from .kernel import KernelLink
from .prompt import prompt_blocks
from .questions import ask_questions
from .shown import always_allow_name, label, verbatim
from .updates import SessionUpdates

__all__ = ["AcpSession", "FuxiAcpAgent"]

_MODE_NAMES = {
    "default": ("Default", "Asks before edits, commands and network calls"),
    "acceptEdits": ("Accept edits", "File edits are applied; commands are still asked"),
    "plan": ("Plan", "Reads and plans; changes nothing"),
    "dontAsk": ("Don't ask", "Denies what would be asked"),
    "auto": ("Auto", "A classifier decides what would be asked"),
    "bypassPermissions": ("Bypass permissions", "Runs everything without asking"),
}
_STOP_REASONS = {"max_tokens": "max_tokens", "refusal": "refusal"}
#: an API error with one of these is the client's to fix by signing in (ACP's -32000)
_AUTH_WORDS = ("api error 401", "authentication", "api key", "x-api-key")
#: an ask stops waiting for the prompt's updates to reach its call after this long
#: without any progress (a call whose message never comes: asked as it is)
_CATCH_UP_SECONDS = 5.0


@dataclasses.dataclass
class AcpSession:
    """One ACP session: its options, its client once connected, its translator."""

    id: str
    options: FuxiAgentOptions
    client: Any = None
    updates: SessionUpdates | None = None
    #: the trust question: None (not needed or not asked yet), "asked"
    trust_asked: bool = False
    running: asyncio.Task[Any] | None = None
    cancelled: bool = False
    #: `_run` is sending what the prompt yields (an ask waits for it to catch up)
    relaying: bool = False
    #: set each time `_run` has sent what one message makes, and when it stops
    progressed: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)


class FuxiAcpAgent:
    """The agent side of ACP (see the module docstring). `options` are the defaults
    every session starts from (the command line's); with `kernel`, every session also
    has the kernel tools on that kernel."""

    def __init__(self, options: FuxiAgentOptions | None = None, *,
                 kernel: KernelLink | None = None) -> None:
        self.options = options or FuxiAgentOptions()
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Any = None
        #: the live kernel whose namespace the kernel tools work on (None: no kernel)
        self.kernel = kernel

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- setting up -----------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=min(PROTOCOL_VERSION, protocol_version),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=True),
                session_capabilities=schema.SessionCapabilities(
                    list=schema.SessionListCapabilities())),
            agent_info=schema.Implementation(name="fuxi-notebook", title="Fuxi",
                                             version=VERSION))

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # the API key comes from the environment, as for query()

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          additional_directories: list[str] | None = None,
                          **kwargs: Any) -> schema.NewSessionResponse:
        session_id = str(uuid.uuid4())
        options = self._options(cwd, mcp_servers, additional_directories, session_id=session_id)
        self.sessions[session_id] = AcpSession(session_id, options)
        return schema.NewSessionResponse(session_id=session_id, modes=self._modes(options),
                                         config_options=self._config(options))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> schema.LoadSessionResponse:
        from ..sessions.api import get_session_info

        if get_session_info(session_id, _directory(_folder(cwd, "cwd"))) is None:
            raise ConfigurationError(f"no saved session {session_id!r} in {cwd}")
        options = self._options(cwd, mcp_servers, additional_directories, resume=session_id)
        state = self.sessions[session_id] = AcpSession(session_id, options)
        await self._connect(state)
        assert state.updates is not None and state.client.session is not None
        for update in state.updates.history(state.client.session.history):
            await self.conn.session_update(session_id=session_id, update=update)
        return schema.LoadSessionResponse(modes=self._modes(options),
                                          config_options=self._config(options))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> schema.ListSessionsResponse:
        from ..sessions.api import list_sessions

        found = list_sessions(_directory(_folder(cwd, "cwd")) if cwd else None)
        return schema.ListSessionsResponse(sessions=[schema.SessionInfo(
            session_id=info.session_id, cwd=str(info.cwd or cwd or ""),
            title=info.custom_title or info.summary or None) for info in found])

    def _options(self, cwd: str, mcp_servers: list[Any] | None,
                 additional_directories: list[str] | None, **chosen: Any) -> FuxiAgentOptions:
        from .servers import session_servers

        _folder(cwd, "cwd")
        extra = [_folder(path, "additional directory") for path in additional_directories or []]
        base = self.options
        return dataclasses.replace(
            base, cwd=cwd, add_dirs=[*base.add_dirs, *extra],
            include_partial_messages=True, mcp_servers=session_servers(base, mcp_servers),
            **chosen)

    def _modes(self, options: FuxiAgentOptions) -> schema.SessionModeState:
        return schema.SessionModeState(
            current_mode_id=options.permission_mode or "default",
            available_modes=[schema.SessionMode(id=mode, name=_MODE_NAMES[mode][0],
                                                description=_MODE_NAMES[mode][1])
                             for mode in PERMISSION_MODES])

    def _config(self, options: FuxiAgentOptions) -> list[Any]:
        from ..models.access.providers import current_provider, model_problem
        from ..models.known import known_models
        from ..models.names import model_name

        model = options.model if isinstance(options.model, str) else None
        current = model_name(model)
        try:  # the provider the session's requests go to, as assemble chooses it
            provider = current_provider(env={**os.environ, **(options.env or {})})
        except ConfigurationError:
            provider = None  # two switched on: the prompt says so in one line
        models = [m for m in dict.fromkeys([current, *known_models()])
                  if m == current or provider is None or model_problem(provider, m) is None]
        return [
            schema.SessionConfigOptionSelect(
                type="select", id="model", name="Model", category="model",
                current_value=current,
                description=(f"on {provider.describe()}" if provider is not None
                             and provider.name != "anthropic" else None),
                options=[schema.SessionConfigSelectOption(value=m, name=m) for m in models]),
            schema.SessionConfigOptionSelect(
                type="select", id="effort", name="Effort", category="thought_level",
                current_value=options.effort or "default",
                options=[schema.SessionConfigSelectOption(value=level, name=level.title())
                         for level in ("default", *EFFORT_LEVELS)]),
        ]

    # -- changing a session ---------------------------------------------------------

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> schema.SetSessionModeResponse:
        from ..permissions.engine import check_mode

        state = self._session(session_id)
        mode = check_mode(mode_id)  # ConfigurationError: invalid params (guard.py)
        state.options = dataclasses.replace(state.options, permission_mode=mode)
        if state.client is not None:
            await state.client.set_permission_mode(mode)
        return schema.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> schema.SetSessionConfigOptionResponse:
        state = self._session(session_id)
        if config_id == "model" and isinstance(value, str) and _model_id(value):
            state.options = dataclasses.replace(state.options, model=value)
            if state.client is not None:
                try:
                    await state.client.set_model(value)
                except FuxiSDKError as error:  # the client's to fix: invalid params
                    raise ConfigurationError(str(error)) from None
        elif config_id == "effort" and value in ("default", *EFFORT_LEVELS):
            effort = None if value == "default" else value
            state.options = dataclasses.replace(state.options, effort=effort)  # type: ignore[arg-type]
            if state.client is not None and state.client.session is not None:
                session = state.client.session
                session.options = dataclasses.replace(session.options, effort=effort)
        else:
            raise ConfigurationError(
                f"no config option {config_id!r} with value {value!r}: config options are "
                f"model (a model id) and effort (default, {', '.join(EFFORT_LEVELS)})")
        return schema.SetSessionConfigOptionResponse(config_options=self._config(state.options))

    async def close_session(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.pop(session_id, None)
        if state is not None and state.client is not None:
            await state.client.disconnect()

    async def close(self) -> None:
        """Disconnect every session's client (their MCP servers stop), and the kernel."""
        for session_id in list(self.sessions):
            await self.close_session(session_id)
        if self.kernel is not None:
            self.kernel.close()

    def _session(self, session_id: str) -> AcpSession:
        state = self.sessions.get(session_id)
        if state is None:
            raise ConfigurationError(f"no session {session_id!r} (session/new or "
                                     "session/load first)")
        return state

    # -- running a prompt -----------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any],
                     **kwargs: Any) -> schema.PromptResponse:
        state = self._session(session_id)
        if state.running is not None and not state.running.done():
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session"})
        content = prompt_blocks(prompt)
        state.cancelled = False
        state.running = asyncio.current_task()
        try:
            await self._ask_trust(state)
            if state.cancelled:
                return schema.PromptResponse(stop_reason="cancelled")
            if state.client is None:
                await self._connect(state)
            result = await self._run(state, content)
        finally:
            state.running = None
        return self._response(state, result)

    async def _run(self, state: AcpSession, content: list[dict[str, Any]]
                   ) -> ResultMessage | None:
        assert state.updates is not None
        await state.client.query(_one(content))
        result = None
        state.relaying = True
        try:
            async for message in state.client.receive_response():
                for update in state.updates.of(message):
                    await self.conn.session_update(session_id=state.id, update=update)
                state.progressed.set()
                if isinstance(message, ResultMessage):
                    result = message
        finally:
            state.relaying = False
            state.progressed.set()
        if state.client.session is not state.updates.session:  # `/clear`: a new session
            state.updates = SessionUpdates(state.client.session)
        for call_id in list(state.updates.open_calls()):  # interrupted before its result
            for update in state.updates.result(call_id, "Interrupted by the user.", True):
                await self.conn.session_update(session_id=state.id, update=update)
        await self._usage(state)
        if result is not None and _said_in_text(state, result):
            await self.conn.session_update(session_id=state.id, update=schema.AgentMessageChunk(
                session_update="agent_message_chunk", content=schema.TextContentBlock(
                    type="text", text=f"\n\n(fuxi stopped: {_errors(result)})")))
        return result

    async def _usage(self, state: AcpSession) -> None:
        usage = await state.client.get_context_usage()
        session = state.client.session
        cost = session.usage.total_cost_usd if session is not None else None
        await self.conn.session_update(session_id=state.id, update=schema.UsageUpdate(
            session_update="usage_update", used=int(usage.get("totalTokens") or 0),
            size=int(usage.get("rawMaxTokens") or 0),
            cost=schema.Cost(amount=float(cost), currency="USD") if cost is not None else None))

    def _response(self, state: AcpSession, result: ResultMessage | None
                  ) -> schema.PromptResponse:
        if state.cancelled or result is None:
            return schema.PromptResponse(stop_reason="cancelled")
        if result.is_error and result.terminal_reason == "api_error":
            details = {"details": _errors(result)}
            if any(word in details["details"].lower() for word in _AUTH_WORDS):
                raise RequestError.auth_required(details)
            raise RequestError.internal_error(details)
        stop = "end_turn"
        if result.subtype == "error_max_turns":
            stop = "max_turn_requests"
        elif result.stop_reason in _STOP_REASONS:
            stop = _STOP_REASONS[result.stop_reason]
        usage = result.usage or {}
        given, made, read, written = (int(usage.get(key) or 0) for key in (
            "input_tokens", "output_tokens", "cache_read_input_tokens",
            "cache_creation_input_tokens"))
        return schema.PromptResponse(stop_reason=stop, usage=schema.Usage(  # type: ignore[arg-type]
            total_tokens=given + made + read + written, input_tokens=given,
            output_tokens=made, cached_read_tokens=read, cached_write_tokens=written))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.get(session_id)
        if state is None or state.running is None:
            return
        state.cancelled = True
        if state.client is not None:
            await state.client.interrupt()

    # -- the client, permissions and trust --------------------------------------------

    async def _connect(self, state: AcpSession) -> None:
        from ..agent.client import FuxiSDKClient
        from .kernel import remote_kernel_tools

        options = dataclasses.replace(state.options, can_use_tool=self._asker(state))
        tools = remote_kernel_tools(self.kernel) if self.kernel is not None else None
        client = FuxiSDKClient(options, extra_tools=tools, background=False)
        try:
            await client.connect()
        except FuxiSDKError as error:  # the session's options: invalid params (guard.py)
            raise ConfigurationError(str(error)) from None
        state.client = client
        state.updates = SessionUpdates(client.session)

    def _asker(self, state: AcpSession) -> Callable[..., Any]:
        async def can_use_tool(tool_name: str, tool_input: dict[str, Any],
                               context: ToolPermissionContext) -> Any:
            return await self._ask_permission(state, tool_name, tool_input, context)
        return can_use_tool

    async def _ask_permission(self, state: AcpSession, tool_name: str,
                              tool_input: dict[str, Any], context: ToolPermissionContext
                              ) -> PermissionResultAllow | PermissionResultDeny:
        assert state.updates is not None
        call_id = context.tool_use_id or f"call-{uuid.uuid4().hex[:12]}"
        if context.tool_use_id:
            await _caught_up(state, call_id)
        for update in state.updates.start(call_id, tool_name, tool_input):  # [] once sent
            await self.conn.session_update(session_id=state.id, update=update)
        if tool_name == "AskUserQuestion":
            return await ask_questions(self.conn, state.id, call_id, tool_input)
        always = always_allow_name(context.suggestions)  # exactly what "always" applies
        options = [schema.PermissionOption(option_id="allow_once", name="Allow",
                                           kind="allow_once")]
        if always is not None:
            options.append(schema.PermissionOption(
                option_id="allow_always", name=always, kind="allow_always"))
        options.append(schema.PermissionOption(option_id="reject_once", name="Deny",
                                               kind="reject_once"))
        fields = state.updates.call_fields(  # the whole input, and what runs beyond it
            call_id, tool_name, tool_input, shown_too=context.shown,
            reason=context.decision_reason)
        answer = await self.conn.request_permission(
            session_id=state.id, tool_call=schema.ToolCallUpdate(**fields, status="pending"),
            options=options)
        chosen = getattr(answer.outcome, "option_id", None)
        if chosen in ("allow_once", "allow_always"):
            updates = list(context.suggestions) if chosen == "allow_always" else None
            return PermissionResultAllow(updated_permissions=updates)
        if chosen is None:  # cancelled: the prompt is being cancelled
            return PermissionResultDeny(message="The user cancelled the prompt.",
                                        interrupt=True)
        return PermissionResultDeny(message=f"The user denied this {tool_name} call.")

    async def _ask_trust(self, state: AcpSession) -> None:
        """Ask once per session whether to trust the project's held-back settings; if
        the user does, the session's client starts again with them."""
        from ..agent.project_link import load_project
        from ..settings.project import trust_project

        if state.trust_asked:
            return
        state.trust_asked = True
        project = load_project(state.options)
        if not project.needs_trust:
            return
        call_id = f"fuxi-trust-{uuid.uuid4().hex[:12]}"
        answer = await self.conn.request_permission(
            session_id=state.id,
            tool_call=schema.ToolCallUpdate(
                tool_call_id=call_id,
                title=f"Trust the project settings of {code_span(label(str(project.root)))}?",
                kind="other", status="pending", content=[schema.ContentToolCallContent(
                    type="content", content=schema.TextContentBlock(
                        type="text", text=verbatim(project.describe())))]),
            options=[schema.PermissionOption(option_id="trust", name="Trust this folder",
                                             kind="allow_always"),
                     schema.PermissionOption(option_id="not_now", name="Not now",
                                             kind="reject_once")])
        if getattr(answer.outcome, "option_id", None) != "trust":
            return
        trust_project(project)
        if state.client is not None:  # loaded before: start again, with the settings
            await state.client.disconnect()
            state.options = dataclasses.replace(state.options, resume=state.id,
                                                session_id=None)
            state.client = None


async def _caught_up(state: AcpSession, call_id: str) -> None:
    """Wait until `_run` has sent the call's `tool_call`, and so everything the loop
    yielded before it. The ask comes from inside the loop, whose messages `_run` reads
    from a queue: without the wait, the text the model wrote before the call could
    still be queued when the ask sends the call, and a chat that draws updates in the
    order they come (jupyter-ai's: a text chunk after a call starts a new message below
    it) would show the call above its text. Gives up once `_run` stops, or after
    `_CATCH_UP_SECONDS` in which it sent nothing (a call whose message never reaches it
    is then started by the ask, as before)."""
    assert state.updates is not None
    while state.relaying:
        state.progressed.clear()  # before the check: a send after it is not missed
        if call_id in state.updates.started:
            return
        try:
            await asyncio.wait_for(state.progressed.wait(), _CATCH_UP_SECONDS)
        except TimeoutError:
            return


def _errors(result: ResultMessage) -> str:
    from ..sessions.redact import redact_text

    return redact_text("; ".join(result.errors or []) or result.subtype)


def _said_in_text(state: AcpSession, result: ResultMessage) -> bool:
    """Whether the run's failure is told as text: not a cancel, not the turn limit (a
    stop reason), not an API error (a JSON-RPC error)."""
    return result.is_error and not state.cancelled and result.subtype != "error_max_turns" \
        and result.terminal_reason != "api_error"


async def _one(content: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "user", "message": {"role": "user", "content": content}}


def _model_id(value: str) -> bool:
    """Whether `value` can be a model id: one printable line, no space around it."""
    from ..models.names import printable_name

    return bool(value) and len(value) <= 200 and printable_name(value) == value


def _folder(path: str, what: str) -> str:
    """`path`, an absolute path of an existing folder (ConfigurationError: a JSON-RPC
    invalid params error naming `what`)."""
    if not Path(path).is_absolute():
        raise ConfigurationError(f"the {what} {path!r} is not an absolute path")
    if not Path(path).is_dir():  # False for a path no file can have (a NUL in it)
        raise ConfigurationError(f"the {what} {path!r} is not a folder")
    return path


def _directory(cwd: str) -> str:
    return str(Path(cwd).expanduser().resolve())
