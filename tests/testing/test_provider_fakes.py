"""The cloud providers' fakes (Bedrock, Vertex AI, Foundry), through the real provider
clients of `anthropic` 2.x: what each accepts is what the client sends, and what each
refuses is what the provider refuses, in the provider's own error shape."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import httpx2
import pytest

from fuxi_notebook.testing import (
    FakeBedrockServer,
    FakeFoundryServer,
    FakeMessagesServer,
    FakeVertexServer,
    Fault,
    Turn,
    text,
    thinking,
    tool_use,
)
from fuxi_notebook.testing.provider_fakes import (
    TEST_AWS_CREDENTIALS,
    AwsCredentials,
    FrameError,
    decode_frames,
    sign_headers,
    verify_sigv4,
)

HELLO = [{"role": "user", "content": "hello"}]
BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5-v1:0"
VERTEX_MODEL = "claude-sonnet-5-5@20260101"
FOUNDRY_MODEL = "claude-sonnet-5-5"
TOOLS = [{"name": "Read", "description": "read a file",
          "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}]
WRONG_SECRET = AwsCredentials(TEST_AWS_CREDENTIALS.access_key, "not-the-secret")


@asynccontextmanager
async def _bedrock(server: FakeBedrockServer, *, bearer: bool = False, **overrides: Any
                   ) -> AsyncIterator[anthropic.AsyncAnthropicBedrock]:
    kwargs = {**server.client_kwargs(bearer=bearer), "max_retries": 0, **overrides}
    async with anthropic.AsyncAnthropicBedrock(**kwargs) as client:
        yield client


class _UnsignedBedrock(anthropic.AsyncAnthropicBedrock):
    """Bedrock's client with signing left to a gateway, as under a skipped auth."""

    async def _prepare_request(self, request: httpx2.Request) -> None:
        return None


@pytest.fixture
def bedrock() -> Iterator[FakeBedrockServer]:
    with FakeBedrockServer(bearer_token="ABSKfake-bedrock-api-key") as running:
        yield running


@pytest.fixture
def vertex() -> Iterator[FakeVertexServer]:
    with FakeVertexServer() as running:
        yield running


@pytest.fixture
def foundry() -> Iterator[FakeFoundryServer]:
    with FakeFoundryServer(entra_token="fake-entra-token") as running:
        yield running


Provider = tuple[FakeMessagesServer, Any, str]


@pytest.fixture(params=["bedrock", "vertex", "foundry"])
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[Provider]:
    """Each fake with its real client and a model id in the provider's own form."""
    if request.param == "bedrock":
        with FakeBedrockServer() as server:
            async with _bedrock(server) as client:
                yield server, client, BEDROCK_MODEL
    elif request.param == "vertex":
        with FakeVertexServer() as server:
            async with anthropic.AsyncAnthropicVertex(max_retries=0,
                                                      **server.client_kwargs()) as client:
                yield server, client, VERTEX_MODEL
    else:
        with FakeFoundryServer() as server:
            async with anthropic.AsyncAnthropicFoundry(max_retries=0,
                                                       **server.client_kwargs()) as client:
                yield server, client, FOUNDRY_MODEL


async def _raw_post(url: str, body: bytes, headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient() as raw:
        return await raw.post(url, content=body, headers=headers)


def _signed(server: FakeBedrockServer, path: str, body: bytes,
            credentials: AwsCredentials = TEST_AWS_CREDENTIALS,
            now: dt.datetime | None = None) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    return {**headers, **sign_headers("POST", server.url + path, headers, body, credentials,
                                      region=server.region, service="bedrock", now=now)}


def _bedrock_body(**extra: Any) -> bytes:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 50, "messages": HELLO}
    return json.dumps({**body, **extra}).encode()


# ------------------------------------------------------------------ every provider


