"""MCP server keys and the API tool names made from them (issue 18, finding 12): `$` in
`^[a-zA-Z0-9_-]+$` matches before a trailing newline, so "db\\n" passed as a server name."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.mcp_servers.config import parse_mcp_servers
from fuxi_notebook._internal.mcp_servers.names import server_name_problem, tool_names
from fuxi_notebook._internal.models.wire_check import TOOL_NAME as API_TOOL_NAME
from fuxi_notebook.errors import ConfigurationError

#: the API's rule, written without `$`
API_RULE = re.compile(r"[a-zA-Z0-9_-]{1,128}")
#: "mcp__" + name + "__" + a tool name cut to its 7-character suffix fit in 128
LONGEST = 128 - len("mcp__") - len("__") - 7


def _valid(name: str) -> bool:
    """A server key, as the docstring of names.py defines it."""
    return (name != "" and re.fullmatch(r"[A-Za-z0-9_-]+", name) is not None
            and "__" not in name and not name.endswith("_") and len(name) <= LONGEST)


@pytest.mark.parametrize("name", ["db\n", "db\r\n", "\ndb", "d\nb", "db\u2028", "db "])
def test_a_server_name_with_a_line_break_or_space_is_refused(name):
    assert server_name_problem(name) is not None
    with pytest.raises(ConfigurationError, match="a server name may contain only"):
        parse_mcp_servers({name: {"command": "x"}})


def test_the_api_tool_name_pattern_refuses_a_trailing_newline():
    assert API_TOOL_NAME.match("mcp__db__query") is not None
    assert API_TOOL_NAME.match("mcp__db__query\n") is None
    assert API_TOOL_NAME.fullmatch("mcp__db__query\n") is None


NAMES = st.one_of(
    st.text(st.sampled_from("ab_-Z9\n\r. "), max_size=12),
    st.text(max_size=6),
    st.integers(100, 130).map(lambda n: "a" * n),
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(NAMES)
@example("db\n")
@example("db")
@example("a" * LONGEST)
@example("a" * (LONGEST + 1))
@example("a__b")
@example("a_")
@example("")
def test_a_server_name_is_accepted_exactly_when_it_is_a_valid_key(name):
    assert (server_name_problem(name) is None) == _valid(name)


TOOLS = st.lists(st.one_of(st.text(max_size=140), st.sampled_from(
    ["get.weather", "get_weather", "get weather", "x\n", "x", "a" * 200, ""])), max_size=8)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.sampled_from(["db", "a" * LONGEST, "my-server"]), TOOLS)
@example("db", ["query\n", "query"])
def test_every_tool_name_made_is_an_api_tool_name(server, names):
    made = tool_names(server, names)
    assert set(made) == set(names)
    assert len(set(made.values())) == len(made)  # distinct
    for api_name in made.values():
        assert API_RULE.fullmatch(api_name) is not None, api_name
        assert API_TOOL_NAME.fullmatch(api_name) is not None, api_name
        assert api_name.startswith(f"mcp__{server}__")
