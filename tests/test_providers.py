"""Which provider a request goes to, and how its client places the request (issue 38):
`fuxi_notebook._internal.models.access.providers.py`, with the `anthropic` package's own provider
clients. The requests themselves, against fakes of each provider's wire, are in
tests/agent/test_provider_requests.py."""

from __future__ import annotations

import asyncio

import pytest
from anthropic._constants import ANTHROPIC_API_VERSION  # what the provider clients send

from fuxi_notebook._internal.context.windows import context_window
from fuxi_notebook._internal.models.access.providers import (
    Provider,
    current_provider,
    has_credentials,
    make_client,
    request_head,
)
from fuxi_notebook._internal.models.names import base_model_id
from fuxi_notebook._internal.models.pricing import price_for
from fuxi_notebook.errors import ConfigurationError

TIMEOUT = 30.0


def test_no_switch_is_the_anthropic_api():
    assert current_provider(env={}).name == "anthropic"
    assert current_provider(env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}).base_url == \
        "http://127.0.0.1:9"


@pytest.mark.parametrize(("env", "expected"), [
    ({"FUXI_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1"},
     Provider("bedrock", False, "eu-west-1", None)),
    ({"FUXI_USE_BEDROCK": "true", "AWS_DEFAULT_REGION": "us-east-2",
      "FUXI_SKIP_BEDROCK_AUTH": "1", "ANTHROPIC_BEDROCK_BASE_URL": "https://gw.example"},
     Provider("bedrock", True, "us-east-2", "https://gw.example")),
    ({"FUXI_USE_VERTEX": "1", "CLOUD_ML_REGION": "global",
      "ANTHROPIC_VERTEX_PROJECT_ID": "team-ml"},
     Provider("vertex", False, "global", None, "team-ml")),
    ({"FUXI_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "acme"},
     Provider("foundry", False, None, "https://acme.services.ai.azure.com/anthropic/")),
    ({"FUXI_USE_BEDROCK": "0", "ANTHROPIC_API_KEY": "k"}, Provider()),
])
def test_the_environment_chooses_the_provider(env, expected):
    assert current_provider(env=env) == expected


def test_two_providers_switched_on_is_one_line():
    with pytest.raises(ConfigurationError, match=r"^more than one provider is switched on "
                                                 r"\(FUXI_USE_BEDROCK, FUXI_USE_VERTEX\)"):
        current_provider(env={"FUXI_USE_BEDROCK": "1", "FUXI_USE_VERTEX": "1"})
    with pytest.raises(ConfigurationError, match="unknown provider 'azure'"):
        current_provider("azure", env={})


def test_describe_says_provider_region_and_endpoint():
    assert Provider("bedrock", True, "eu-west-1", "https://gw").describe() == (
        "Amazon Bedrock, region eu-west-1, at https://gw, unsigned (a gateway signs)")
    assert Provider("vertex", False, "global", None, "p").describe() == (
        "Google Vertex AI, region global, project p")
    assert Provider().describe() == "the Anthropic API"


def test_credentials_are_a_key_or_a_provider():
    assert not has_credentials({})
    assert has_credentials({"ANTHROPIC_AUTH_TOKEN": "t"})
    assert has_credentials({"FUXI_USE_VERTEX": "yes"})


@pytest.mark.parametrize(("provider", "says"), [
    (Provider("bedrock"), "Amazon Bedrock needs a region: set AWS_REGION"),
    (Provider("vertex", region="global"),
     "Google Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID"),
    (Provider("vertex", project="p"), "Google Vertex AI needs a region: set CLOUD_ML_REGION"),
    (Provider("foundry"), "Microsoft Foundry needs its resource: set "
                          "ANTHROPIC_FOUNDRY_RESOURCE"),
])
def test_what_a_provider_lacks_is_one_line(provider, says, monkeypatch):
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "ANTHROPIC_FOUNDRY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError) as raised:
        make_client(provider, api_key=None, timeout=TIMEOUT)
    assert str(raised.value).startswith(says) and "\n" not in str(raised.value)


def test_a_foundry_client_without_its_key_is_one_line(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_FOUNDRY_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match=r"^Microsoft Foundry: Missing credentials"):
        make_client(Provider("foundry", base_url="http://127.0.0.1:9/anthropic/"),
                    api_key=None, timeout=TIMEOUT)


def _head(provider: Provider, model: str, headers: dict[str, str] | None = None):
    client = make_client(provider, api_key=None, timeout=TIMEOUT)
    head = {"model": model, "max_tokens": 64, "stream": True}
    return asyncio.run(request_head(client, provider, head, headers or {}))


def test_bedrock_moves_the_model_into_the_url_and_the_version_into_the_body():
    path, head = _head(Provider("bedrock", True, "us-east-1", "http://127.0.0.1:9"),
                       "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                       {"anthropic-beta": "a-2026, b-2026"})
    assert path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/" \
                   "invoke-with-response-stream"
    assert head == {"max_tokens": 64, "anthropic_version": ANTHROPIC_API_VERSION,
                    "anthropic_beta": ["a-2026", "b-2026"]}


def test_vertex_moves_the_model_into_the_url_and_keeps_stream():
    path, head = _head(Provider("vertex", True, "global", "http://127.0.0.1:9", "team"),
                       "claude-sonnet-4-5@20250929")
    assert path == ("/projects/team/locations/global/publishers/anthropic/models/"
                    "claude-sonnet-4-5@20250929:streamRawPredict")
    assert head == {"max_tokens": 64, "stream": True, "anthropic_version": ANTHROPIC_API_VERSION}


@pytest.mark.parametrize(("provider_id", "anthropic_id"), [
    ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"),
    ("global.anthropic.claude-sonnet-5-5-v1:0", "claude-sonnet-5-5"),
    ("arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
     "eu.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1-20250805"),
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929"),  # the tables read '@'
    ("anthropic.titan-text-express-v1", "anthropic.titan-text-express-v1"),
])
def test_provider_model_ids_are_priced_and_sized_as_their_anthropic_ids(provider_id,
                                                                         anthropic_id):
    assert base_model_id(provider_id) == anthropic_id
    assert price_for(provider_id) == price_for(anthropic_id)
    assert context_window(provider_id) == context_window(anthropic_id)
    if "claude" in anthropic_id:
        assert price_for(provider_id) is not None


def _scaled(price, factor):
    return tuple(round(v * factor, 6) for v in (price.input, price.write_5m, price.write_1h,
                                                price.read, price.output))


@pytest.mark.parametrize(("provider", "model", "factor"), [
    (Provider(), "claude-sonnet-5-5", 1.0),
    (Provider("bedrock", region="us-east-1"), "global.anthropic.claude-sonnet-5-5-v1:0", 1.0),
    (Provider("bedrock", region="us-east-1"), "us.anthropic.claude-sonnet-5-5-v1:0", 1.1),
    (Provider("bedrock", region="eu-west-1"), "anthropic.claude-haiku-4-5-20251001-v1:0", 1.1),
    # released before the regional premium: one price everywhere
    (Provider("bedrock", region="us-east-1"), "us.anthropic.claude-opus-4-1-20250805-v1:0",
     1.0),
    (Provider("bedrock", region="us-east-1"),
     "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", None),
    (Provider("vertex", region="global", project="p"), "claude-sonnet-5-5", 1.0),
    (Provider("vertex", region="us-east5", project="p"), "claude-sonnet-5-5", 1.1),
    (Provider("vertex", region="us-east5", project="p"), "claude-sonnet-4@20250514", 1.0),
    (Provider("foundry", base_url="https://r.services.ai.azure.com/anthropic/"),
     "claude-sonnet-5-5", None),
])
def test_a_provider_endpoint_is_priced_as_it_bills_or_unknown(provider, model, factor):
    """The table's prices are the Anthropic API's and the global endpoints'; a regional
    endpoint adds 10 % from Sonnet 4.5 and Haiku 4.5 on; what cannot be priced is None."""
    from fuxi_notebook._internal.models.pricing import FIRST_PARTY, cost_usd

    endpoint = provider.endpoint_for(model)
    answered_as = base_model_id(model).partition("@")[0]  # the id the response names
    price = price_for(answered_as, endpoint=endpoint)
    usage = {"input_tokens": 1000, "output_tokens": 100}
    if factor is None:
        assert price is None and cost_usd(answered_as, usage, endpoint) is None
        return
    base = price_for(answered_as, endpoint=FIRST_PARTY)
    assert base is not None and price is not None
    assert _scaled(price, 1) == _scaled(base, factor)
    first_party_cost = cost_usd(answered_as, usage, FIRST_PARTY)
    assert cost_usd(answered_as, usage, endpoint) == pytest.approx(first_party_cost * factor)


def test_a_budget_on_an_endpoint_without_a_price_is_one_line():
    from fuxi_notebook._internal.models.pricing import check_budget

    foundry = Provider("foundry", base_url="https://r.services.ai.azure.com/anthropic/")
    with pytest.raises(ConfigurationError, match="on foundry's endpoint") as raised:
        check_budget(1.0, "claude-sonnet-5-5", foundry.endpoint_for("claude-sonnet-5-5"))
    assert "\n" not in str(raised.value)
    check_budget(1.0, "claude-sonnet-5-5",  # a regional price is a price
                 Provider("vertex", region="us-east5").endpoint_for("claude-sonnet-5-5"))
