"""An MCP `http`/`sse` server whose URL or header holds a control character (a tab, a line
break, NUL, DEL, a C1 control) or whose header name is no HTTP token is refused where
configurations are parsed, with one line naming the server and the field: by query(), by
a notebook cell's `--mcp-config` and by `session/new` over ACP alike, never accepted to
fail later when it connects (issue 35, "bad input gets one clear line")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from acp import schema

from fuxi_notebook import FuxiAgentOptions, query
from fuxi_notebook._internal.models.scripted import ScriptedModel
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.testing import Turn, text
from fuxi_notebook.testing.frontend import NotebookFrontend

from ..acp.acp_client import RecordingClient, new_session
from ..acp.test_acp_bad_input import _one_line, _refused, agent_logging_to

URL = "http://127.0.0.1:9/mcp"

#: (what is wrong, the server's config, the field the error names)
BAD: list[tuple[str, dict[str, Any], str]] = [
    ("a tab in the url", {"type": "http", "url": "http://127.0.0.1:9/m\tcp"}, "url"),
    ("a line break in the url", {"type": "sse", "url": "http://127.0.0.1:9/\nmcp"}, "url"),
    ("NUL in the url", {"type": "http", "url": "http://127.0.0.1:9/mcp\x00"}, "url"),
    ("a C1 control in the url", {"type": "http", "url": "http://127.0.0.1:9/\x85"}, "url"),
    ("a header value that adds a header",
     {"type": "http", "url": URL, "headers": {"X-Token": "a\r\nX-Evil: 1"}}, "X-Token"),
    ("a tab in a header value", {"type": "sse", "url": URL, "headers": {"X-Token": "a\tb"}},
     "X-Token"),
    ("DEL in a header value", {"type": "http", "url": URL, "headers": {"X-Token": "a\x7f"}},
     "X-Token"),
    ("a header name with a space", {"type": "http", "url": URL, "headers": {"X Token": "a"}},
     "X Token"),
    ("a header name with a colon", {"type": "http", "url": URL, "headers": {"X-T:": "a"}},
     "X-T:"),
    ("an empty header name", {"type": "http", "url": URL, "headers": {"": "a"}}, "headers"),
]


def _checked(message: str, field: str) -> None:
    assert "\n" not in message and "\r" not in message and "\t" not in message, message
    assert "MCP server 'remote'" in message and field in message, message


async def _query(servers: Any) -> None:
    options = FuxiAgentOptions(model=ScriptedModel([[text("done")]]), mcp_servers=servers,
                               persist_session=False)
    async for _ in query(prompt="hi", options=options):
        pass


@pytest.mark.parametrize(("what", "config", "field"), BAD, ids=[b[0] for b in BAD])
async def test_query_refuses_it_with_one_line(what, config, field):
    with pytest.raises(ConfigurationError) as refused:
        await _query({"remote": config})
    _checked(str(refused.value), field)


@pytest.mark.parametrize(("config", "field"), [
    ({"command": "python\x00x"}, "command"),
    ({"command": "python", "args": ["-c", "1\x00"]}, "args"),
    ({"command": "python", "env": {"A": "1\x002"}}, "env"),
    ({"command": "python", "cwd": "/tmp\x00"}, "cwd")])
async def test_a_stdio_server_with_nul_is_refused_too(config, field):
    with pytest.raises(ConfigurationError) as refused:
        await _query({"remote": config})
    _checked(str(refused.value), field)


async def test_a_variable_that_brings_a_line_break_is_refused_too(monkeypatch):
    monkeypatch.setenv("MCP_TEST_TOKEN", "t\nX-Evil: 1")
    given = json.dumps({"mcpServers": {"remote": {
        "type": "http", "url": URL, "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}}}})
    with pytest.raises(ConfigurationError) as refused:
        await _query(given)
    _checked(str(refused.value), "Authorization")


async def test_a_good_remote_server_is_still_accepted():
    from fuxi_notebook._internal.mcp_servers import parse_mcp_servers

    headers = {"Authorization": "Bearer abc.def", "X-Api-Key": "k=1; p=\"x y\""}
    assert parse_mcp_servers({"remote": {"type": "http", "url": URL, "headers": headers}}) == {
        "remote": {"type": "http", "url": URL, "headers": headers}}


def _acp_server(config: dict[str, Any]) -> Any:
    headers = [schema.HttpHeader(name=k, value=v) for k, v in config.get("headers", {}).items()]
    kind = schema.HttpMcpServer if config["type"] == "http" else schema.SseMcpServer
    return kind(name="remote", url=config["url"], headers=headers, type=config["type"])


async def test_acp_session_new_refuses_it_with_one_json_rpc_error(fake_api, tmp_path):
    fake_api.add(Turn([text("Still here.")]))
    client, log = RecordingClient(), tmp_path / "stderr.txt"
    async with agent_logging_to(log, client, fake_api, tmp_path) as (conn, _):
        for what, config, field in BAD:
            error = await _refused(conn.new_session(cwd=str(tmp_path),
                                                    mcp_servers=[_acp_server(config)]), what)
            assert error.code == -32602, (what, error.data)
            _checked(_one_line(error), field)
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=[
            schema.TextContentBlock(type="text", text="are you there?")])
    assert done.stop_reason == "end_turn" and client.text() == "Still here."
    assert "Traceback" not in log.read_text(errors="replace")


def test_a_notebook_cell_refuses_it_with_one_usage_error(tmp_path: Path, fake_api):
    fake_api.add(*(Turn([text("ran")]) for _ in range(5)))  # what a cell that runs asks
    env = {"FUXI_NOTEBOOK": str(tmp_path / "nb.ipynb"), "ANTHROPIC_BASE_URL": fake_api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0035", "FUXI_REPLAY": ""}
    cells = [nbformat.v4.new_code_cell("%load_ext fuxi_notebook")]
    for _, config, _ in BAD[::3]:
        given = json.dumps({"remote": config})
        (tmp_path / "servers.json").write_text(given)
        cells.append(nbformat.v4.new_code_cell(f"%%fuxi --mcp-config {json.dumps(given)}\nhi"))
    cells.append(nbformat.v4.new_code_cell("%%fuxi --mcp-config servers.json\nhi"))
    with NotebookFrontend(cwd=str(tmp_path), cell_ids=False, env=env) as frontend:
        assert frontend.execute(cells[0]) == "ok", cells[0].outputs
        for cell, field in zip(cells[1:], [*(b[2] for b in BAD[::3]), BAD[-1][2]],
                               strict=True):
            assert frontend.execute(cell) == "error", cell.outputs
            reply = frontend.last_reply
            assert reply["ename"] == "UsageError", reply
            assert not [o for o in cell.outputs if o["output_type"] == "error"], cell.outputs
            _checked(str(reply["evalue"]), field)
