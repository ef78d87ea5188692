"""How an answer reads in an ACP chat (issue 39 (4), seen in jupyter-ai's): the texts of
two turns, or of two text blocks around a tool call, are separate paragraphs, not run
together ("Writing a note.Wrote note.txt."); one block streamed in pieces stays whole;
the updates come in the order the model wrote: text, then the call, then its ask."""

from __future__ import annotations

from acp import schema

from fuxi_notebook.testing import Turn, text, tool_use

from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt


async def test_the_texts_of_two_turns_are_two_paragraphs(fake_api, tmp_path):
    fake_api.add(Turn([text("Writing a note."),
                       tool_use("Write", {"file_path": "note.txt", "content": "hi"})]),
                 Turn([text("Wrote note.txt.")]),
                 Turn([text("A second prompt, a fresh answer.")]))
    client = RecordingClient(lambda ask: "allow_once")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("write a note"))
        first = client.text()
        await conn.prompt(session_id=sid, prompt=_prompt("and now?"))
    assert first == "Writing a note.\n\nWrote note.txt."
    # a new prompt's answer starts a new message: no break before it
    assert client.text().removeprefix(first) == "A second prompt, a fresh answer."


def _shown(client: RecordingClient) -> list[str]:
    """What a chat shows, in the order it came: text, a call's start, its ask, its end
    (a run of chunks is one "text"; other updates left out)."""
    names = {"agent_message_chunk": "text", "tool_call": "call", "tool_call_update": "end"}
    seen: list[str] = []
    for event in client.events:
        kind = "ask" if isinstance(event, schema.RequestPermissionRequest) else names.get(
            event.session_update, "")
        if kind and not (kind == "text" and seen[-1:] == ["text"]):
            seen.append(kind)
    return seen


async def test_text_written_before_an_asked_call_is_sent_before_the_call(fake_api, tmp_path):
    """Issue 39 (4a): the ask came from inside the loop while the text chunks before it
    still waited to be sent, so jupyter-ai's chat drew the call above the text."""
    words = "Writing a note, in a few words. " * 8
    fake_api.add(Turn([text(words), tool_use("Write", {"file_path": "note.txt",
                                                        "content": "hi"})]),
                 Turn([text("Wrote note.txt.")]))
    client = RecordingClient(lambda ask: "allow_once")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("write a note"))
    assert _shown(client) == ["text", "call", "ask", "end", "text"]
    assert client.text().startswith(words)
    [call] = client.of("tool_call")
    assert client.asks[0].tool_call.tool_call_id == call.tool_call_id


async def test_a_subagents_asked_call_comes_after_its_agent_call(fake_api, tmp_path):
    """The same wait for a subagent's call: its start is relayed through the parent's
    stream; the ask waits for it (and never for ever)."""
    fake_api.add(Turn([text("Delegating."), tool_use("Agent", {
                     "description": "write", "prompt": "write b.txt",
                     "subagent_type": "general-purpose", "run_in_background": False})]),
                 Turn([tool_use("Write", {"file_path": "b.txt", "content": "b"})]),
                 Turn([text("Wrote b.txt.")]),
                 Turn([text("Done.")]))
    client = RecordingClient(lambda ask: "allow_once")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=_prompt("delegate"))
    assert done.stop_reason == "end_turn" and (tmp_path / "b.txt").read_text() == "b"
    agent, write = client.of("tool_call")
    assert agent.title.startswith("Agent") and client.text().startswith("Delegating.")
    [ask] = [a for a in client.asks if a.tool_call.tool_call_id == write.tool_call_id]
    assert client.events.index(write) < client.events.index(ask)