async def test_each_provider_streams_raw_events_with_a_tool_use(provider: Provider):
    server, client, model = provider
    server.add(Turn([text("Reading it."), tool_use("Read", {"file_path": "a.py"})]))
    stream = await client.messages.create(model=model, max_tokens=100, messages=HELLO,
                                          tools=TOOLS, stream=True)
    events = [event async for event in stream]
    assert [e.type for e in events][-2:] == ["message_delta", "message_stop"]
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert "".join(d.text for d in deltas if d.type == "text_delta") == "Reading it."
    arguments = "".join(d.partial_json for d in deltas if d.type == "input_json_delta")
    assert json.loads(arguments) == {"file_path": "a.py"}
    assert events[-2].delta.stop_reason == "tool_use"
    assert server.requests[0]["tools"] == TOOLS and server.errors == []


async def test_each_provider_runs_a_tool_round_trip_with_the_stream_helper(
        provider: Provider):
    server, client, model = provider
    server.add(Turn([thinking("Look first.", signature="sig-1"),
                     tool_use("Read", {"file_path": "b.py"}, id="toolu_B")]),
               Turn([text("It defines main().")]))
    async with client.messages.stream(model=model, max_tokens=100, messages=HELLO,
                                      tools=TOOLS) as stream:
        first = await stream.get_final_message()
    assert [b.type for b in first.content] == ["thinking", "tool_use"]
    assert first.content[1].input == {"file_path": "b.py"} and first.stop_reason == "tool_use"
    follow_up = [*HELLO, {"role": "assistant", "content": [b.model_dump() for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_B",
                                               "content": "def main(): ..."}]}]
    async with client.messages.stream(model=model, max_tokens=100, messages=follow_up,
                                      tools=TOOLS) as stream:
        second = await stream.get_final_message()
    assert second.content[0].text == "It defines main()." and second.stop_reason == "end_turn"
    assert server.requests[1]["messages"][2]["content"][0]["tool_use_id"] == "toolu_B"
    assert len(server.usage_log) == 2 and server.remaining == 0


async def test_the_provider_wire_moves_the_model_into_the_url(provider: Provider):
    server, client, model = provider
    server.add(Turn([text("ok")]))
    message = await client.messages.create(model=model, max_tokens=10, messages=HELLO)
    recorded = server.raw_requests[0]
    body = json.loads(recorded.body)
    assert body == server.requests[0]
    if isinstance(server, FakeBedrockServer):
        assert recorded.path == f"/model/{BEDROCK_MODEL}/invoke"
        assert "model" not in body and "stream" not in body and "anthropic_version" in body
        assert message.id.startswith("msg_bdrk_")
    elif isinstance(server, FakeVertexServer):
        assert recorded.path == (f"/v1/projects/{server.project}/locations/{server.region}/"
                                 f"publishers/anthropic/models/{VERTEX_MODEL}:rawPredict")
        assert "model" not in body and "anthropic_version" in body
        assert message.id.startswith("msg_vrtx_")
    else:
        assert recorded.path == "/anthropic/v1/messages" and body["model"] == FOUNDRY_MODEL
    assert message.model == "claude-sonnet-5-5" + ("-20260101" if "@" in model else "")


# ------------------------------------------------------------------ Bedrock: SigV4


async def test_bedrock_checks_the_signature_over_the_exact_body(bedrock):
    bedrock.add(Turn([text("signed")]))
    async with _bedrock(bedrock) as client:
        await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    sent = bedrock.raw_requests[0]
    authorization = sent.headers["authorization"]
    assert authorization.startswith(
        f"AWS4-HMAC-SHA256 Credential={TEST_AWS_CREDENTIALS.access_key}/")
    assert f"/{bedrock.region}/bedrock/aws4_request, SignedHeaders=" in authorization
    assert "host" in authorization.split("SignedHeaders=")[1].split(",")[0].split(";")

    def check(body: bytes, path: str = sent.path) -> str | None:
        problem = verify_sigv4("POST", path, sent.headers, body,
                               credentials={TEST_AWS_CREDENTIALS.access_key: TEST_AWS_CREDENTIALS},
                               region=bedrock.region, service="bedrock")
        return None if problem is None else problem.error_type

    assert check(sent.body) is None
    assert check(sent.body.replace(b"hello", b"hellO")) == "InvalidSignatureException"
    assert check(sent.body + b" ") == "InvalidSignatureException"
    assert check(sent.body, sent.path.replace("invoke", "invoke-with-response-stream")) == (
        "InvalidSignatureException")


