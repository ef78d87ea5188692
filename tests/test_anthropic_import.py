"""The `anthropic` client imported without the SDK's type index (models/anthropic_import.py):
a fresh process that runs a query imports the client's modules only, and code in the same
process that imports `anthropic` itself still finds the whole package, the same objects,
and trio working under httpcore2.

Each case runs in a fresh interpreter: the test process imported `anthropic` long ago."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fuxi_notebook._internal.models.anthropic_import import read_index
from fuxi_notebook.testing import FakeMessagesServer, Fault, Turn, text

QUERY = """
import asyncio, json, sys
from fuxi_notebook import query, FuxiAgentOptions, ResultMessage

async def main():
    async for message in query(prompt="say ok", options=FuxiAgentOptions(cwd=sys.argv[1])):
        if isinstance(message, ResultMessage):
            return message.subtype, message.result or " ".join(message.errors or [])

subtype, result = asyncio.run(main())
top = sys.modules["anthropic"]
print(json.dumps({
    "subtype": subtype, "result": result,
    "package_init_ran": "AsyncAnthropic" in vars(top),
    "type_modules": sum(1 for m in sys.modules if m.startswith("anthropic.types.")),
    "trio": "trio" in sys.modules,
}))
"""


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    import os

    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _api_env(api: FakeMessagesServer) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key",
            "FUXI_MODEL": "claude-sonnet-5-5"}


def test_a_cold_query_imports_the_client_not_the_type_index(tmp_path):
    with FakeMessagesServer([Turn([text("ok")])]) as api:
        seen = _run(QUERY, str(tmp_path), env=_api_env(api))
    assert (seen["subtype"], seen["result"]) == ("success", "ok")
    assert seen["package_init_ran"] is False  # `anthropic/__init__` (the whole SDK) not run
    assert seen["type_modules"] < 1500  # of ~3,300 (the client's own imports: ~1,000)
    assert seen["trio"] is False  # httpcore2 got the stand-in; nothing used it


def test_an_api_error_is_translated_through_the_clients_own_classes(tmp_path):
    refusal = Fault(status=400, error_type="invalid_request_error", message="bad thing",
                    headers={"x-should-retry": "false"})
    with FakeMessagesServer([refusal]) as api:
        seen = _run(QUERY, str(tmp_path), env=_api_env(api))
    assert seen["subtype"] != "success"
    assert "API error 400: bad thing" in seen["result"]
    assert seen["package_init_ran"] is False


SAME_PACKAGE = """
import json, sys
lazy = sys.argv[1] == "lazy"
if lazy:
    from fuxi_notebook._internal.models.anthropic_import import load_client
    load_client()
import anthropic
import anthropic.types.beta as beta
star, star_top = {}, {}
exec("from anthropic.types import *", star)
exec("from anthropic import *", star_top)
print(json.dumps({
    "version": anthropic.__version__,
    "client_module": anthropic.AsyncAnthropic.__module__,
    "errors_same": anthropic.APIStatusError is sys.modules["anthropic._exceptions"].APIStatusError,
    "message_same": anthropic.types.Message is sys.modules["anthropic.types.message"].Message,
    "beta_message": beta.BetaMessage.__name__,
    "dir_top": sorted(dir(anthropic)),
    "dir_types": sorted(dir(anthropic.types)),
    "star_types": sorted(k for k in star if not k.startswith("__")),
    "star_top": sorted(k for k in star_top if not k.startswith("__")),
}))
"""


def test_code_importing_anthropic_afterwards_finds_the_package_it_knows():
    lazy = _run(SAME_PACKAGE, "lazy")
    usual = _run(SAME_PACKAGE, "usual")
    assert lazy["errors_same"] and lazy["message_same"]
    for key in ("version", "client_module", "beta_message", "dir_top", "star_top"):
        assert lazy[key] == usual[key], key
    # every name of the index is there; only which submodules happen to be imported differs
    modules = {name for name in usual["dir_types"] if name.islower()}
    assert {n for n in usual["dir_types"] if n not in modules} <= set(lazy["dir_types"])
    assert {n for n in usual["star_types"] if n not in modules} <= set(lazy["star_types"])


TRIO_USER = """
import json, sys, trio
sys.modules.pop("trio")  # as if never imported: the client's modules import it as they will
from fuxi_notebook._internal.models.anthropic_import import load_client
sdk = load_client()
assert "trio" not in sys.modules
import anthropic

async def main():
    client = anthropic.AsyncAnthropic(base_url=sys.argv[1], api_key="test-key")
    message = await client.messages.create(model="claude-sonnet-5-5", max_tokens=16,
                                           messages=[{"role": "user", "content": "hi"}])
    return message.content[0].text

print(json.dumps({"answer": trio.run(main)}))
"""


def test_the_users_own_client_under_trio_still_works():
    with FakeMessagesServer([Turn([text("from trio")])]) as api:
        seen = _run(TRIO_USER, api.url)
    assert seen == {"answer": "from trio"}


LOGGING = """
import json, logging
from fuxi_notebook._internal.models.anthropic_import import load_client
load_client()
print(json.dumps({"level": logging.getLogger("anthropic").level}))
"""


def test_anthropic_log_is_honoured_as_the_package_would():
    assert _run(LOGGING, env={"ANTHROPIC_LOG": "debug"}) == {"level": 10}


@pytest.mark.parametrize(("source", "expected"), [
    ("from __future__ import annotations\n\nfrom .a import A as A\n"
     "from .b import (\n    B as B,\n    C as C,  # a comment\n)\n",
     {"A": ("a", "A"), "B": ("b", "B"), "C": ("b", "C")}),
    ("from .a import A\n", {"A": ("a", "A")}),
])
def test_an_index_is_read_name_by_name(source, expected):
    assert read_index(source) == expected


@pytest.mark.parametrize("source", [
    "from .a import A as A\nprint('side effect')\n",
    "from .a import A as A\nfrom .b import *\n",
    "from .a import A as A\nimport os\n",
    "from .a import A as A\nif True:\n    from .b import B as B\n",
    "from ..a import A as A\n",
    "",
])
def test_anything_but_an_index_runs_as_usual(source):
    assert read_index(source) is None
