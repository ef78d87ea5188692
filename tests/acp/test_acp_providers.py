"""`fuxi-acp` on a cloud provider (issue 38), through a real ACP client over stdio: the
session's model option says which provider and region serve it and offers only models
that provider can serve; a prompt with a tool call runs on the provider's fake; an agent
without any credential answers a prompt with one JSON-RPC error naming what would
configure each provider."""

from __future__ import annotations

import pytest
from acp import RequestError

from fuxi_notebook.testing import FakeBedrockServer, FakeMessagesServer, Turn, text, tool_use

from .acp_client import RecordingClient, acp_agent
from .test_acp_agent import _prompt

BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5-v1:0"
#: the first-party variables the harness sets, emptied, and no AWS file of the machine's
NOT_FIRST_PARTY = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "",
                   "AWS_CONFIG_FILE": "/nonexistent/aws-config",
                   "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials"}


async def test_a_session_on_bedrock_names_it_and_runs_a_tool_call_there(tmp_path):
    (tmp_path / "notes.txt").write_text("ship on Friday\n")
    script = [Turn([tool_use("Read", {"file_path": "notes.txt"})]),
              Turn([text("The note says: ship on Friday.")])]
    with FakeBedrockServer(script) as server:
        env = {**NOT_FIRST_PARTY, **server.client_env(), "FUXI_USE_BEDROCK": "1",
               "FUXI_MODEL": BEDROCK_MODEL}
        client = RecordingClient(lambda ask: "allow_once")
        async with acp_agent(client, server, tmp_path, **env) as (conn, _):
            started = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            [model] = [o for o in started.config_options if o.id == "model"]
            assert model.current_value == BEDROCK_MODEL
            assert model.description == f"on Amazon Bedrock, region us-east-1, at {server.url}"
            offered = [choice.value for choice in model.options]
            assert offered == [BEDROCK_MODEL]  # no first-party name Bedrock would refuse
            done = await conn.prompt(session_id=started.session_id,
                                     prompt=_prompt("What does notes.txt say?"))
    assert done.stop_reason == "end_turn"
    assert "ship on Friday" in client.text()
    assert [r.path for r in server.raw_requests] == [
        f"/model/{BEDROCK_MODEL}/invoke-with-response-stream"] * 2


async def test_without_any_credential_a_prompt_is_one_json_rpc_error(tmp_path):
    with FakeMessagesServer() as server:
        client = RecordingClient()
        async with acp_agent(client, server, tmp_path, **NOT_FIRST_PARTY) as (conn, _):
            started = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=started.session_id, prompt=_prompt("hi"))
    said = str(refused.value.data) + str(refused.value)
    assert "\n" not in said and "Traceback" not in said
    for variable in ("ANTHROPIC_API_KEY", "FUXI_USE_BEDROCK", "FUXI_USE_VERTEX",
                     "FUXI_USE_FOUNDRY"):
        assert variable in said, said
    assert server.raw_requests == []