async def test_bedrock_refuses_a_body_changed_after_signing(bedrock):
    body = _bedrock_body()
    headers = _signed(bedrock, f"/model/{BEDROCK_MODEL}/invoke", body)
    tampered = body.replace(b'"max_tokens": 50', b'"max_tokens": 99')
    response = await _raw_post(f"{bedrock.url}/model/{BEDROCK_MODEL}/invoke", tampered, headers)
    assert response.status_code == 403
    assert response.headers["x-amzn-ErrorType"] == "InvalidSignatureException"
    assert response.json()["message"].startswith("The request signature we calculated")
    assert bedrock.requests == [] and len(bedrock.raw_requests) == 1
    bedrock.add(Turn([text("fine")]))
    response = await _raw_post(f"{bedrock.url}/model/{BEDROCK_MODEL}/invoke", body, headers)
    assert response.status_code == 200 and response.json()["content"][0]["text"] == "fine"


@pytest.mark.parametrize(("credentials", "error_type", "message"), [
    (WRONG_SECRET, "InvalidSignatureException", "The request signature we calculated"),
    (AwsCredentials("AKIAUNKNOWNKEY000000", "x"), "UnrecognizedClientException",
     "The security token included in the request is invalid."),
])
async def test_bedrock_refuses_wrong_credentials_with_the_client_error(
        bedrock, credentials, error_type, message):
    async with _bedrock(bedrock, aws_access_key=credentials.access_key,
                        aws_secret_key=credentials.secret_key) as client:
        with pytest.raises(anthropic.PermissionDeniedError) as caught:
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.status_code == 403
    assert caught.value.response.headers["x-amzn-ErrorType"] == error_type
    assert caught.value.body == {"message": caught.value.body["message"]}
    assert caught.value.body["message"].startswith(message)
    assert bedrock.requests == [] and bedrock.remaining == 0


async def test_bedrock_answers_expired_credentials_as_aws_does(bedrock):
    bedrock.expired = True
    async with _bedrock(bedrock) as client:
        with pytest.raises(anthropic.PermissionDeniedError,
                           match="The security token included in the request is expired"):
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    async with _bedrock(bedrock, bearer=True) as client:
        with pytest.raises(anthropic.PermissionDeniedError) as caught:
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.response.headers["x-amzn-ErrorType"] == "ExpiredTokenException"
    bedrock.expired = False
    bedrock.add(Turn([text("refreshed")]))
    async with _bedrock(bedrock) as client:
        message = await client.messages.create(model=BEDROCK_MODEL, max_tokens=10,
                                               messages=HELLO)
    assert message.content[0].text == "refreshed"


async def test_bedrock_refuses_unsigned_requests_unless_auth_is_skipped(bedrock):
    kwargs = {**bedrock.client_kwargs(), "max_retries": 0}
    async with _UnsignedBedrock(**kwargs) as client:
        with pytest.raises(anthropic.PermissionDeniedError) as caught:
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
        assert caught.value.response.headers["x-amzn-ErrorType"] == (
            "MissingAuthenticationTokenException")
        bedrock.skip_auth = True
        bedrock.add(Turn([text("a gateway signed it")]))
        async with client.messages.stream(model=BEDROCK_MODEL, max_tokens=10,
                                          messages=HELLO) as stream:
            message = await stream.get_final_message()
    assert message.content[0].text == "a gateway signed it"
    assert "authorization" not in bedrock.request_headers[0]


