"""A fake Amazon Bedrock runtime on 127.0.0.1, for `anthropic.AsyncAnthropicBedrock`.

Bedrock takes the model in the URL (`/model/{id}/invoke[-with-response-stream]`), wants
`anthropic_version` in the body and no `model` or `stream`, requires a SigV4 signature
over the exact body (or an API key as a Bearer token), streams AWS event-stream frames,
and answers errors as `{"message": ...}` with an `x-amzn-ErrorType` header. This fake does
all of that on top of `FakeMessagesServer`'s script, records and usage accounting, and
refuses what Bedrock refuses, so a client that signs the wrong bytes fails here too.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import re
import uuid
from collections.abc import Collection, Sequence
from typing import Any
from urllib.parse import unquote

from ..._internal.models.script import Step
from .._http import HttpRequest
from ..fake_server import FakeMessagesServer, Rejection, Route
from ._common import SDK_API_VERSION, anthropic_name, version_problem, without_provider_keys
from .aws_event_stream import chunk_frame, exception_frame
from .sigv4 import INVALID_TOKEN, AwsCredentials, verify_sigv4

__all__ = ["BEDROCK_VERSIONS", "TEST_AWS_CREDENTIALS", "FakeBedrockServer"]

#: AWS's documented example key pair: never a real account's
TEST_AWS_CREDENTIALS = AwsCredentials("AKIAIOSFODNN7EXAMPLE",
                                      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
BEDROCK_VERSIONS = ("bedrock-2023-05-31", SDK_API_VERSION)
_ROUTE = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>invoke|invoke-with-response-stream|"
                    r"count-tokens)")
#: the model ids Bedrock serves Claude under: a foundation model, an inference profile
#: (geographic or global prefix), or an ARN
_BEDROCK_ID = re.compile(r"(?:arn:aws[\w-]*:bedrock:\S+|(?:[a-z]{2,6}(?:-[a-z]+)?\.)?"
                         r"anthropic\.claude-\S+)")
_MALFORMED = "Malformed input request: {}, please reformat your input and try again."
#: what Bedrock answers a prompt over the model's window (no token counts in it)
_TOO_LONG = "The model returned the following errors: Input is too long for requested model."
#: a Messages API error type -> the AWS exception Bedrock answers with
_EXCEPTIONS = {
    "invalid_request_error": "ValidationException",
    "request_too_large": "ValidationException",
    "authentication_error": "AccessDeniedException",
    "permission_error": "AccessDeniedException",
    "not_found_error": "ResourceNotFoundException",
    "rate_limit_error": "ThrottlingException",
    "api_error": "InternalServerException",
    "overloaded_error": "ServiceUnavailableException",
}
#: statuses Bedrock does not use -> the one it uses instead
_STATUS = {413: 400, 401: 403, 529: 503}


class FakeBedrockServer(FakeMessagesServer):
    """Bedrock's runtime API over the fake's script; pass `server.url` as `base_url`.

    Auth, as Bedrock checks it: a SigV4 signature (service `bedrock`, this `region`) by
    one of `credentials`; or `Authorization: Bearer <bearer_token>` (an API key,
    `AWS_BEARER_TOKEN_BEDROCK`) when one is set; or nothing when `skip_auth` (a gateway
    that signs for the client). `expired = True` answers every credential with
    `ExpiredTokenException`, as AWS answers a session that has run out.
    """

    message_id_prefix = "msg_bdrk"

    def __init__(
        self,
        steps: Sequence[Step] | None = None,
        *,
        region: str = "us-east-1",
        credentials: Sequence[AwsCredentials] = (TEST_AWS_CREDENTIALS,),
        bearer_token: str | None = None,
        skip_auth: bool = False,
        expired: bool = False,
        anthropic_versions: Collection[str] = BEDROCK_VERSIONS,
        **options: Any,
    ) -> None:
        super().__init__(steps, **options)
        self.region = region
        self.credentials = {c.access_key: c for c in credentials}
        self.bearer_token = bearer_token
        self.skip_auth = skip_auth
        self.expired = expired
        self.anthropic_versions = tuple(anthropic_versions)

    def client_kwargs(self, *, bearer: bool = False) -> dict[str, Any]:
        """Arguments for `anthropic.AsyncAnthropicBedrock` that reach this fake."""
        if bearer:
            return {"api_key": self.bearer_token, "aws_region": self.region,
                    "base_url": self.url}
        first = next(iter(self.credentials.values()))
        kwargs: dict[str, Any] = {"aws_access_key": first.access_key,
                                  "aws_secret_key": first.secret_key,
                                  "aws_region": self.region, "base_url": self.url}
        if first.session_token is not None:
            kwargs["aws_session_token"] = first.session_token
        return kwargs

    def client_env(self, *, bearer: bool = False) -> dict[str, str]:
        """The environment with which anthropic's Bedrock client (and boto3) reach this
        fake; fuxi's own switch (`FUXI_USE_BEDROCK`) is not included."""
        env = {"ANTHROPIC_BEDROCK_BASE_URL": self.url, "AWS_REGION": self.region}
        if bearer and self.bearer_token is not None:
            return {**env, "AWS_BEARER_TOKEN_BEDROCK": self.bearer_token}
        first = next(iter(self.credentials.values()))
        env.update(AWS_ACCESS_KEY_ID=first.access_key, AWS_SECRET_ACCESS_KEY=first.secret_key)
        if first.session_token is not None:
            env["AWS_SESSION_TOKEN"] = first.session_token
        return env

    # ----------------------------------------------------------------- requests

    def _route(self, method: str, path: str) -> Route | None:
        match = _ROUTE.fullmatch(path)
        if method != "POST" or match is None:
            return None
        model, op = unquote(match["model"]), match["op"]
        if op == "count-tokens":
            return Route("count_tokens", model=model)
        return Route("messages", model=model, stream=op == "invoke-with-response-stream")

    def _auth_problem(self, request: HttpRequest, route: Route) -> Rejection | None:
        if self.skip_auth:
            return None
        authorization = request.headers.get("authorization", "")
        if authorization.startswith("Bearer "):
            token = authorization.removeprefix("Bearer ")
            if self.bearer_token is None or not hmac.compare_digest(token, self.bearer_token):
                return self._aws_error(403, "UnrecognizedClientException", INVALID_TOKEN)
            if self.expired:
                return self._aws_error(403, "ExpiredTokenException",
                                       "The security token included in the request is expired")
            return None
        problem = verify_sigv4(request.method, request.path, request.headers, request.body,
                               credentials=self.credentials, region=self.region,
                               service="bedrock", expired=self.expired)
        if problem is None:
            return None
        return self._aws_error(403, problem.error_type, problem.message)

    def _body_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        if not _BEDROCK_ID.fullmatch(route.model or ""):  # e.g. a first-party `claude-…` name
            return self._aws_error(400, "ValidationException",
                                   "The provided model identifier is invalid.")
        for key in ("model", "stream"):
            if key in body:
                return self._aws_error(400, "ValidationException", _MALFORMED.format(
                    f"#: extraneous key [{key}] is not permitted"))
        problem = version_problem(body, self.anthropic_versions)
        if problem == "missing":
            return self._aws_error(400, "ValidationException", _MALFORMED.format(
                "#: required key [anthropic_version] not found"))
        if problem == "invalid":
            return self._aws_error(400, "ValidationException", _MALFORMED.format(
                f"#/anthropic_version: {body['anthropic_version']!r} is not a valid enum value"))
        return None

    def _messages_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        return {**without_provider_keys(body), "model": anthropic_name(route.model or ""),
                "stream": bool(route.stream)}

    def _model_refusal(self, route: Route, message: str) -> Rejection:
        return self._aws_error(400, "ValidationException",
                               "The provided model identifier is invalid.")

    def _count_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        try:
            self._counted_body(route, body)
        except (KeyError, TypeError, ValueError, binascii.Error):
            return self._aws_error(400, "ValidationException",
                                   "input.invokeModel.body must be the base64 of a JSON "
                                   "InvokeModel body")
        return None

    def _counted_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        """CountTokens wraps the InvokeModel body: `{"input": {"invokeModel": {"body":
        <base64>}}}`."""
        raw = base64.b64decode(body["input"]["invokeModel"]["body"], validate=True)
        inner = json.loads(raw)
        if not isinstance(inner, dict):
            raise ValueError("the body is not a JSON object")
        return {**without_provider_keys(inner), "model": anthropic_name(route.model or "")}

    def _count_payload(self, tokens: int) -> Any:
        return {"inputTokens": tokens}

    # ----------------------------------------------------------------- responses

    def _aws_error(self, status: int, error_type: str, message: str,
                   headers: dict[str, str] | None = None) -> Rejection:
        """AWS's JSON error: `{"message": ...}` named by `x-amzn-ErrorType`."""
        return Rejection(status, {"message": message}, {
            "x-amzn-ErrorType": error_type, "x-amzn-RequestId": str(uuid.uuid4()),
            **(headers or {})})

    def _rejection(self, status: int, error_type: str, message: str,
                   headers: dict[str, str] | None = None) -> Rejection:
        if message.startswith("prompt is too long"):  # Bedrock's words, without the numbers
            message = _TOO_LONG
        return self._aws_error(_STATUS.get(status, status),
                               _EXCEPTIONS.get(error_type, "InternalServerException"), message,
                               headers)

    def _decorate_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`message_stop` carries `amazon-bedrock-invocationMetrics`, as on Bedrock."""
        usage = dict(events[0]["message"]["usage"])
        for event in events:
            if event["type"] == "message_delta":
                usage.update(event.get("usage") or {})
        metrics = {"inputTokenCount": usage.get("input_tokens", 0),
                   "outputTokenCount": usage.get("output_tokens", 0),
                   "invocationLatency": 1, "firstByteLatency": 1}
        return [{**event, "amazon-bedrock-invocationMetrics": metrics}
                if event["type"] == "message_stop" else event for event in events]

    def _stream_headers(self) -> dict[str, str]:
        return {"content-type": "application/vnd.amazon.eventstream",
                "x-amzn-bedrock-content-type": "application/json",
                "x-amzn-RequestId": str(uuid.uuid4())}

    def _stream_bytes(self, event: dict[str, Any]) -> bytes:
        return chunk_frame(event)

    def _stream_error_bytes(self, error_type: str, message: str) -> bytes:
        kind = _EXCEPTIONS.get(error_type, "ModelStreamErrorException")
        return exception_frame(kind[0].lower() + kind[1:], message)

    def _json_headers(self, payload: Any) -> dict[str, str]:
        headers = {"x-amzn-RequestId": str(uuid.uuid4()),
                   "x-amzn-bedrock-invocation-latency": "1"}
        usage = payload.get("usage") if isinstance(payload, dict) else None
        if isinstance(usage, dict):
            headers["x-amzn-bedrock-input-token-count"] = str(usage.get("input_tokens", 0))
            headers["x-amzn-bedrock-output-token-count"] = str(usage.get("output_tokens", 0))
        return headers
