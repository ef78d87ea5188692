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
from .access.key_helper import KeyHelper
from .access.providers import (
    HEAVY_KEYS,
    Provider,
    credential_hint,
    current_provider,
    local_failure,
    make_client,
    model_problem,
    refused_credentials,
    request_head,
)
from .accumulate import Accumulator
from .anthropic_import import load_client
from .base import Model, ModelRequest, ModelResponse, ModelStreamItem, RawEvent
from .names import checked_client_app, model_name, printable_name
from .pricing import Endpoint
from .retry import RetryPolicy
from .wire_body import BodyEncoder

__all__ = ["AnthropicModel", "model_refusal", "resolve_model"]

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
#: the client's own key when an apiKeyHelper's is sent with each request instead
_HELPER_PLACEHOLDER = "from-apiKeyHelper"
#: Clients are bound to the event loop they were first used on (their connection pool is).
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ...], Any]] = (
    weakref.WeakKeyDictionary()
)


def _credentials(api_key: str | None) -> str:
    key = api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if not key:
        raise ConfigurationError(
            f"No API key: {credential_hint()} (or pass a ScriptedModel as options.model for "
            "offline runs).")
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
        client_app: the app built on this package (the `client_app` option), named in each
            request's User-Agent after the client's own (`client-app/<app>`).
        provider: "anthropic", "bedrock", "vertex" or "foundry" (a `Provider`, or None:
            the one the environment switches on, `access/providers.py`).
    """

    def __init__(self, name: str, *, api_key: str | None = None, base_url: str | None = None,
                 retry: RetryPolicy | None = None, client: Any = None,
                 provider: Provider | str | None = None,
                 key_helper: KeyHelper | None = None, client_app: str | None = None) -> None:
        self._name = name
        self.client_app = checked_client_app(client_app)
        self.provider = provider if isinstance(provider, Provider) else current_provider(
            provider)
        first_party = self.provider.name == "anthropic"
        # the comparable CLI's order: a key given or in the environment, then the helper
        given = api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get(
            "ANTHROPIC_AUTH_TOKEN")
        self.key_helper = key_helper if first_party and not given else None
        if client is None and first_party and self.key_helper is None:
            api_key = _credentials(api_key)
        self._api_key = _HELPER_PLACEHOLDER if self.key_helper is not None else api_key
        problem = model_problem(self.provider, name)
        if problem is not None:
            raise ConfigurationError(problem)
        self._base_url = base_url or self.provider.base_url
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
        key = (self.provider.name, self._api_key or "", self._base_url or "")
        if key not in per_loop:
            import dataclasses

            import httpx2

            timeout = httpx2.Timeout(self.retry.stall_timeout, connect=self.retry.connect_timeout)
            provider = dataclasses.replace(self.provider, base_url=self._base_url)
            per_loop[key] = make_client(provider, api_key=self._api_key, timeout=timeout)
        return per_loop[key]

    def renamed(self, name: str) -> AnthropicModel:
        """This model's endpoint, provider and key (or key helper) for another model id
        (`set_model`)."""
        import copy

        problem = model_problem(self.provider, name)
        if problem is not None:
            raise ConfigurationError(problem)
        twin = copy.copy(self)
        twin._name = name
        return twin

    @property
    def endpoint(self) -> Endpoint:
        """Where this model's responses are served, for their price."""
        return self.provider.endpoint_for(self._name)

    @property
    def key_source(self) -> str:
        """Where the key comes from, as the init message's `apiKeySource` says it."""
        if self.provider.name != "anthropic":
            return self.provider.name
        if self.key_helper is not None:
            return "apiKeyHelper"
        return "ANTHROPIC_API_KEY" if self._api_key or os.environ.get(
            "ANTHROPIC_API_KEY") else "none"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamItem, None]:
        """Stream one response, retrying failures that happen before any block completed.
        A key from the apiKeyHelper that the API refuses (401) is fetched again and the
        request sent once more with it (not counted as a retry)."""
        started = time.monotonic()
        attempt = 0
        refreshed = False
        while True:
            acc = Accumulator()
            key = await self._helper_key()
            try:
                async for item in self._attempt(request, acc, key):
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
                if key is not None and error.status == 401 and not acc.started:
                    await self._refresh_key(key, error, refreshed)
                    refreshed = True
                    continue
                if not error.retryable or attempt >= self.retry.max_retries:
                    raise
                await asyncio.sleep(self.retry.delay(attempt, error.retry_after))
                attempt += 1

    async def _helper_key(self, rejected: str | None = None) -> str | None:
        """The apiKeyHelper's key (None: no helper); run again when `rejected`. A helper
        that fails is the request's error (one line, not retried)."""
        if self.key_helper is None:
            return None
        try:
            if rejected is not None:
                return await self.key_helper.refresh(rejected=rejected)
            return await self.key_helper.key()
        except ConfigurationError as error:
            raise ModelError(str(error), retryable=False) from None

    async def _refresh_key(self, key: str, error: ModelError, refreshed: bool) -> None:
        """The API refused the helper's `key`: run the helper again, once a request."""
        assert self.key_helper is not None
        if refreshed:
            raise ModelError(
                f"the API refused the key of the apiKeyHelper of {self.key_helper.origin}, "
                f"also after running it again ({error}): check what the command prints",
                status=401, retryable=False) from error
        await self._helper_key(rejected=key)

    def _finish(self, acc: Accumulator, started: float) -> ModelResponse:
        response = acc.response(api_duration_ms=_ms_since(started))
        if response.incomplete and not response.content:
            raise ModelStreamError("the response stream ended before any content arrived")
        return response

    async def _send(self, request: ModelRequest, key: str | None = None) -> Any:
        """Start the request's stream: the body as JSON bytes, encoded incrementally
        (wire_body.py), through the client's own request path (`post`: its headers,
        timeouts and error types), which sends bytes as they are instead of first
        copying the whole tree, as `messages.create` does with a dict. The events come
        back as the JSON the API sent (`AsyncStream[object]`: the client's own SSE
        decoding and `error`-event handling, without building a typed model of each
        event that the loop would turn back into a dict). `key`: the apiKeyHelper's,
        sent as the comparable CLI sends it (`X-Api-Key` and `Authorization: Bearer`)."""
        client = self.client()
        sdk = load_client()
        body = {**request.to_wire(), "stream": True}
        _warn_deprecated(request.model)
        path = "/v1/messages"
        problem = model_problem(self.provider, request.model)  # e.g. a command's model
        if problem is not None:
            raise ModelError(problem, retryable=False)
        if self.provider.name != "anthropic":  # the provider's client places the model
            heavy = {key: body.pop(key) for key in HEAVY_KEYS if key in body}
            path, head = await request_head(client, self.provider, body, {})
            body = {**head, **heavy}
        headers = {"Content-Type": "application/json"}
        if self.client_app is not None:  # the app is named after the client's own agent
            headers["User-Agent"] = f"{client.user_agent} client-app/{self.client_app}"
        if key is not None:
            headers.update({"X-Api-Key": key, "Authorization": f"Bearer {key}"})
        return await client.post(  # cast_to: what the SDK's tracing records the call as
            path, cast_to=sdk.Message, content=self._encoder.encode(body),
            options={"headers": headers}, stream=True, stream_cls=sdk.AsyncStream[object])

    async def _attempt(self, request: ModelRequest, acc: Accumulator,
                       key: str | None) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        stall = self.retry.stall_timeout
        slack = stall / 100  # the events of one burst move the deadline once, not each
        try:
            async with asyncio.timeout(stall) as watchdog:
                deadline = loop.time() + stall
                stream = await self._send(request, key)
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
            raise _translate(exc, acc, self.provider) from exc


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


def _translate(exc: Exception, acc: Accumulator, provider: Provider) -> Exception:
    """Map SDK and transport exceptions to ModelError; leave programming errors alone."""
    import httpx2

    sdk = load_client()
    if isinstance(exc, sdk.APIStatusError):
        return _status_error(exc, acc, provider)
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        if acc.started:
            return _broken(acc, f"the response stream broke: {exc}")
        return ModelError(f"could not reach the API: {exc}", retryable=True)
    local = local_failure(provider, exc)  # no signing library, no credentials to sign with
    if local is not None:
        return ModelError(local, retryable=False)
    return exc


def _status_error(exc: Any, acc: Accumulator, provider: Provider) -> ModelError:
    """One line for the cell (the API's message; a model it does not have said so)."""
    status = exc.status_code
    headers = exc.response.headers if exc.response is not None else {}
    said = getattr(exc, "api_message", None)
    refused = None if provider.name == "anthropic" else refused_credentials(
        provider, status, str(said or exc.message))
    message = model_refusal(status, getattr(exc, "type", None), said) or refused or (
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