async def test_bedrock_takes_an_api_key_as_a_bearer_token(bedrock):
    bedrock.add(Turn([text("keyed")]))
    async with _bedrock(bedrock, bearer=True) as client:
        stream = await client.messages.create(model=BEDROCK_MODEL, max_tokens=10,
                                              messages=HELLO, stream=True)
        events = [event async for event in stream]
    assert [e.delta.text for e in events if e.type == "content_block_delta"] == ["keyed"]
    assert bedrock.request_headers[0]["authorization"] == f"Bearer {bedrock.bearer_token}"
    async with _bedrock(bedrock, bearer=True, api_key="ABSKsomeone-else") as client:
        with pytest.raises(anthropic.PermissionDeniedError) as caught:
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.response.headers["x-amzn-ErrorType"] == "UnrecognizedClientException"


async def test_bedrock_refuses_a_signature_for_another_region_or_an_old_date(bedrock):
    async with _bedrock(bedrock, aws_region="eu-west-1") as client:
        with pytest.raises(anthropic.PermissionDeniedError,
                           match="Credential should be scoped to a valid region"):
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    body = _bedrock_body()
    stale = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    headers = _signed(bedrock, f"/model/{BEDROCK_MODEL}/invoke", body, now=stale)
    response = await _raw_post(f"{bedrock.url}/model/{BEDROCK_MODEL}/invoke", body, headers)
    assert response.status_code == 403 and response.json()["message"].startswith(
        "Signature expired:")


async def test_botocore_and_the_fake_sign_alike(bedrock, monkeypatch):
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    moment = dt.datetime.now(dt.UTC).replace(microsecond=0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime",
                        lambda: moment.replace(tzinfo=None))
    body = _bedrock_body()
    path = f"/model/{BEDROCK_MODEL}/invoke"
    request = AWSRequest(method="POST", url=bedrock.url + path, data=body,
                         headers={"content-type": "application/json"})
    botocore.auth.SigV4Auth(Credentials(TEST_AWS_CREDENTIALS.access_key,
                                        TEST_AWS_CREDENTIALS.secret_key),
                            "bedrock", bedrock.region).add_auth(request)
    theirs = dict(request.prepare().headers)
    ours = _signed(bedrock, path, body, now=moment)
    assert theirs["Authorization"] == ours["authorization"]
    assert theirs["X-Amz-Date"] == ours["x-amz-date"]
    bedrock.add(Turn([text("one")]), Turn([text("two")]))
    for headers in (theirs, ours):
        response = await _raw_post(bedrock.url + path, body, headers)
        assert response.status_code == 200, response.text


# ------------------------------------------------------------------ Bedrock: wire


@pytest.mark.parametrize(("extra", "drop", "expected"), [
    ({"model": BEDROCK_MODEL}, None, "#: extraneous key [model] is not permitted"),
    ({"stream": True}, None, "#: extraneous key [stream] is not permitted"),
    ({}, "anthropic_version", "#: required key [anthropic_version] not found"),
    ({"anthropic_version": "2020-01-01"}, None, "is not a valid enum value"),
])
async def test_bedrock_refuses_what_its_body_schema_refuses(bedrock, extra, drop, expected):
    payload = json.loads(_bedrock_body(**extra))
    payload.pop(drop, None)
    body = json.dumps(payload).encode()
    path = f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    response = await _raw_post(bedrock.url + path, body, _signed(bedrock, path, body))
    assert response.status_code == 400
    assert response.headers["x-amzn-ErrorType"] == "ValidationException"
    message = response.json()["message"]
    assert list(response.json()) == ["message"] and expected in message
    assert message.startswith("Malformed input request: ")
    assert bedrock.usage_log == [] and "rejected request" in bedrock.errors[0]


