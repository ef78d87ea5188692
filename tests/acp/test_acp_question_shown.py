"""AskUserQuestion over ACP shows what it asks as the permission ask does (acp/shown.py):
characters that hide or reorder text are escaped in the title, in each choice's name and in
the content, with a warning naming them; title and names stay one line each; the answer
the model gets is the choice's own label. Through a real `fuxi-acp` over stdio."""

from __future__ import annotations

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt
from .test_acp_permission_shown import _assert_nothing_hides, _content_text

pytestmark = pytest.mark.timeout(180)

QUESTION = "Delete the file \u202etxt.exe\u202c?"
CHOICES = [{"label": "Keep\u200b it", "description": "nothing\u2028changes"},
           {"label": "Remove\nall", "description": "rm -rf \u2066everything\u2069"}]


async def test_hidden_characters_in_a_question_are_shown_escaped(fake_api, tmp_path):
    question = {"question": QUESTION, "header": "Delete", "multiSelect": False,
                "options": CHOICES}
    fake_api.add(Turn([tool_use("AskUserQuestion", {"questions": [question]})]),
                 Turn([text("Removed.")]))
    client = RecordingClient(lambda ask: "choice-1")
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("clean up"))
    [ask] = client.asks
    _assert_nothing_hides(ask)
    assert ask.tool_call.title == "Delete the file \\u202etxt.exe\\u202c?"
    assert [o.name for o in ask.options] == ["Keep\\u200b it", "Remove\\nall", "Skip"]
    content = _content_text(ask)
    assert "\\u2028" in content and "\\u2066" in content and "RIGHT-TO-LEFT OVERRIDE" in (
        content)
    answered = fake_api.requests[1]["messages"][-1]["content"][0]
    assert answered["content"] == f'The user answered: "{QUESTION}" = "Remove\nall".'
