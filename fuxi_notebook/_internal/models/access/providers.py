"""Where the model lives: the Anthropic API, Amazon Bedrock, Google Vertex AI or Microsoft
Foundry, chosen by environment (`FUXI_USE_BEDROCK`, `FUXI_USE_VERTEX`, `FUXI_USE_FOUNDRY`)
or by the Python API's option.

The one home for which provider a request goes to, how its client is made and where a
request's bytes are posted. The clients are the `anthropic` package's own
(`AsyncAnthropicBedrock`, `AsyncAnthropicVertex`, `AsyncAnthropicFoundry`): their signing
(SigV4), token refresh and stream decoding (AWS event-stream) are used as they are. The
loop posts pre-encoded bytes (`wire_body.py`), which the provider clients cannot rewrite
(they move `model` into the URL and add `anthropic_version` by editing a dict), so
`request_head` lets the client rewrite only the small top-level part of the body, the
model and flags, and the messages, system and tools are joined to it as bytes: the cost of
a turn stays what it is on the first-party API. `FUXI_SKIP_<PROVIDER>_AUTH=1` sends
requests unsigned, for a gateway that signs them itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ....errors import ConfigurationError
from ..pricing import FIRST_PARTY, Endpoint

__all__ = ["HEAVY_KEYS", "PROVIDERS", "Provider", "credential_hint", "current_provider",
           "has_credentials", "local_failure", "make_client", "model_problem",
           "refused_credentials", "request_head"]

#: provider name -> (the switch that chooses it, what it is called in one line)
PROVIDERS: dict[str, tuple[str, str]] = {
    "bedrock": ("FUXI_USE_BEDROCK", "Amazon Bedrock"),
    "vertex": ("FUXI_USE_VERTEX", "Google Vertex AI"),
    "foundry": ("FUXI_USE_FOUNDRY", "Microsoft Foundry"),
}
_TRUE = {"1", "true", "yes", "on"}
#: the top-level keys sent as encoded bytes, never through a provider client's rewrite
HEAVY_KEYS = ("messages", "system", "tools")


def _on(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in _TRUE


@dataclass(frozen=True)
class Provider:
    """A provider as configured: its name, whether requests go unsigned (a gateway signs
    them), its region and its endpoint (None: the client's default)."""

    name: str = "anthropic"
    skip_auth: bool = False
    region: str | None = None
    base_url: str | None = None
    project: str | None = None  # Vertex's project id

    @property
    def title(self) -> str:
        return PROVIDERS[self.name][1] if self.name in PROVIDERS else "the Anthropic API"

    def endpoint_for(self, model: str) -> Endpoint:
        """The endpoint `model` is served from here, for its price (`pricing.Endpoint`):
        Bedrock's global inference profiles and Vertex's `global` region cost what the
        Anthropic API does, their regional endpoints more, and what the table cannot
        price (Foundry, a Bedrock ARN) is unknown."""
        if self.name == "anthropic":
            return FIRST_PARTY
        if self.name == "bedrock":
            if model.startswith("arn:"):
                return Endpoint("bedrock", priced=False)
            return Endpoint("bedrock", regional=not model.startswith("global."))
        if self.name == "vertex":
            return Endpoint("vertex", regional=(self.region or "") != "global")
        return Endpoint(self.name, priced=False)

    def describe(self) -> str:
        """One line: which provider, region and endpoint a cell uses."""
        parts = [self.title]
        if self.region:
            parts.append(f"region {self.region}")
        if self.project:
            parts.append(f"project {self.project}")
        if self.base_url:
            parts.append(f"at {self.base_url}")
        if self.skip_auth:
            parts.append("unsigned (a gateway signs)")
        return ", ".join(parts)


def current_provider(name: str | None = None,
                     env: Mapping[str, str] | None = None) -> Provider:
    """The provider `name` names (the Python API's option), else the one the environment
    switches on; two switched on is one line."""
    env = os.environ if env is None else env
    if name is None:
        chosen = [key for key, (switch, _) in PROVIDERS.items() if _on(env, switch)]
        if len(chosen) > 1:
            raise ConfigurationError(
                "more than one provider is switched on ("
                + ", ".join(PROVIDERS[c][0] for c in chosen) + "): set only one")
        name = chosen[0] if chosen else "anthropic"
    if name != "anthropic" and name not in PROVIDERS:
        raise ConfigurationError(f"unknown provider {name!r}: one of anthropic, "
                                 + ", ".join(PROVIDERS))
    if name == "anthropic":
        return Provider(base_url=env.get("ANTHROPIC_BASE_URL") or None)
    skip = _on(env, f"FUXI_SKIP_{name.upper()}_AUTH")
    if name == "bedrock":
        return Provider(name, skip, env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
                        env.get("ANTHROPIC_BEDROCK_BASE_URL") or None)
    if name == "vertex":
        return Provider(name, skip, env.get("CLOUD_ML_REGION") or None,
                        env.get("ANTHROPIC_VERTEX_BASE_URL") or None,
                        env.get("ANTHROPIC_VERTEX_PROJECT_ID") or None)
    return Provider(name, skip, None, env.get("ANTHROPIC_FOUNDRY_BASE_URL") or (
        f"https://{env['ANTHROPIC_FOUNDRY_RESOURCE']}.services.ai.azure.com/anthropic/"
        if env.get("ANTHROPIC_FOUNDRY_RESOURCE") else None))


#: Bedrock's forms of a model id: a foundation model (`anthropic.claude-…`), an inference
#: profile (`us.anthropic.claude-…`, `global.anthropic.claude-…`), or an ARN
_BEDROCK_ID = re.compile(r"^(?:arn:aws[\w-]*:bedrock:\S+|(?:[a-z]{2,6}(?:-[a-z]+)?\.)?"
                         r"anthropic\.\S+)$")


def model_problem(provider: Provider, model: str) -> str | None:
    """Why `provider` could not serve a model of this name (one line), or None. Bedrock
    knows its models only by Bedrock's ids, which cannot be derived from the Anthropic
    id with certainty: the user names one."""
    if provider.name == "bedrock" and not _BEDROCK_ID.match(model):
        return (f"Amazon Bedrock has no model {model!r}: it names models by Bedrock ids; set "
                "FUXI_MODEL (or the model option) to the model's id or inference profile, "
                "in the form anthropic.claude-…, us.anthropic.claude-…, "
                "global.anthropic.claude-… or an ARN (the Bedrock console lists them)")
    if provider.name == "vertex" and model.startswith(("anthropic.", "arn:")):
        return (f"Google Vertex AI has no model {model!r}: that is a Bedrock id; set "
                "FUXI_MODEL to the model's Vertex name (claude-…, or claude-…@<version>)")
    return None


def has_credentials(env: Mapping[str, str] | None = None) -> bool:
    """Whether a live request could be sent: a provider switched on (its own credentials
    are its client's to find), or an Anthropic key or token."""
    env = os.environ if env is None else env
    return (any(_on(env, switch) for switch, _ in PROVIDERS.values())
            or bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")))


def credential_hint() -> str:
    """What would configure each provider, for the one line of a cell, a call or a chat
    that has no credential at all."""
    return ("set ANTHROPIC_API_KEY (the Anthropic API), or FUXI_USE_BEDROCK=1 "
            "with AWS_REGION and AWS credentials (Amazon Bedrock), or FUXI_USE_VERTEX=1 with "
            "CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID (Google Vertex AI), or "
            "FUXI_USE_FOUNDRY=1 with ANTHROPIC_FOUNDRY_RESOURCE and ANTHROPIC_FOUNDRY_API_KEY "
            "(Microsoft Foundry)")


def _missing(provider: Provider, what: str, variable: str) -> ConfigurationError:
    return ConfigurationError(f"{provider.title} needs {what}: set {variable}")


def make_client(provider: Provider, *, api_key: str | None, timeout: Any) -> Any:
    """The `anthropic` client for `provider` (retries are the loop's: max_retries 0)."""
    from ..anthropic_import import load_client, load_provider_client

    common: dict[str, Any] = {"max_retries": 0, "timeout": timeout}
    if provider.name == "anthropic":
        return load_client().AsyncAnthropic(api_key=api_key, base_url=provider.base_url,
                                            **common)
    cls = load_provider_client(provider.name)
    if provider.skip_auth:
        cls = _unsigned(cls)
    try:
        if provider.name == "bedrock":
            region = provider.region or ("us-east-1" if provider.skip_auth else None)
            if region is None:
                raise _missing(provider, "a region", "AWS_REGION")
            return cls(aws_region=region, base_url=provider.base_url, **common)
        if provider.name == "vertex":
            if not provider.region:
                raise _missing(provider, "a region", "CLOUD_ML_REGION (e.g. global)")
            if not provider.project:
                raise _missing(provider, "a project", "ANTHROPIC_VERTEX_PROJECT_ID")
            token = "unsigned" if provider.skip_auth else None
            return cls(region=provider.region, project_id=provider.project,
                       base_url=provider.base_url, access_token=token, **common)
        if provider.base_url is None:
            raise _missing(provider, "its resource", "ANTHROPIC_FOUNDRY_RESOURCE (or "
                           "ANTHROPIC_FOUNDRY_BASE_URL)")
        key = "unsigned" if provider.skip_auth else None
        return cls(base_url=provider.base_url, **({"api_key": key} if key else {}), **common)
    except ConfigurationError:
        raise
    except Exception as error:  # the client's own check of what it was given
        raise ConfigurationError(
            f"{provider.title}: {' '.join(str(error).split())}") from error


def _unsigned(cls: Any) -> Any:
    """`cls` without its request signing: a gateway in between signs (or holds the key)."""

    class Unsigned(cls):  # type: ignore[misc]
        async def _prepare_request(self, request: Any) -> None:
            for name in ("Authorization", "api-key", "x-api-key"):
                if name in request.headers and request.headers[name].endswith("unsigned"):
                    del request.headers[name]

    Unsigned.__name__ = f"Unsigned{cls.__name__}"
    return Unsigned


async def request_head(client: Any, provider: Provider, head: dict[str, Any],
                       headers: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """Where to post a Messages request and its top-level keys, as the provider's client
    rewrites them (the model into the URL, `anthropic_version`, `anthropic_beta` from the
    headers into the body). `head` is the body without `HEAVY_KEYS`."""
    if provider.name in ("anthropic", "foundry"):
        return "/v1/messages", head
    from anthropic._models import FinalRequestOptions

    options = FinalRequestOptions.construct(method="post", url="/v1/messages",
                                            json_data=dict(head), headers=dict(headers))
    prepared = await client._prepare_options(options)
    return str(prepared.url), dict(prepared.json_data)


#: what to refresh when a provider refuses its credentials (the one line's advice)
_REFRESH = {
    "anthropic": "check ANTHROPIC_API_KEY (or the apiKeyHelper setting)",
    "bedrock": "refresh the AWS credentials (`aws sso login`, a new AWS_SESSION_TOKEN, or "
               "AWS_PROFILE), or set FUXI_SKIP_BEDROCK_AUTH=1 behind a gateway that signs",
    "vertex": "refresh the Google credentials (`gcloud auth application-default login`, "
              "or a current service-account key in GOOGLE_APPLICATION_CREDENTIALS), or set "
              "FUXI_SKIP_VERTEX_AUTH=1 behind a gateway that signs",
    "foundry": "check ANTHROPIC_FOUNDRY_API_KEY (or the Azure sign-in), or set "
               "FUXI_SKIP_FOUNDRY_AUTH=1 behind a gateway that holds the key",
}
#: the extra a provider's client needs (its signing or sign-in library)
_EXTRAS = {"bedrock": ("boto3", "bedrock"), "vertex": ("google-auth", "vertex")}


def refused_credentials(provider: Provider, status: int, said: str) -> str | None:
    """The one line for a provider's 401/403 (an expired or wrong credential), naming
    what to refresh; None for any other status."""
    if status not in (401, 403):
        return None
    return (f"{provider.title} refused the credentials (HTTP {status}: "
            f"{' '.join(said.split())[:300]}): {_REFRESH[provider.name]}")


def local_failure(provider: Provider, error: BaseException) -> str | None:
    """The one line for a request that could not be made here: the provider's signing
    library missing, or no credentials found to sign with; None for anything else."""
    if provider.name == "anthropic":
        return None
    missing = isinstance(error, ImportError) or type(error).__name__ == "MissingDependencyError"
    if missing and provider.name in _EXTRAS:
        package, extra = _EXTRAS[provider.name]
        return (
            f"{provider.title} needs {package} to sign requests: pip install "
            f"'fuxi-notebook[{extra}]' (or set FUXI_SKIP_{provider.name.upper()}_AUTH=1 "
            "behind a gateway that signs)")
    names = {type(error).__name__ for error in (error, error.__cause__) if error is not None}
    module = type(error).__module__
    if (isinstance(error, RuntimeError) and "credential" in str(error).lower()) or \
            module.startswith(("google.auth", "botocore")) or \
            names & {"DefaultCredentialsError", "RefreshError", "NoCredentialsError"}:
        # google-auth's errors carry (message, the token endpoint's answer): the message
        said = error.args[0] if error.args and isinstance(error.args[0], str) else str(error)
        said = " ".join(said.split())[:300].rstrip(".")
        return f"{provider.title}: {said}: {_REFRESH[provider.name]}"
    return None
