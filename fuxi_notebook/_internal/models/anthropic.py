"""AnthropicModel: the Messages API through the `anthropic` SDK's async streaming.

This is the ONLY module that uses `anthropic`, and it imports it lazily, on first use,
through `anthropic_import.load_client`: the client's own modules, without the SDK's type
index, which takes over a second to import and which the loop does not use. Errors are
translated into `ModelError` here, retries follow `RetryPolicy`, and one client is kept
per event loop so that warm processes do not pay client construction and connection
set-up on every query.
"""

from __future__ import annotations

import asyncio
import os
import time
import warnings
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any
from urllib.parse import urlparse

from ...errors import ConfigurationError, ModelError, ModelStreamError
from .accumulate import Accumulator
from .anthropic_import import load_client
from .base import Model, ModelRequest, ModelResponse, ModelStreamItem, RawEvent
from .names import model_name, printable_name
from .retry import RetryPolicy
from .wire_body import BodyEncoder

__all__ = ["AnthropicModel", "model_refusal", "resolve_model"]

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
#: Clients are bound to the event loop they were first used on (their connection pool is).
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], Any]] = (
    weakref.WeakKeyDictionary()
)


def _credentials(api_key: str | None) -> str:
    key = api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if not key:
        raise ConfigurationError(
            "No API key: set the ANTHROPIC_API_KEY environment variable "
            "(or pass a ScriptedModel as options.model for offline runs)."
        )
    return key


def _guard_real_api(base_url: str | None) -> None:
    """Refuse non-local endpoints when FUXI_BLOCK_REAL_API=1 (set by the test suite)."""
    if os.environ.get("FUXI_BLOCK_REAL_API") != "1":
        return
    host = urlparse(base_url or "https://api.anthropic.com").hostname
    if host not in _LOCAL_HOSTS:
        raise ConfigurationError(f"FUXI_BLOCK_REAL_API=1 forbids requests to {host!r}")


class AnthropicModel:
    """A `Model` backed by the Anthropic Messages API.

    Args:
        name: the model id used when a request names none.
        api_key: defaults to `ANTHROPIC_API_KEY` (then `ANTHROPIC_AUTH_TOKEN`).
        base_url: defaults to `ANTHROPIC_BASE_URL`, then the SDK's default.
        retry: the retry policy.
        client: an `anthropic.AsyncAnthropic` to use instead of the shared one.
    """

    def __init__(self, name: str, *, api_key: str | None = None, base_url: str | None = None,
                 retry: RetryPolicy | None = None, client: Any = None) -> None:
        self._name = name
        self._api_key = _credentials(api_key) if client is None else api_key
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.retry = retry or RetryPolicy()
        self._client = client
        self._encoder = BodyEncoder()  # the messages it has sent, encoded once

    @property
    def name(self) -> str:
        return self._name

    def client(self) -> Any:
        """The `AsyncAnthropic` client for the running loop (created once per loop)."""
        if self._client is not None:
            return self._client
        _guard_real_api(self._base_url)
        loop = asyncio.get_running_loop()
        per_loop = _CLIENTS.setdefault(loop, {})
        key = (self._api_key or "", self._base_url or "")
        if key not in per_loop:
            import httpx2

            sdk = load_client()
            timeout = httpx2.Timeout(self.retry.stall_timeout, connect=self.retry.connect_timeout)
            per_loop[key] = sdk.AsyncAnthropic(
                api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=timeout,
            )
        return per_loop[key]

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        """Stream one response, retrying failures that happen before any block completed."""
        started = time.monotonic()
        attempt = 0
        while True:
            acc = Accumulator()
            try:
                async for item in self._attempt(request, acc):
                    yield item
                yield self._finish(acc, started)
                return
            except ModelStreamError as error:
                if error.blocks_completed:  # never re-run a response whose blocks were shown
                    yield acc.response(api_duration_ms=_ms_since(started))
                    return
                if attempt >= self.retry.max_retries:
                    raise
                await asyncio.sleep(self.retry.delay(attempt))
                attempt += 1
            except ModelError as error:
                if not error.retryable or attempt >= self.retry.max_retries:
                    raise
                await asyncio.sleep(self.retry.delay(attempt, error.retry_after))
                attempt += 1

    def _finish(self, acc: Accumulator, started: float) -> ModelResponse:
        response = acc.response(api_duration_ms=_ms_since(started))
        if response.incomplete and not response.content:
            raise ModelStreamError("the response stream ended before any content arrived")
        return response

    async def _send(self, request: ModelRequest) -> Any:
        """Start the request's stream: the body as JSON bytes, encoded incrementally
        (wire_body.py), through the client's own request path (`post`: its headers,
        timeouts and error types), which sends bytes as they are instead of first
        copying the whole tree, as `messages.create` does with a dict. The events come
        back as the JSON the API sent (`AsyncStream[object]`: the client's own SSE
        decoding and `error`-event handling, without building a typed model of each
        event that the loop would turn back into a dict)."""
        client = self.client()
        sdk = load_client()
        body = {**request.to_wire(), "stream": True}
        _warn_deprecated(request.model)
        return await client.post(  # cast_to: what the SDK's tracing records the call as
            "/v1/messages", cast_to=sdk.Message, content=self._encoder.encode(body),
            options={"headers": {"Content-Type": "application/json"}}, stream=True,
            stream_cls=sdk.AsyncStream[object])

    async def _attempt(self, request: ModelRequest, acc: Accumulator) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        stall = self.retry.stall_timeout
        slack = stall / 100  # the events of one burst move the deadline once, not each
        try:
            async with asyncio.timeout(stall) as watchdog:
                deadline = loop.time() + stall
                stream = await self._send(request)
                async with stream:
                    async for event in stream:
                        if (now := loop.time()) + stall - deadline > slack:
                            deadline = now + stall
                            watchdog.reschedule(deadline)
                        yield RawEvent(event)
                        done = acc.feed(event)
                        if done is not None:
                            yield done
        except TimeoutError as exc:
            raise _broken(acc, f"the response stream stalled for {stall:g} s") from exc
        except Exception as exc:
            raise _translate(exc, acc) from exc


