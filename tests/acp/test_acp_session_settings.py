"""What an ACP session is set up with: its permission mode (ACP modes), model and effort
(config options), the plan from the task list, the client's MCP servers, and the trust
question a project's held-back settings ask through the client."""

from __future__ import annotations

import json
import sys

from acp import schema

from fuxi_notebook.testing import Turn, text, tool_use

from ..mcp.conftest import SCRIPT
from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt


async def test_modes_and_config_options_change_the_session(fake_api, tmp_path):
    fake_api.add(Turn([tool_use("Write", {"file_path": "a.txt", "content": "a"})]),
                 Turn([text("Written.")]))
    client = RecordingClient(lambda ask: "reject_once")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        started = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = started.session_id
        assert "acceptEdits" in {m.id for m in started.modes.available_modes}
        await conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
        changed = await conn.set_config_option(session_id=sid, config_id="model",
                                               value="claude-haiku-4-5")
        assert {o.id: o.current_value for o in changed.config_options}["model"] == \
            "claude-haiku-4-5"
        await conn.set_config_option(session_id=sid, config_id="effort", value="low")
        await conn.prompt(session_id=sid, prompt=_prompt("write a"))
    assert client.asks == []  # acceptEdits applies the edit
    assert (tmp_path / "a.txt").read_text() == "a"
    request = fake_api.requests[0]
    assert request["model"] == "claude-haiku-4-5"
    assert request["output_config"] == {"effort": "low"}


async def test_the_task_list_is_the_plan(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("TaskCreate", {"subject": "Load data", "description": "read it"})]),
        Turn([tool_use("TaskCreate", {"subject": "Fit model", "description": "fit"})]),
        Turn([tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})]),
        Turn([text("Planned.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("plan it"))
    plans = client.of("plan")
    assert len(plans) == 3
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("Load data", "completed"), ("Fit model", "pending")]
    assert {u.kind for u in client.of("tool_call")} == {"think"}


async def test_the_clients_mcp_servers_join_the_session(fake_api, tmp_path):
    fake_api.add(Turn([tool_use("mcp__notes__echo", {"text": "from the client's server"})]),
                 Turn([text("Echoed.")]))
    client = RecordingClient()
    server = schema.McpServerStdio(name="notes", command=sys.executable, args=[str(SCRIPT)],
                                   env=[])
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path, [server])
        await conn.prompt(session_id=sid, prompt=_prompt("echo"))
    [end] = client.of("tool_call_update")
    assert end.status == "completed" and end.raw_output == "from the client's server"


def _hooked_project(root):
    (root / ".fuxi").mkdir()
    (root / ".fuxi" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "touch HOOKED"}]}]}}))


async def test_an_untrusted_project_asks_through_the_client_and_runs_nothing_until_trusted(
        fake_api, tmp_path):
    _hooked_project(tmp_path)
    for answer in ("not_now", "trust"):
        fake_api.add(Turn([tool_use("Bash", {"command": "true"})]), Turn([text("Ran.")]))
        client = RecordingClient(lambda ask, answer=answer: (
            answer if ask.tool_call.title.startswith("Trust") else "allow_once"))
        async with acp_agent(client, fake_api, tmp_path) as (conn, _):
            sid = await new_session(conn, tmp_path)
            await conn.prompt(session_id=sid, prompt=_prompt("run true"))
        trust = client.asks[0]
        assert trust.tool_call.title == f"Trust the project settings of `{tmp_path}`?"
        assert "touch HOOKED" in trust.tool_call.content[0].content.text
        assert [o.option_id for o in trust.options] == ["trust", "not_now"]
        assert (tmp_path / "HOOKED").exists() is (answer == "trust")
    again = RecordingClient()  # trusted now: not asked again
    fake_api.add(Turn([text("Hi.")]))
    async with acp_agent(again, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("hello"))
    assert again.asks == []


async def test_a_question_is_asked_with_its_choices_and_answered(fake_api, tmp_path):
    question = {"question": "Which chart?", "header": "Chart", "multiSelect": False,
                "options": [{"label": "Bar", "description": "counts"},
                            {"label": "Line", "description": "a trend"}]}
    fake_api.add(Turn([tool_use("AskUserQuestion", {"questions": [question]})]),
                 Turn([text("A line chart, then.")]))
    client = RecordingClient(lambda ask: "choice-1")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("plot it"))
    [ask] = client.asks
    assert ask.tool_call.title == "Which chart?"
    assert [o.name for o in ask.options] == ["Bar", "Line", "Skip"]
    answered = fake_api.requests[1]["messages"][-1]["content"][0]
    assert answered["content"] == 'The user answered: "Which chart?" = "Line".'
