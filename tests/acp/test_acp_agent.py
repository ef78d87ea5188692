"""`fuxi-acp` driven over stdio by the protocol package's client side, against the fake
Messages API: streamed chunks, tool calls with diffs, permission asks answered each way,
cancel in a stream and in a tool, a saved session loaded again, bad requests."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError, schema

from fuxi_notebook.testing import Fault, Turn, text, thinking, tool_use

from .acp_client import RecordingClient, acp_agent, appears, new_session

pytestmark = pytest.mark.timeout(120)


def _prompt(words: str) -> list[schema.TextContentBlock]:
    return [schema.TextContentBlock(type="text", text=words)]


async def test_text_and_thinking_stream_as_chunks_and_the_turn_reports_usage(
        fake_api, tmp_path):
    fake_api.add(Turn([thinking("The user greets me."), text("Hello from fuxi, " * 5)]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        started = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert started.modes.current_mode_id == "default"
        assert {o.id for o in started.config_options} == {"model", "effort"}
        done = await conn.prompt(session_id=started.session_id, prompt=_prompt("hi"))
    assert done.stop_reason == "end_turn"
    assert len(client.of("agent_message_chunk")) > 1  # streamed, not sent whole
    assert client.text() == "Hello from fuxi, " * 5
    assert client.text("agent_thought_chunk") == "The user greets me."
    usage = client.of("usage_update")[-1]
    assert usage.used > 0 and usage.size > usage.used and usage.cost.amount > 0
    assert done.usage.output_tokens > 0
    assert fake_api.requests[0]["messages"][0]["content"][-1]["text"] == "hi"


async def test_a_write_is_a_tool_call_with_a_diff_asked_first(fake_api, tmp_path):
    (tmp_path / "notes.md").write_text("old line\n")
    fake_api.add(
        Turn([tool_use("Read", {"file_path": "notes.md"})]),
        Turn([tool_use("Edit", {"file_path": "notes.md", "old_string": "old line",
                                "new_string": "new line"})]),
        Turn([text("Edited.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=_prompt("fix the note"))
    assert done.stop_reason == "end_turn"
    assert (tmp_path / "notes.md").read_text() == "new line\n"
    read, edit = client.of("tool_call")
    assert (read.kind, read.title) == ("read", "Read `notes.md`")
    assert edit.kind == "edit" and edit.locations[0].path == str(tmp_path / "notes.md")
    diff = edit.content[0]
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", "old line\n", "new line\n")
    [ask] = client.asks  # Read inside the folder is not asked; the edit is
    assert ask.tool_call.tool_call_id == edit.tool_call_id
    assert [o.kind for o in ask.options] == ["allow_once", "allow_always", "reject_once"]
    ends = {u.tool_call_id: u.status for u in client.of("tool_call_update")}
    assert ends == {read.tool_call_id: "completed", edit.tool_call_id: "completed"}


async def test_a_denied_call_fails_and_always_allow_is_not_asked_again(fake_api, tmp_path):
    fake_api.add(
        Turn([tool_use("Write", {"file_path": "a.txt", "content": "a"})]),
        Turn([tool_use("Write", {"file_path": "b.txt", "content": "b"})]),
        Turn([tool_use("Write", {"file_path": "c.txt", "content": "c"})]),
        Turn([text("Done.")]))
    answers = iter(["reject_once", "allow_always"])
    client = RecordingClient(lambda ask: next(answers))
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("write three files"))
    assert len(client.asks) == 2  # c.txt came under the rule "always" added
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "b" and (tmp_path / "c.txt").read_text() == "c"
    statuses = [u.status for u in client.of("tool_call_update")]
    assert statuses == ["failed", "completed", "completed"]
    denied = fake_api.requests[1]["messages"][-1]["content"][0]
    assert denied["is_error"] is True and "denied" in str(denied["content"])


async def test_cancel_in_the_middle_of_a_stream(fake_api, tmp_path):
    fake_api.add(Fault(turn=Turn([text("A long answer " * 20)]), cut_after_events=6,
                       stall_seconds=60),
                 Turn([text("Second answer.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        running = asyncio.create_task(conn.prompt(session_id=sid, prompt=_prompt("talk")))
        await client.until(lambda: client.of("agent_message_chunk"))
        await conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"
        again = await conn.prompt(session_id=sid, prompt=_prompt("go on"))
    assert again.stop_reason == "end_turn" and client.text().endswith("Second answer.")


async def test_cancel_in_the_middle_of_a_tool_answers_the_call(fake_api, tmp_path):
    fake_api.add(Turn([tool_use("Bash", {"command": "touch started && sleep 60"})]),
                 Turn([text("After the interrupt.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        running = asyncio.create_task(conn.prompt(session_id=sid, prompt=_prompt("run")))
        await appears(tmp_path / "started")
        await conn.cancel(session_id=sid)
        assert (await running).stop_reason == "cancelled"
        [call] = client.of("tool_call")
        assert [u.status for u in client.of("tool_call_update")
                if u.tool_call_id == call.tool_call_id] == ["failed"]
        again = await conn.prompt(session_id=sid, prompt=_prompt("what happened?"))
    assert again.stop_reason == "end_turn"
    [owed] = [b for b in fake_api.requests[-1]["messages"][-1]["content"]
              if b.get("type") == "tool_result"]  # answered, with the next prompt
    assert owed["tool_use_id"] == call.tool_call_id and "Interrupted" in owed["content"]


async def test_a_saved_session_loads_again_and_goes_on(fake_api, tmp_path):
    fake_api.add(Turn([text("The answer is 42.")]), Turn([text("Still 42.")]))
    first = RecordingClient()
    async with acp_agent(first, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("what is the answer?"))
    second = RecordingClient()
    async with acp_agent(second, fake_api, tmp_path) as (conn, _):
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
        assert second.text("user_message_chunk") == "what is the answer?"
        assert second.text() == "The answer is 42."
        await conn.prompt(session_id=sid, prompt=_prompt("and now?"))
        with pytest.raises(RequestError) as missing:
            await conn.load_session(cwd=str(tmp_path), session_id="no-such-session",
                                    mcp_servers=[])
    assert missing.value.code == -32602
    history = fake_api.requests[-1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert "The answer is 42." in str(history[1]["content"])


async def test_bad_requests_get_json_rpc_errors_and_the_agent_keeps_running(
        fake_api, tmp_path):
    fake_api.add(Turn([text("Still here.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, process):
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="nope", prompt=_prompt("hi"))
        assert unknown.value.code == -32602
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        assert relative.value.code == -32602
        sid = await new_session(conn, tmp_path)
        with pytest.raises(RequestError) as mode:
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        assert "unknown permission_mode" in str(mode.value.data)
        with pytest.raises(RequestError) as empty:
            await conn.prompt(session_id=sid, prompt=_prompt("  "))
        assert empty.value.code == -32602
        with pytest.raises(RequestError) as image:
            await conn.prompt(session_id=sid, prompt=[schema.ImageContentBlock(
                type="image", data="aGVsbG8=", mime_type="image/png")])
        assert "holds no image" in str(image.value.data)
        process.stdin.write(b"this is not json\n")
        await process.stdin.drain()
        done = await conn.prompt(session_id=sid, prompt=_prompt("are you there?"))
    assert done.stop_reason == "end_turn" and client.text() == "Still here."
    assert len(fake_api.requests) == 1  # none of the bad ones reached the model


def test_stdout_carries_only_the_protocol(tmp_path):
    """What else would print to stdout (print, a write to fd 1, a child process) goes to
    stderr once the protocol's streams are set up."""
    import subprocess
    import sys

    code = (
        "import asyncio, os, subprocess\n"
        "from fuxi_notebook._internal.acp.server import _protocol_stdio\n"
        "async def main():\n"
        "    writer, _ = await _protocol_stdio()\n"
        "    print('a print'); os.write(1, b'a write to fd 1\\n')\n"
        "    subprocess.run(['echo', 'a child'])\n"
        "    writer.write(b'{\"jsonrpc\": \"2.0\"}\\n'); await writer.drain()\n"
        "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"jsonrpc": "2.0"}\n'
    assert all(noise in done.stderr for noise in ("a print", "a write to fd 1", "a child"))


async def test_an_api_error_is_a_json_rpc_error_and_a_budget_stop_is_told(fake_api, tmp_path):
    fake_api.add(Fault(status=400, error_type="invalid_request_error",
                       message="prompt is too long"),
                 Fault(status=401, error_type="authentication_error",
                       message="invalid x-api-key"),
                 Turn([tool_use("Glob", {"pattern": "*"})]), Turn([text("Never sent.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path, "--max-budget-usd", "0.000001") as (
            conn, _):
        sid = await new_session(conn, tmp_path)
        with pytest.raises(RequestError) as bad:
            await conn.prompt(session_id=sid, prompt=_prompt("hi"))
        assert bad.value.code == -32603 and "prompt is too long" in str(bad.value.data)
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=sid, prompt=_prompt("hi again"))
        assert refused.value.code == -32000  # the client asks the user to sign in
        done = await conn.prompt(session_id=sid, prompt=_prompt("glob"))
    assert done.stop_reason == "end_turn"
    assert client.text().startswith("\n\n(fuxi stopped: ") and "budget" in client.text()


async def test_saved_sessions_are_listed_for_their_folder(fake_api, tmp_path):
    fake_api.add(Turn([text("Noted.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("remember the plan"))
        listed = await conn.list_sessions(cwd=str(tmp_path))
    [found] = listed.sessions
    assert found.session_id == sid and found.title == "remember the plan"
