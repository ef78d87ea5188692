"""What reaches an ACP client passes the same redaction as what a cell shows: a secret
streamed in pieces, written into a file (the diff), or named in a call's input."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.acp.updates import acp_kind, title_of
from fuxi_notebook.testing import Turn, text, tool_use

from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt

SECRET = "tok-4f9a2c7e1b8d3f6a0c5e"


async def test_a_secret_is_never_sent_in_pieces_nor_whole(fake_api, tmp_path):
    # the fake API streams 24-character deltas: the secret straddles two of them
    words = f"Your service key is {SECRET}, keep it safe."
    fake_api.add(Turn([text(words)]),
                 Turn([tool_use("Write", {"file_path": "key.txt", "content": SECRET})]),
                 Turn([text("Saved.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path, MY_SERVICE_TOKEN=SECRET) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("what is my key?"))
        await conn.prompt(session_id=sid, prompt=_prompt("save it"))
    chunks = [u.content.text for u in client.of("agent_message_chunk")]
    assert len(chunks) > 2
    assert "".join(chunks).startswith("Your service key is [REDACTED], keep it safe.")
    assert not any(SECRET[:6] in chunk for chunk in chunks)
    [write] = client.of("tool_call")
    assert write.content[0].new_text == "[REDACTED]"
    assert write.raw_input == {"file_path": "key.txt", "content": "[REDACTED]"}
    assert SECRET not in str(client.asks)
    assert (tmp_path / "key.txt").read_text() == SECRET  # the tool itself got it whole


@pytest.mark.parametrize(("name", "kind", "acp"), [
    ("Read", "read", "read"), ("Grep", "read", "search"), ("Edit", "edit", "edit"),
    ("Bash", "execute", "execute"), ("WebFetch", "network", "fetch"),
    ("TaskCreate", "read", "think"), ("mcp__x__y", None, "execute"),
    ("AskUserQuestion", "ask", "other")])
def test_each_declared_kind_has_its_acp_kind(name, kind, acp):
    assert acp_kind(name, kind) == acp


def test_a_title_names_the_input_that_says_most_and_what_it_leaves_out():
    assert title_of("Read", {"file_path": "a/b.py", "offset": 3}) == \
        "Read `a/b.py` (+1 more field)"
    assert title_of("Bash", {"command": "ls -la\nrm x"}) == "Bash: `ls -la` (+1 more line)"
    assert title_of("Bash", {"command": "x" * 300}) == \
        f"Bash: `{'x' * 119}…` (+181 more characters)"
    assert title_of("Bash", {"command": f"curl -H 'token={SECRET}'"}) == \
        "Bash: `curl -H 'token=[REDACTED]'`"
    assert title_of("TaskList", {}) == "TaskList"
