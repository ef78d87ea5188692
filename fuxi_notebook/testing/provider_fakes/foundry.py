"""A fake Microsoft Foundry resource on 127.0.0.1, for `anthropic.AsyncAnthropicFoundry`.

Foundry serves the Messages API itself under the resource's `/anthropic/` base URL
(`https://{resource}.services.ai.azure.com/anthropic/v1/messages`), authenticated by the
resource key (`api-key` / `x-api-key`) or a Microsoft Entra ID token (`Authorization:
Bearer`). Azure refuses bad or expired credentials with 401 in its own error shape
(`{"error": {"code": "401", "message": ...}}`); everything else is the Messages API's.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Any

from ..._internal.models.script import Step
from .._http import HttpRequest
from ..fake_server import FakeMessagesServer, Rejection, Route

__all__ = ["TEST_FOUNDRY_KEY", "FakeFoundryServer"]

TEST_FOUNDRY_KEY = "fake-foundry-resource-key"
PREFIX = "/anthropic"
_BAD_KEY = ("Access denied due to invalid subscription key or wrong API endpoint. Make sure "
            "to provide a valid key for an active subscription and use a correct regional API "
            "endpoint for your resource.")
_BAD_TOKEN = ("Unauthorized. Access token is missing, invalid, audience is incorrect "
              "(https://cognitiveservices.azure.com), or have expired.")


class FakeFoundryServer(FakeMessagesServer):
    """A Foundry resource's Anthropic endpoint over the fake's script; pass
    `server.base_url` (the root plus `/anthropic/`) as the client's `base_url`.

    A request must carry `api_key` (as `api-key` or `x-api-key`) or, when `entra_token`
    is set, `Authorization: Bearer <entra_token>`; `skip_auth` accepts none (a gateway
    that authenticates for the client). `expired = True` refuses both with 401, as Azure
    refuses a rotated key or an expired token.
    """

    def __init__(
        self,
        steps: Sequence[Step] | None = None,
        *,
        api_key: str = TEST_FOUNDRY_KEY,
        entra_token: str | None = None,
        skip_auth: bool = False,
        expired: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(steps, **options)
        self.api_key = api_key
        self.entra_token = entra_token
        self.skip_auth = skip_auth
        self.expired = expired

    @property
    def base_url(self) -> str:
        """The client's `base_url` (`ANTHROPIC_FOUNDRY_BASE_URL`)."""
        return f"{self.url}{PREFIX}/"

    def client_kwargs(self, *, entra: bool = False) -> dict[str, Any]:
        """Arguments for `anthropic.AsyncAnthropicFoundry` that reach this fake."""
        if entra:
            token = self.entra_token or ""
            return {"azure_ad_token_provider": lambda: token, "base_url": self.base_url}
        return {"api_key": self.api_key, "base_url": self.base_url}

    def client_env(self) -> dict[str, str]:
        """The environment with which anthropic's Foundry client reaches this fake (fuxi's
        `FUXI_USE_FOUNDRY` is not included)."""
        return {"ANTHROPIC_FOUNDRY_BASE_URL": self.base_url,
                "ANTHROPIC_FOUNDRY_API_KEY": self.api_key}

    def _route(self, method: str, path: str) -> Route | None:
        if not path.startswith(f"{PREFIX}/"):
            return None
        return super()._route(method, path.removeprefix(PREFIX))

    def _auth_problem(self, request: HttpRequest, route: Route) -> Rejection | None:
        if self.skip_auth:
            return None
        headers = request.headers
        key = headers.get("api-key") or headers.get("x-api-key")
        if key is not None:
            if self.expired or not hmac.compare_digest(key, self.api_key):
                return self._azure_error(_BAD_KEY)
            return None
        authorization = headers.get("authorization", "")
        token = authorization.removeprefix("Bearer ")
        if (token == authorization or self.entra_token is None or self.expired
                or not hmac.compare_digest(token, self.entra_token)):
            return self._azure_error(_BAD_TOKEN)
        return None

    def _azure_error(self, message: str) -> Rejection:
        """Azure's 401: `{"error": {"code": "401", "message": ...}}`."""
        return Rejection(401, {"error": {"code": "401", "message": message}},
                         {"apim-request-id": self._next_id("apim")})
