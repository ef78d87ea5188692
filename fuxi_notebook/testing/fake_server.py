"""A fake Anthropic Messages API on 127.0.0.1, driven by a script of Turns and Faults.

Tests run the real `anthropic.AsyncAnthropic` client against it, so the whole path the
agent loop depends on (HTTP framing, SSE parsing, retries, error classes, timeouts) is
exercised without the network. Each `POST /v1/messages` consumes the next script step;
the server records every request and reports approximate prompt-cache usage.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from .._internal.models.pricing import is_known_model
from .._internal.models.script import Fault, Step, Turn, turn_events
from .._internal.models.wire_check import request_problem
from ._api import (
    DEFAULT_CUT_TURN,
    STATUS_FOR_TYPE,
    authenticated,
    error_body,
    fault_error,
    final_usage,
    is_stream_fault,
    message_from_events,
)
from ._http import (
    LAST_CHUNK,
    BadRequest,
    HttpRequest,
    chunk_bytes,
    json_response_bytes,
    read_request,
    response_head,
    sse_bytes,
)
from .cache import PromptCache, count_tokens

__all__ = ["FakeMessagesServer", "RecordedRequest", "Rejection", "Route"]

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as it arrived: method, target (path and query), headers, body bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Route:
    """What a request asks for. A provider's URL may carry the model and whether to stream;
    `params` keeps the other parts of the URL (project, region, ...)."""

    kind: Literal["messages", "count_tokens"]
    model: str | None = None
    stream: bool | None = None
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Rejection:
    """A refusal in a provider's own shape (status, JSON body, extra headers)."""

    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)


