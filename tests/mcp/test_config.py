"""Parsing `mcp_servers`: the accepted shapes, and one readable error per mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuxi_notebook._internal.mcp_servers import parse_mcp_servers
from fuxi_notebook._internal.mcp_servers.names import tool_names
from fuxi_notebook.errors import ConfigurationError

SERVERS = {"files": {"command": "npx", "args": ["-y", "server-files"]},
           "web": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer x"}}}


def test_the_accepted_shapes_agree(tmp_path: Path) -> None:
    wrapped = {"mcpServers": SERVERS}
    (tmp_path / "mcp.json").write_text(json.dumps(wrapped))
    expected = {"files": {"type": "stdio", "command": "npx", "args": ["-y", "server-files"]},
                "web": {"type": "http", "url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer x"}}}
    assert parse_mcp_servers(SERVERS) == expected
    assert parse_mcp_servers(wrapped) == expected
    assert parse_mcp_servers(json.dumps(SERVERS)) == expected
    assert parse_mcp_servers(json.dumps(wrapped)) == expected
    assert parse_mcp_servers(tmp_path / "mcp.json") == expected
    assert parse_mcp_servers("mcp.json", base=tmp_path) == expected
    assert parse_mcp_servers({}) == {}


def test_variables_expand_in_json_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    text = json.dumps({"w": {"type": "sse", "url": "https://h/sse",
                             "headers": {"A": "Bearer ${MCP_TEST_TOKEN}"}},
                       "s": {"command": "${MCP_TEST_CMD:-fallback}"}})
    parsed = parse_mcp_servers(text)
    assert parsed["w"]["headers"] == {"A": "Bearer s3cret"}
    assert parsed["s"]["command"] == "fallback"
    literal = parse_mcp_servers({"s": {"command": "${MCP_TEST_TOKEN}"}})
    assert literal["s"]["command"] == "${MCP_TEST_TOKEN}"


@pytest.mark.parametrize(("value", "message"), [
    ({"s": {"args": ["x"]}}, "MCP server 's': command is missing"),
    ({"s": {"command": ""}}, "MCP server 's': command must be a non-empty string"),
    ({"s": {"command": "x", "args": "a b"}}, "MCP server 's': args must be a list of strings"),
    ({"s": {"command": "x", "args": ["a", 3]}},
     "MCP server 's': args must hold only strings; 3 is int"),
    ({"s": {"command": "x", "env": {"K": 1}}}, "MCP server 's': env['K'] must be a string"),
    ({"s": {"type": "websocket", "url": "ws://h"}}, "MCP server 's': unknown type 'websocket'"),
    ({"s": {"type": "http", "url": "ftp://h/x"}},
     "MCP server 's': url must be an http:// or https:// URL"),
    ({"s": {"type": "http"}}, "MCP server 's': url is missing"),
    ({"s": {"url": "https://h/mcp"}}, "MCP server 's': 'type' is missing"),
    ({"s": {"type": "sdk", "name": "s"}}, "MCP server 's': an 'sdk' server needs its 'instance'"),
    ({"s": {"type": "sdk", "instance": object()}}, "'instance' must be an mcp Server"),
    ({"s": "npx server"}, "MCP server 's': the config must be an object"),
    ({"a.b": {"command": "x"}}, "MCP server 'a.b': a server name may contain only"),
    ({"a__b": {"command": "x"}}, "must not contain '__'"),
    ({"x" * 130: {"command": "x"}}, "at most 114 characters"),
    ({"mcpServers": ["x"]}, "mcpServers must be an object"),
    ('{"s": {"command": "x",}}', "the mcp_servers JSON: invalid JSON (Expecting property name "
                                 "enclosed in double quotes at line 1, column 23)"),
    ("/no/such/mcp.json", "MCP config file /no/such/mcp.json does not exist"),
    (json.dumps({"s": {"command": "${MCP_UNSET_VARIABLE_X}"}}),
     "MCP server 's': command uses ${MCP_UNSET_VARIABLE_X}, which is not set"),
    (42, "mcp_servers must be {name: config}"),
])
def test_errors_name_the_server_and_the_field(value: object, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_mcp_servers(value)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_json_in_a_file_says_where(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "mcpServers": {\n    "s": {"command": "x"\n  }\n}\n')
    with pytest.raises(ConfigurationError,
                       match=r"broken.json: invalid JSON \(.* line 6, column 1\)"):
        parse_mcp_servers(path)


def test_tool_names_are_sanitized_and_distinct() -> None:
    names = tool_names("srv", ["get.weather", "get_weather", "get weather", "ok", "x" * 200])
    assert names["get_weather"] == "mcp__srv__get_weather"  # the literal name keeps it
    assert names["ok"] == "mcp__srv__ok"
    dotted, spaced, long = names["get.weather"], names["get weather"], names["x" * 200]
    assert dotted.startswith("mcp__srv__get_weather_") and spaced != dotted
    assert len(long) == 128
    assert len(set(names.values())) == len(names)
    assert all(__import__("re").fullmatch(r"[a-zA-Z0-9_-]{1,128}", n) for n in names.values())
    # the same names in another order give the same result
    again = tool_names("srv", ["x" * 200, "get weather", "ok", "get_weather", "get.weather"])
    assert again == names
    assert tool_names("srv", ["get.weather"]) == {"get.weather": "mcp__srv__get_weather"}
