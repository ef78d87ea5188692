"""How an answer reads in an ACP chat (issue 39 (4), seen in jupyter-ai's): the texts of
two turns, or of two text blocks around a tool call, are separate paragraphs, not run
together ("Writing a note.Wrote note.txt."); one block streamed in pieces stays whole."""

from __future__ import annotations

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
