"""Issue 35, the class "a secret split across the pieces of a stream", over ACP: the model's
answer and thinking stream to a real client (a real `fuxi-acp` over stdio) as chunks cut
at every position (one character a delta) and at other sizes; no chunk shows any part of
a secret of the shared corpus (`tests/sessions/split_secrets.py`), and the chunks, joined,
are what redacting the whole answer gives."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from fuxi_notebook._internal.sessions.redact import redact_text
from fuxi_notebook.testing import Turn, text, thinking

from ..sessions.split_secrets import CORPUS, ENV, leaks
from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt

#: what the agent's redaction knows: secret-named environment values and shapes
CASES = [case for case in CORPUS if not case.explicit]
ANSWER = "".join(case.text for case in CASES)


@pytest.mark.parametrize("chunk", [1, 5, 24, len(ANSWER)])
async def test_no_chunk_shows_part_of_a_secret(fake_api, tmp_path, chunk):
    fake_api.chunk = chunk
    fake_api.add(Turn([thinking(ANSWER), text(ANSWER)]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path, **ENV) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("tell me everything"))
    with mock.patch.dict(os.environ, ENV):
        whole = redact_text(ANSWER)
    for kind in ("agent_message_chunk", "agent_thought_chunk"):
        chunks = [update.content.text for update in client.of(kind)]
        assert "".join(chunks) == whole, kind
        shown = "\n".join(chunks)  # each chunk on its own, and all of them
        assert not [case.name for case in CASES if leaks(case, shown) or leaks(case, whole)]
    if chunk == 1:
        assert len(client.of("agent_message_chunk")) > len(CASES)  # it did come in pieces