async def test_bedrock_streams_crc_checked_event_stream_frames(bedrock):
    bedrock.add(Turn([text("framed")]))
    body = _bedrock_body()
    path = f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"
    response = await _raw_post(bedrock.url + path, body, _signed(bedrock, path, body))
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    frames = decode_frames(response.content)
    assert {json.dumps(h, sort_keys=True) for h, _ in frames} == {json.dumps(
        {":content-type": "application/json", ":event-type": "chunk",
         ":message-type": "event"}, sort_keys=True)}
    events = [json.loads(base64.b64decode(json.loads(p)["bytes"])) for _, p in frames]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    metrics = events[-1]["amazon-bedrock-invocationMetrics"]
    assert metrics["outputTokenCount"] == bedrock.usage_log[0]["output_tokens"]
    corrupted = bytearray(response.content)
    corrupted[20] ^= 0xFF
    with pytest.raises(FrameError, match="CRC"):
        decode_frames(bytes(corrupted))


async def test_bedrock_non_streaming_invoke_reports_token_headers(bedrock):
    bedrock.add(Turn([text("plain")], usage={"output_tokens": 12}))
    async with _bedrock(bedrock) as client:
        raw = await client.messages.with_raw_response.create(
            model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    message = await raw.parse()
    assert message.content[0].text == "plain"
    assert raw.headers["x-amzn-bedrock-output-token-count"] == "12"
    assert raw.headers["x-amzn-bedrock-input-token-count"] == str(message.usage.input_tokens)


async def test_bedrock_errors_use_aws_shapes_and_retries_sign_again(bedrock):
    bedrock.add(Fault(status=529, retry_after=0.01), Turn([text("after a retry")]))
    async with _bedrock(bedrock, max_retries=1) as client:
        message = await client.messages.create(model=BEDROCK_MODEL, max_tokens=10,
                                               messages=HELLO)
    assert message.content[0].text == "after a retry"
    first, second = bedrock.raw_requests
    assert first.headers["x-stainless-retry-count"] == "0"
    assert second.headers["x-stainless-retry-count"] == "1"
    assert first.headers["authorization"] != second.headers["authorization"]
    bedrock.add(Fault(status=429, message="Too many requests, please wait."))
    async with _bedrock(bedrock) as client:
        with pytest.raises(anthropic.RateLimitError) as caught:
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.response.headers["x-amzn-ErrorType"] == "ThrottlingException"
    assert caught.value.body == {"message": "Too many requests, please wait."}


async def test_bedrock_mid_stream_exception_reaches_the_client(bedrock):
    bedrock.add(Fault(cut_after_events=3, error_event=True, error_type="rate_limit_error",
                      message="Too many tokens, please wait before trying again."))
    async with _bedrock(bedrock) as client:
        stream = await client.messages.create(model=BEDROCK_MODEL, max_tokens=10,
                                              messages=HELLO, stream=True)
        seen: list[str] = []
        with pytest.raises(anthropic.APIStatusError, match="Too many tokens") as caught:
            async for event in stream:
                seen.append(event.type)
    assert seen[0] == "message_start" and len(seen) == 3
    assert caught.value.body["error"]["type"] == "throttlingException"


async def test_bedrock_prompt_cache_and_unknown_models(bedrock):
    system = [{"type": "text", "text": "You are terse. " * 200,
               "cache_control": {"type": "ephemeral"}}]
    bedrock.add(Turn([text("one")]), Turn([text("two")]))
    async with _bedrock(bedrock) as client:
        for _ in range(2):
            await client.messages.create(model=BEDROCK_MODEL, max_tokens=10, messages=HELLO,
                                         system=system)
        first, second = bedrock.usage_log
        assert first["cache_creation_input_tokens"] > 0
        assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
        bedrock.reject_unknown_models = True
        with pytest.raises(anthropic.BadRequestError,
                           match=r"The provided model identifier is invalid\."):
            await client.messages.create(model="anthropic.claude-nonesuch-v1:0",
                                         max_tokens=10, messages=HELLO)


async def test_bedrock_counts_tokens_of_a_wrapped_invoke_body(bedrock):
    inner = _bedrock_body()
    body = json.dumps({"input": {"invokeModel": {
        "body": base64.b64encode(inner).decode()}}}).encode()
    path = f"/model/{BEDROCK_MODEL}/count-tokens"
    response = await _raw_post(bedrock.url + path, body, _signed(bedrock, path, body))
    assert response.status_code == 200 and response.json()["inputTokens"] > 0
    bad = b'{"input": {}}'
    response = await _raw_post(bedrock.url + path, bad, _signed(bedrock, path, bad))
    assert response.status_code == 400
    assert response.headers["x-amzn-ErrorType"] == "ValidationException"


# ------------------------------------------------------------------ Vertex


async def test_vertex_refuses_a_model_in_the_body_and_a_bad_version(vertex):
    path = (f"{vertex.base_url}/projects/{vertex.project}/locations/{vertex.region}/"
            f"publishers/anthropic/models/{VERTEX_MODEL}:streamRawPredict")
    auth = {"authorization": f"Bearer {vertex.access_token}"}
    base = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 10, "messages": HELLO,
            "stream": True}
    for body, message in (({**base, "model": VERTEX_MODEL},
                           "model: Extra inputs are not permitted"),
                          ({**base, "anthropic_version": "bedrock-2023-05-31"},
                           "anthropic_version: Input should be"),
                          ({k: v for k, v in base.items() if k != "anthropic_version"},
                           "anthropic_version: Field required")):
        response = await _raw_post(path, json.dumps(body).encode(), auth)
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
        assert error["message"].startswith(message)
    vertex.add(Turn([text("accepted")]))
    response = await _raw_post(path, json.dumps(base).encode(), auth)
    assert response.status_code == 200 and "event: message_start" in response.text