def _warn_deprecated(model: str) -> None:
    """The warning `messages.create` gives for a model the API is retiring (the client's
    own table; `post` does not look)."""
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:  # a client version without the table: our own warning stands
        return
    if model in DEPRECATED_MODELS:
        warnings.warn(f"The model '{model}' is deprecated and will reach end-of-life on "
                      f"{DEPRECATED_MODELS[model]}; choose a current model (FUXI_MODEL or "
                      "the `model` option).", DeprecationWarning, stacklevel=4)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _broken(acc: Accumulator, reason: str) -> ModelError:
    """A stream failure: retryable only while no block has completed."""
    completed = len(acc.completed)
    return ModelStreamError(reason, blocks_completed=completed, retryable=completed == 0)


def _translate(exc: Exception, acc: Accumulator) -> Exception:
    """Map SDK and transport exceptions to ModelError; leave programming errors alone."""
    import httpx2

    sdk = load_client()
    if isinstance(exc, sdk.APIStatusError):
        return _status_error(exc, acc)
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        if acc.started:
            return _broken(acc, f"the response stream broke: {exc}")
        return ModelError(f"could not reach the API: {exc}", retryable=True)
    return exc


def _status_error(exc: Any, acc: Accumulator) -> ModelError:
    """One line for the cell (the API's message; a model it does not have said so)."""
    status = exc.status_code
    headers = exc.response.headers if exc.response is not None else {}
    said = getattr(exc, "api_message", None)
    message = model_refusal(status, getattr(exc, "type", None), said) or (
        f"API error {status}: {' '.join(str(said or exc.message).split())}")
    if status == 200:  # an `error` event mid-stream
        return _broken(acc, f"the API sent an error event: {exc.message}")
    should = headers.get("x-should-retry")
    spend_limit = "SpendLimit" in type(exc).__name__ or "spend_limit" in str(exc.body)
    if spend_limit or should == "false":
        retryable = False
    elif should == "true":
        retryable = True
    else:
        retryable = status in (408, 409, 429) or status >= 500
    return ModelError(message, status=status, retryable=retryable,
                      retry_after=_retry_after(headers))


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                return None
    return None


def model_refusal(status: int, error_type: str | None, message: str | None) -> str | None:
    """The one line for the API's refusal of a model it does not have (a 404
    `not_found_error` whose message is `model: <id>`); None for any other error."""
    if status != 404 or error_type != "not_found_error" or not message:
        return None
    head, _, name = message.partition(":")
    name = name.strip()
    if head.strip() != "model" or not name:
        return None
    return (f"API error 404: the API has no model {printable_name(name)} "
            f"(not_found_error: {' '.join(message.split())})")


def resolve_model(spec: str | Model | None) -> Model:
    """The model for `options.model`: an instance as is, else an id (`model_name`) served
    by the Anthropic API."""
    if spec is not None and not isinstance(spec, str):
        return spec
    return AnthropicModel(model_name(spec))
