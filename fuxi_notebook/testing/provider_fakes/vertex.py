"""A fake Google Vertex AI endpoint on 127.0.0.1, for `anthropic.AsyncAnthropicVertex`.

Vertex takes the model in the URL
(`/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:
streamRawPredict`, `:rawPredict`, and `.../models/count-tokens:rawPredict`), wants
`anthropic_version` in the body and refuses a `model` there, needs an OAuth access token
(`Authorization: Bearer`), and streams the Messages API's own SSE. Its own refusals
(credentials, project, quota, a model it does not serve, a body it will not pass on) come
in Google's error shape; what the model answers passes through as the Messages API's.

Google's sign-in runs against it too: `credentials_env(folder)` writes a service account's
key file (as the Cloud console gives one, a new RSA key) whose token endpoint is this
server's `/token`, so `google-auth`, which anthropic's Vertex client signs in with, sends
its signed JWT here and gets `access_token`. The endpoint checks the JWT as Google does
(RS256, signed by that key, issued by the account, for this audience, not expired); with
`expired`, it answers as Google answers a key that was deleted (`invalid_grant`).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

from ..._internal.models.script import Step
from .._http import HttpRequest
from ..fake_server import FakeMessagesServer, RecordedRequest, Rejection, Route
from ._common import SDK_API_VERSION, anthropic_name, version_problem, without_provider_keys

__all__ = ["SERVICE_ACCOUNT", "TEST_VERTEX_TOKEN", "VERTEX_VERSIONS", "FakeVertexServer"]

TEST_VERTEX_TOKEN = "ya29.fake-vertex-access-token"
#: the service account of the key file `credentials_env` writes
SERVICE_ACCOUNT = "fuxi-test@fake-project.iam.gserviceaccount.com"
TOKEN_PATH = "/token"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: the audience a service account's JWT names (Google's token endpoint, wherever it is sent)
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
VERTEX_VERSIONS = ("vertex-2023-10-16", SDK_API_VERSION)
_ROUTE = re.compile(r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/"
                    r"anthropic/models/(?P<model>[^/:]+):(?P<op>rawPredict|streamRawPredict)")
_UNAUTHENTICATED = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project.")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


class FakeVertexServer(FakeMessagesServer):
    """Vertex AI's Anthropic publisher endpoint over the fake's script; pass
    `server.base_url` (the root plus `/v1`) as the client's `base_url`.

    Requests must carry `Authorization: Bearer <access_token>` unless `skip_auth` (a
    gateway that authenticates for the client) and name this `project` and `region`.
    `expired = True` answers every token as Google answers an expired one (401).
    """

    message_id_prefix = "msg_vrtx"

    def __init__(
        self,
        steps: Sequence[Step] | None = None,
        *,
        project: str = "fake-project",
        region: str = "us-east5",
        access_token: str = TEST_VERTEX_TOKEN,
        skip_auth: bool = False,
        expired: bool = False,
        anthropic_versions: Collection[str] = VERTEX_VERSIONS,
        **options: Any,
    ) -> None:
        super().__init__(steps, **options)
        self.project = project
        self.region = region
        self.access_token = access_token
        #: what `/token` hands out (None: `access_token`; another value: a token the API
        #: then refuses, as for a credential of another project)
        self.issued_token: str | None = None
        self.skip_auth = skip_auth
        self.expired = expired
        self.anthropic_versions = tuple(anthropic_versions)

    @property
    def base_url(self) -> str:
        """The client's `base_url` (`ANTHROPIC_VERTEX_BASE_URL`): the API's `/v1` root."""
        return f"{self.url}/v1"

    def client_kwargs(self) -> dict[str, Any]:
        """Arguments for `anthropic.AsyncAnthropicVertex` that reach this fake."""
        return {"access_token": self.access_token, "project_id": self.project,
                "region": self.region, "base_url": self.base_url}

    def credentials_env(self, folder: Path) -> dict[str, str]:
        """`client_env()` plus `GOOGLE_APPLICATION_CREDENTIALS`: a service account's key
        file, written in `folder`, whose tokens come from this server."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._account_key = key.public_key()
        pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode("ascii")
        path = Path(folder) / "service-account.json"
        path.write_text(json.dumps({
            "type": "service_account", "project_id": self.project,
            "private_key_id": "fake-key-id", "private_key": pem,
            "client_email": SERVICE_ACCOUNT, "client_id": "1234567890",
            "token_uri": f"{self.url}{TOKEN_PATH}"}))
        return {**self.client_env(), "GOOGLE_APPLICATION_CREDENTIALS": str(path)}

    @property
    def token_requests(self) -> int:
        """How many times a token was asked for at `/token`."""
        return sum(1 for r in self.raw_requests if r.path.split("?")[0] == TOKEN_PATH)

    async def _dispatch(self, request: HttpRequest, writer: asyncio.StreamWriter) -> bool:
        if request.path.split("?", 1)[0] != TOKEN_PATH:
            return await super()._dispatch(request, writer)
        with self._lock:
            self._raw.append(RecordedRequest(request.method, request.path,
                                             dict(request.headers), request.body))
        form = parse_qs((request.body or b"").decode("utf-8", "replace"))
        problem = ("Invalid JWT Signature." if self.expired else
                   self._grant_problem(request.method, form))
        if problem is not None:
            return await self._send_rejection(writer, Rejection(400, {
                "error": "invalid_grant", "error_description": problem}, {}))
        return await self._send_json(writer, 200, {
            "access_token": self.issued_token or self.access_token, "expires_in": 3599,
            "token_type": "Bearer"})

    def _grant_problem(self, method: str, form: dict[str, list[str]]) -> str | None:
        """Why Google would refuse this JWT grant, or None."""
        import base64
        import time

        if method != "POST" or form.get("grant_type") != [JWT_GRANT]:
            return "Invalid grant_type."
        try:
            head, claims, signature = form["assertion"][0].split(".")
            pad = "=" * (-len(signature) % 4)
            header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
            payload = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
            signed = base64.urlsafe_b64decode(signature + pad)
        except (KeyError, ValueError):
            return "Invalid JWT."
        if header.get("alg") != "RS256" or not self._signed_by_account(
                f"{head}.{claims}".encode("ascii"), signed):
            return "Invalid JWT Signature."
        if payload.get("iss") != SERVICE_ACCOUNT or payload.get("aud") != GOOGLE_TOKEN_AUDIENCE:
            return "Invalid JWT: the issuer or audience is not this account's."
        if not payload.get("exp", 0) > time.time():
            return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe."
        return None

    def _signed_by_account(self, data: bytes, signature: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        key = getattr(self, "_account_key", None)
        if key is None:
            return False
        try:
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return False
        return True

    def client_env(self) -> dict[str, str]:
        """The environment with which anthropic's Vertex client reaches this fake (its
        access token is an argument, not a variable; fuxi's `FUXI_USE_VERTEX` is not
        included)."""
        return {"ANTHROPIC_VERTEX_BASE_URL": self.base_url,
                "ANTHROPIC_VERTEX_PROJECT_ID": self.project, "CLOUD_ML_REGION": self.region}

    # ----------------------------------------------------------------- requests

    def _route(self, method: str, path: str) -> Route | None:
        match = _ROUTE.fullmatch(path)
        if method != "POST" or match is None:
            return None
        model = unquote(match["model"])
        params = {"project": unquote(match["project"]), "region": unquote(match["region"]),
                  "model": model}
        if model == "count-tokens":
            return Route("count_tokens", params=params) if match["op"] == "rawPredict" else None
        return Route("messages", model=model, params=params)

    def _auth_problem(self, request: HttpRequest, route: Route) -> Rejection | None:
        if not self.skip_auth:
            authorization = request.headers.get("authorization", "")
            token = authorization.removeprefix("Bearer ")
            if (self.expired or token == authorization
                    or not hmac.compare_digest(token, self.access_token)):
                return self._google_error(401, _UNAUTHENTICATED)
        if route.params["project"] != self.project:
            return self._google_error(403, (
                "Permission 'aiplatform.endpoints.predict' denied on resource "
                f"'//aiplatform.googleapis.com/{self._resource(route)}' (or it may not "
                "exist)."))
        if route.params["region"] != self.region:
            return self._google_error(400, (
                f"Location {route.params['region']} does not match the endpoint's "
                f"location {self.region}."))
        return None

    def _body_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        if "model" in body:
            return self._google_error(400, "model: Extra inputs are not permitted")
        return self._version_refusal(body)

    def _version_refusal(self, body: dict[str, Any]) -> Rejection | None:
        problem = version_problem(body, self.anthropic_versions)
        if problem == "missing":
            return self._google_error(400, "anthropic_version: Field required")
        if problem == "invalid":
            allowed = " or ".join(repr(v) for v in self.anthropic_versions)
            return self._google_error(400, f"anthropic_version: Input should be {allowed}")
        return None

    def _messages_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        return {**without_provider_keys(body), "model": anthropic_name(route.model or "")}

    def _model_refusal(self, route: Route, message: str) -> Rejection:
        return self._google_error(404, (
            f"Publisher Model `{self._resource(route)}` was not found or your project does "
            "not have access to it. Please ensure you are using a valid model version."))

    def _count_problem(self, route: Route, body: dict[str, Any]) -> Rejection | None:
        if not isinstance(body.get("model"), str):  # count-tokens names the model in the body
            return self._google_error(400, "model: Field required")
        return self._version_refusal(body)

    def _counted_body(self, route: Route, body: dict[str, Any]) -> dict[str, Any]:
        return {**without_provider_keys(body), "model": anthropic_name(str(body["model"]))}

    # ----------------------------------------------------------------- responses

    def _resource(self, route: Route) -> str:
        params = route.params
        return (f"projects/{params['project']}/locations/{params['region']}/publishers/"
                f"anthropic/models/{params['model']}")

    def _google_error(self, status: int, message: str,
                      headers: dict[str, str] | None = None) -> Rejection:
        """Google's error shape: `{"error": {"code", "message", "status"}}`."""
        return Rejection(status, {"error": {
            "code": status, "message": message,
            "status": _STATUS_NAMES.get(status, "UNKNOWN")}}, dict(headers or {}))

    def _rejection(self, status: int, error_type: str, message: str,
                   headers: dict[str, str] | None = None) -> Rejection:
        """Quota (429) is Vertex's own refusal; the model's errors pass through."""
        if status == 429 or error_type == "rate_limit_error":
            return self._google_error(429, message, headers)
        return super()._rejection(status, error_type, message, headers)