async def test_vertex_needs_a_valid_unexpired_token_for_its_project(vertex):
    kwargs = {**vertex.client_kwargs(), "max_retries": 0}
    async with anthropic.AsyncAnthropicVertex(**{**kwargs, "access_token": "ya29.other"}) as c:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            await c.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.body["error"]["status"] == "UNAUTHENTICATED"
    vertex.expired = True
    async with anthropic.AsyncAnthropicVertex(**kwargs) as client:
        with pytest.raises(anthropic.AuthenticationError,
                           match="invalid authentication credentials"):
            await client.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=HELLO)
    vertex.expired = False
    async with anthropic.AsyncAnthropicVertex(**{**kwargs, "project_id": "elsewhere"}) as c:
        with pytest.raises(anthropic.PermissionDeniedError, match=r"aiplatform\.endpoints"):
            await c.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=HELLO)
    assert vertex.requests == []


async def test_vertex_skipped_auth_accepts_a_request_without_a_token(vertex):
    path = (f"{vertex.base_url}/projects/{vertex.project}/locations/{vertex.region}/"
            f"publishers/anthropic/models/{VERTEX_MODEL}:rawPredict")
    body = json.dumps({"anthropic_version": "vertex-2023-10-16", "max_tokens": 10,
                       "messages": HELLO}).encode()
    response = await _raw_post(path, body, {})
    assert response.status_code == 401
    vertex.skip_auth = True
    vertex.add(Turn([text("through the gateway")]))
    response = await _raw_post(path, body, {})
    assert response.json()["content"][0]["text"] == "through the gateway"


async def test_vertex_counts_tokens_and_shapes_quota_errors(vertex):
    async with anthropic.AsyncAnthropicVertex(max_retries=0, **vertex.client_kwargs()) as c:
        counted = await c.messages.count_tokens(model=VERTEX_MODEL, messages=HELLO)
        assert counted.input_tokens > 0
        assert vertex.count_token_requests[0]["model"] == VERTEX_MODEL
        assert vertex.raw_requests[0].path.endswith("/models/count-tokens:rawPredict")
        vertex.add(Fault(status=429, message="Quota exceeded for aiplatform.googleapis.com"),
                   Fault(status=529))
        with pytest.raises(anthropic.RateLimitError) as limited:
            await c.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=HELLO)
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            await c.messages.create(model=VERTEX_MODEL, max_tokens=10, messages=HELLO)
    assert limited.value.body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert overloaded.value.status_code == 529
    assert overloaded.value.body["error"]["type"] == "overloaded_error"


