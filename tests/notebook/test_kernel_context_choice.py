"""Issue 9, item 16: the user chooses what the model sees of the kernel, and sees it."""

from __future__ import annotations

import json

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import Turn, text

SECRET = "tok-3f9a7c1e5d2b8a64-context-test"


def _first_message(api) -> str:
    return json.dumps(api.requests[0]["messages"][0]["content"])


def _markdown(result) -> str:
    return result.final(RECORD_MIME)["data"]["text/markdown"]


def _setup(fresh) -> None:
    fresh.run("import pandas as pd\n"
              "sales = pd.DataFrame({'region': ['North', 'South'], 'total': [94, 83]})\n"
              "other = 'not for the model'\n"
              f"api_token = {SECRET!r}")


def test_vars_sends_only_the_named_variables(fresh, api):
    _setup(fresh)
    api.add(Turn([text("ok")]))
    result = fresh.run("%%fuxi --vars sales,missing\nsummarise")
    sent = _first_message(api)
    assert "sales: pandas.DataFrame (2, 2)" in sent and "other" not in sent.split("Cells")[0]
    assert "not defined in the kernel: missing" in sent
    assert "Context sent with the prompt" in _markdown(result)  # shown, folded
    assert "sales: pandas.DataFrame" in _markdown(result)


def test_no_context_sends_nothing_and_keeps_the_cells_for_later(fresh, api):
    _setup(fresh)
    api.add(Turn([text("ok")]), Turn([text("ok again")]))
    first = fresh.run("%%fuxi --no-context\nhello")
    assert "Kernel context" not in _first_message(api)
    assert "Context sent" not in _markdown(first)
    fresh.run("%%fuxi\nand now")
    later = json.dumps(api.requests[1]["messages"][-1]["content"])
    assert "sales" in later and "North" in later  # the cells it did not see, now


def test_braces_inline_a_variable_but_never_a_secret(fresh, api):
    _setup(fresh)
    api.add(Turn([text("ok")]))
    result = fresh.run("%%fuxi --no-context\nWhich region leads in {sales}? "
                       "Use {api_token} and keep {{sales}} literal.")
    sent = _first_message(api)
    assert "columns (name  dtype  nulls)" in sent and "North" in sent  # its description
    assert "api_token: [masked" in sent and SECRET not in sent
    assert SECRET not in json.dumps(result.messages, default=str)
    assert "Context sent with the prompt" in _markdown(result)