class FakeMessagesServer:
    """A scripted Messages API server running in a background thread with its own loop.

    Usable as `with FakeMessagesServer(steps) as server:` or via `start()` / `stop()`;
    pass `server.url` (or `server.base_url`) as the client's `base_url`. Responses name the
    requested model, as
    the API does (`model=` fixes one instead); `reject_unknown_models=True` refuses the
    models this version does not know, as the API refuses a model it does not have. See the
    module docstring of `fuxi_notebook._internal.models.script` for the step format.

    Cloud providers' fakes (`testing.provider_fakes`) subclass it and override the hooks
    of the "provider hooks" section (routes, authentication, body rules, error shapes,
    stream framing); what a response is stays here.
    """

    #: prefix of message ids (Bedrock's are `msg_bdrk_...`, Vertex's `msg_vrtx_...`)
    message_id_prefix = "msg"

    def __init__(
        self,
        steps: Sequence[Step] | None = None,
        *,
        model: str | None = None,
        chunk: int = 24,
        cache_min_tokens: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = None,
        reject_unknown_models: bool = False,
    ) -> None:
        self.model = model
        #: a request for a model this version does not know (`models.known_models`, or a
        #: dated form) gets the API's 404 `not_found_error` ("model: <id>"), as the real
        #: API answers a model it does not have; off, every model is served
        self.reject_unknown_models = reject_unknown_models
        #: a request whose prompt (estimated as `count_tokens` does) is bigger than this
        #: is rejected as the API rejects a prompt over the model's window
        self.context_window = context_window
        self.chunk = chunk
        self.host = host
        self.cache = PromptCache(cache_min_tokens)
        self._requested_port = port
        self._port: int | None = None
        self._lock = threading.Lock()
        self._steps: deque[Step] = deque(steps or [])
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._usage_log: list[dict[str, Any]] = []
        self._errors: list[str] = []
        self._count_requests: list[dict[str, Any]] = []
        self._raw: list[RecordedRequest] = []
        self._connections = 0
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # ----------------------------------------------------------------- script & records

    def add(self, *steps: Step) -> None:
        """Append steps to the script."""
        with self._lock:
            self._steps.extend(steps)

    def reset(self, steps: Sequence[Step] | None = None) -> None:
        """Start over: new script, no recorded requests, empty prompt cache."""
        with self._lock:
            self._steps = deque(steps or [])
            for record in (self._requests, self._headers, self._usage_log, self._errors,
                           self._count_requests, self._raw):
                record.clear()
        self.cache.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed bodies of every `POST /v1/messages`, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Headers (lower-cased names) of every `POST /v1/messages`, in arrival order."""
        with self._lock:
            return list(self._headers)

    @property
    def raw_requests(self) -> list[RecordedRequest]:
        """Every request received (any route, refused ones too), as it arrived."""
        with self._lock:
            return list(self._raw)

    @property
    def usage_log(self) -> list[dict[str, Any]]:
        """Final usage of every response that started streaming (or was returned)."""
        with self._lock:
            return list(self._usage_log)

    @property
    def errors(self) -> list[str]:
        """Problems of the script or of requests, e.g. "script exhausted"."""
        with self._lock:
            return list(self._errors)

    @property
    def count_token_requests(self) -> list[dict[str, Any]]:
        """Parsed bodies of every `POST /v1/messages/count_tokens`."""
        with self._lock:
            return list(self._count_requests)

    @property
    def connection_count(self) -> int:
        """TCP connections accepted so far; shows whether the client reuses connections."""
        with self._lock:
            return self._connections

    @property
    def remaining(self) -> int:
        """Steps not consumed yet."""
        with self._lock:
            return len(self._steps)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"

    def _take_step(self, body: dict[str, Any], headers: dict[str, str]) -> Step:
        """Record the request and pop its step (a 500 fault once the script is exhausted)."""
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            if self._steps:
                return self._steps.popleft()
            number = len(self._requests)
            self._errors.append(f"script exhausted at request {number}")
        return Fault(
            status=500, error_type="api_error",
            message=f"fake server: script exhausted (request {number} has no step left)",
            headers={"x-should-retry": "false"},
        )

    def _resolve(self, step: Step, body: dict[str, Any]) -> Turn | Fault:
        """Call a callable step; its exceptions become a non-retried 500."""
        if isinstance(step, Turn | Fault):
            return step
        try:
            result = step(body)
            if not isinstance(result, Turn | Fault):
                raise TypeError(f"a step returned {type(result).__name__}, not Turn or Fault")
            return result
        except Exception as exc:
            message = f"fake server: script step raised {exc!r}"
            with self._lock:
                self._errors.append(message)
            return Fault(status=500, message=message, headers={"x-should-retry": "false"})

    def _events(self, turn: Turn, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The turn's stream events, with cache-accounted usage; logs the usage."""
        usage: dict[str, Any] = {**self.cache.account(body), **turn.usage}
        usage.pop("output_tokens", None)
        events = turn_events(
            turn, message_id=self._next_id(self.message_id_prefix),
            model=self.model or str(body.get("model") or "claude-sonnet-5-5"), usage=usage,
            tool_ids=lambda: self._next_id("toolu"), chunk=self.chunk,
        )
        with self._lock:
            self._usage_log.append(final_usage(events))
        return self._decorate_events(events)

    # ----------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        """The bound port (after `start()`)."""
        if self._port is None:
            raise RuntimeError("FakeMessagesServer is not started")
        return self._port

    @property
    def url(self) -> str:
        """The server's root URL (the first-party client's `base_url`)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to pass as the client's `base_url` (a provider's fake adds its prefix)."""
        return self.url

    def start(self) -> FakeMessagesServer:
        """Bind and serve in a daemon thread; returns once the port is known."""
        if self._thread is not None:
            raise RuntimeError("FakeMessagesServer already started")
        self._ready.clear()
        self._port, self._startup_error = None, None
        self._thread = threading.Thread(target=self._run, name="fake-messages-api", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Close the listener and every connection, then join the thread. Idempotent."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None:
            return
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(stopping.set)
        thread.join()
        self._thread = None

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        """Thread body: a private event loop, so tests' own loops never block the server."""
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start() if it happened while binding
            self._startup_error = self._startup_error or exc
            self._ready.set()

    async def _main(self) -> None:
        """Bind, signal start(), serve until stop(), then cancel and close every connection."""
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(
            self._on_connect, self.host, self._requested_port, limit=1 << 20)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await server.wait_closed()

    # ----------------------------------------------------------------- connections

    async def _on_connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve requests on one keep-alive connection until EOF, a fault or stop()."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        with self._lock:
            self._connections += 1
        try:
            while True:
                request = await read_request(reader)
                if request is None or not await self._dispatch(request, writer):
                    break
                if not request.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, BadRequest):
            pass
        except asyncio.CancelledError:
            pass  # stop() cancels us; asyncio's callback would log a cancelled task
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _dispatch(self, request: HttpRequest, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must be closed afterwards."""
        with self._lock:
            self._raw.append(RecordedRequest(request.method, request.path,
                                             dict(request.headers), request.body))
        path = request.path.split("?", 1)[0].rstrip("/")
        route = self._route(request.method, path)
        if route is None:
            return await self._send_error(writer, 404, "not_found_error",
                                          f"fake server: no route {request.method} {path}")
        refused = self._auth_problem(request, route)
        if refused is not None:
            return await self._send_rejection(writer, refused)
        try:
            body = json.loads(request.body or b"null")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            return await self._send_error(writer, 400, "invalid_request_error",
                                          f"fake server: bad JSON body: {exc}")
        if route.kind == "count_tokens":
            return await self._count(route, body, writer)
        refused = self._body_problem(route, body)
        if refused is not None:  # what the provider refuses before the model sees it
            with self._lock:
                self._requests.append(body)
                self._errors.append(f"rejected request: {json.dumps(refused.payload)}")
            return await self._send_rejection(writer, refused)
        wanted = self._messages_body(route, body)
        unknown = self._unknown_model(wanted)
        if unknown is not None:  # the API refuses the model before it looks at the rest
            with self._lock:
                self._requests.append(body)
                self._errors.append(f"rejected request: {unknown}")
            return await self._send_rejection(writer, self._model_refusal(route, unknown))
        problem = request_problem(wanted, size=len(request.body or b""))
        if problem is not None:  # what the real API rejects, the fake rejects too
            with self._lock:
                self._requests.append(body)
                self._errors.append(f"rejected request: {problem[1]}")
            kind = "request_too_large" if problem[0] == 413 else "invalid_request_error"
            return await self._send_error(writer, problem[0], kind, problem[1])
        too_long = self._over_window(wanted)
        if too_long is not None:
            with self._lock:
                self._requests.append(body)
                self._errors.append(f"rejected request: {too_long}")
            return await self._send_error(writer, 400, "invalid_request_error", too_long)
        step = self._take_step(body, dict(request.headers))
        return await self._respond(self._resolve(step, wanted), wanted, writer)

    async def _count(self, route: Route, body: dict[str, Any],
                     writer: asyncio.StreamWriter) -> bool:
        """A token count: the estimate `count_tokens` makes of the request it counts."""
        refused = self._count_problem(route, body)
        if refused is not None:
            return await self._send_rejection(writer, refused)
        with self._lock:
            self._count_requests.append(body)
        wanted = self._counted_body(route, body)
        unknown = self._unknown_model(wanted)
        if unknown is not None:
            return await self._send_rejection(writer, self._model_refusal(route, unknown))
        return await self._send_json(writer, 200, self._count_payload(count_tokens(wanted)))

    # ----------------------------------------------------------------- provider hooks

    def _route(self, method: str, path: str) -> Route | None:
        """What `method path` (query and trailing slash removed) asks for; None: 404."""
        if method != "POST":
            return None
        if path == MESSAGES_PATH:
            return Route("messages")
        if path == COUNT_TOKENS_PATH:
            return Route("count_tokens")
        return None

    def _auth_problem(self, request: HttpRequest, route: Route) -> Rejection | None:
        """The refusal of a request without acceptable credentials, or None."""
        if authenticated(request.headers):
            return None
        return self._rejection(401, "authentication_error",
                               "fake server: no Authorization or x-api-key header")

    def _body_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        """What the provider refuses in a Messages body before the model sees it."""
        return None

    def _messages_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        """The Messages API request `body` stands for (a provider moves parts to the URL)."""
        return body

    def _model_refusal(self, route: Route, message: str) -> Rejection:
        """The refusal of a model the server does not have (`message`: "model: <id>")."""
        return self._rejection(404, "not_found_error", message)

    def _count_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        """What the provider refuses in a token-count body."""
        return None

    def _counted_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        """The Messages API request whose tokens a count request asks for."""
        return body

    def _count_payload(self, tokens: int) -> Any:
        """The token count's answer."""
        return {"input_tokens": tokens}

    def _rejection(self, status: int, error_type: str, message: str,
                   headers: dict[str, str] | None = None) -> Rejection:
        """An error in this server's shape (the Messages API's: `type: error`)."""
        request_id = self._next_id("req")
        return Rejection(status, error_body(error_type, message, request_id),
                         {"request-id": request_id, **(headers or {})})

    def _decorate_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A provider's additions to the stream events (Bedrock's invocation metrics)."""
        return events

    def _stream_headers(self) -> dict[str, str]:
        """Headers of a 200 streamed response."""
        return {"content-type": "text/event-stream", "cache-control": "no-cache",
                "request-id": self._next_id("req")}

    def _stream_bytes(self, event: dict[str, Any]) -> bytes:
        """One event as the stream frames it (SSE here)."""
        return sse_bytes(event)

    def _stream_error_bytes(self, error_type: str, message: str) -> bytes:
        """A mid-stream error, as the stream frames it."""
        return sse_bytes({"type": "error", "error": {"type": error_type, "message": message}})

    def _json_headers(self, payload: Any) -> dict[str, str]:
        """Headers of a 200 JSON response carrying `payload`."""
        return {"request-id": self._next_id("req")}

    def _unknown_model(self, body: dict[str, Any]) -> str | None:
        """The API's message for a model it does not have (`model: <id>`), or None."""
        model = body.get("model")
        if not self.reject_unknown_models or not isinstance(model, str):
            return None  # a missing or malformed model is the wire check's to reject
        return None if is_known_model(model) else f"model: {model}"

    def _over_window(self, body: dict[str, Any]) -> str | None:
        """The API's message for a prompt over the window, or None."""
        if self.context_window is None:
            return None
        tokens = count_tokens(body)
        if tokens <= self.context_window:
            return None
        return f"prompt is too long: {tokens} tokens > {self.context_window} maximum"

    async def _respond(
        self, step: Turn | Fault, body: dict[str, Any], writer: asyncio.StreamWriter
    ) -> bool:
        """Answer with a Turn (SSE or JSON, as the request asked) or act out a Fault."""
        streaming = bool(body.get("stream"))
        if isinstance(step, Turn):
            events = self._events(step, body)
            if not streaming:
                return await self._send_json(writer, 200, message_from_events(events))
            await self._send_stream(writer, events, finish=True)
            return True
        if step.status is not None or not is_stream_fault(step):
            return await self._send_fault(writer, step)
        return await self._stream_fault(step, body, writer, streaming)

    # ----------------------------------------------------------------- responses

    async def _send_json(self, writer: asyncio.StreamWriter, status: int, payload: Any) -> bool:
        """A JSON success body; always keeps the connection."""
        writer.write(json_response_bytes(status, payload, self._json_headers(payload)))
        await writer.drain()
        return True

    async def _send_error(
        self, writer: asyncio.StreamWriter, status: int, error_type: str, message: str,
        headers: dict[str, str] | None = None,
    ) -> bool:
        """An API error in this server's shape (for the Messages API, a body whose
        `request_id` matches the `request-id` header)."""
        return await self._send_rejection(
            writer, self._rejection(status, error_type, message, headers))

    async def _send_rejection(self, writer: asyncio.StreamWriter, rejection: Rejection) -> bool:
        """A refusal as it was shaped; keeps the connection."""
        writer.write(json_response_bytes(rejection.status, rejection.payload, rejection.headers))
        await writer.drain()
        return True

    async def _send_fault(self, writer: asyncio.StreamWriter, fault: Fault) -> bool:
        """An HTTP error response for a status fault (or a non-streamed error event)."""
        error_type, message = fault_error(fault)
        status = fault.status or STATUS_FOR_TYPE.get(error_type, 500)
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
        return await self._send_error(writer, status, error_type, message, headers)

    async def _send_stream(
        self, writer: asyncio.StreamWriter, events: list[dict[str, Any]], *, finish: bool
    ) -> None:
        """Headers and events of a chunked SSE body; `finish` sends the last chunk."""
        writer.write(response_head(200, {**self._stream_headers(),
                                         "transfer-encoding": "chunked"}))
        for event in events:
            writer.write(chunk_bytes(self._stream_bytes(event)))
        if finish:
            writer.write(LAST_CHUNK)
        await writer.drain()

    async def _stream_fault(
        self, fault: Fault, body: dict[str, Any], writer: asyncio.StreamWriter, streaming: bool
    ) -> bool:
        """Cut, stall or error-event faults; False means the connection is dropped."""
        if not streaming:
            if fault.error_event:
                error_type = fault.error_type or "overloaded_error"
                return await self._send_fault(writer, Fault(error_type=error_type,
                                                            message=fault.message))
            await asyncio.sleep(fault.stall_seconds or 0)
            return False
        events = self._events(fault.turn or DEFAULT_CUT_TURN, body)[: fault.cut_after_events or 0]
        await self._send_stream(writer, events, finish=False)
        if fault.stall_seconds:
            await asyncio.sleep(fault.stall_seconds)
            return False
        if not fault.error_event:
            return False
        error_type, message = fault_error(fault, "overloaded_error")
        writer.write(chunk_bytes(self._stream_error_bytes(error_type, message)) + LAST_CHUNK)
        await writer.drain()
        return True