# ------------------------------------------------------------------ Foundry


async def test_foundry_authenticates_by_key_or_entra_token(foundry):
    foundry.add(Turn([text("by key")]), Turn([text("by token")]))
    async with anthropic.AsyncAnthropicFoundry(max_retries=0, **foundry.client_kwargs()) as c:
        assert (await c.messages.create(model=FOUNDRY_MODEL, max_tokens=10,
                                        messages=HELLO)).content[0].text == "by key"
    async with (
        anthropic.AsyncAnthropicFoundry(max_retries=0, **foundry.client_kwargs(entra=True)) as c,
        c.messages.stream(model=FOUNDRY_MODEL, max_tokens=10, messages=HELLO) as stream,
    ):
        assert (await stream.get_final_message()).content[0].text == "by token"
    by_key, by_token = foundry.request_headers
    assert by_key["api-key"] == foundry.api_key and "authorization" not in by_key
    assert by_token["authorization"] == "Bearer fake-entra-token" and "api-key" not in by_token


@pytest.mark.parametrize("client_kwargs", [
    lambda s: {"api_key": "wrong-key", "base_url": s.base_url},
    lambda s: {"azure_ad_token_provider": lambda: "wrong-token", "base_url": s.base_url},
])
async def test_foundry_refuses_bad_credentials_with_azure_401(
        foundry, client_kwargs: Callable[[FakeFoundryServer], dict[str, Any]]):
    async with anthropic.AsyncAnthropicFoundry(max_retries=0, **client_kwargs(foundry)) as c:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            await c.messages.create(model=FOUNDRY_MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.body["error"]["code"] == "401"
    assert foundry.requests == []


async def test_foundry_expired_credentials_and_skipped_auth(foundry):
    foundry.expired = True
    async with anthropic.AsyncAnthropicFoundry(max_retries=0, **foundry.client_kwargs()) as c:
        with pytest.raises(anthropic.AuthenticationError, match="invalid subscription key"):
            await c.messages.create(model=FOUNDRY_MODEL, max_tokens=10, messages=HELLO)
    async with anthropic.AsyncAnthropicFoundry(max_retries=0,
                                               **foundry.client_kwargs(entra=True)) as c:
        with pytest.raises(anthropic.AuthenticationError, match="have expired"):
            await c.messages.create(model=FOUNDRY_MODEL, max_tokens=10, messages=HELLO)
    body = json.dumps({"model": FOUNDRY_MODEL, "max_tokens": 10, "messages": HELLO}).encode()
    assert (await _raw_post(f"{foundry.base_url}v1/messages", body, {})).status_code == 401
    foundry.skip_auth = True
    foundry.add(Turn([text("gateway")]))
    response = await _raw_post(f"{foundry.base_url}v1/messages", body, {})
    assert response.json()["content"][0]["text"] == "gateway"
    assert (await _raw_post(f"{foundry.url}/v1/messages", body, {})).status_code == 404


# ------------------------------------------------------------------ environment


def test_client_env_names_what_anthropic_clients_read(bedrock, vertex, foundry, monkeypatch):
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for env in (bedrock.client_env(), vertex.client_env(), foundry.client_env()):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
    assert str(anthropic.AsyncAnthropicBedrock().base_url).rstrip("/") == bedrock.url
    vertex_client = anthropic.AsyncAnthropicVertex(access_token=vertex.access_token)
    assert (vertex_client.project_id, vertex_client.region) == (vertex.project, vertex.region)
    assert str(vertex_client.base_url).rstrip("/") == vertex.base_url
    assert anthropic.AsyncAnthropicFoundry().api_key == foundry.api_key
    assert bedrock.client_env(bearer=True)["AWS_BEARER_TOKEN_BEDROCK"] == bedrock.bearer_token
