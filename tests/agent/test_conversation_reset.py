"""`/clear` in a FuxiSDKClient, as the comparable SDK's e2e test_conversation_reset
expects: a ConversationResetMessage stamped with the old session's id, then a result in a
fresh session; the next prompt starts from an empty conversation, with no model call for
the `/clear` itself."""

from __future__ import annotations

from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, ResultMessage, ScriptedModel
from fuxi_notebook.extra_types import ConversationResetMessage
from fuxi_notebook.testing import text


async def test_clear_emits_a_reset_and_goes_on_in_a_fresh_session(tmp_path):
    model = ScriptedModel([[text("one")], [text("fresh")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path, max_turns=1)) as (
            client):
        await client.query("Reply with exactly: one")
        [first] = [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
        await client.query("/clear")
        cleared = [m async for m in client.receive_response()]
        await client.query("Who are you?")
        [after] = [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
    reset, clear_result = cleared
    assert isinstance(reset, ConversationResetMessage)
    assert reset.session_id == first.session_id and reset.new_conversation_id and reset.uuid
    assert isinstance(clear_result, ResultMessage) and clear_result.subtype == "success"
    assert clear_result.session_id != first.session_id == reset.session_id
    assert after.session_id == clear_result.session_id and after.result == "fresh"
    assert len(model.requests) == 2  # `/clear` asked the model nothing
    assert [m["role"] for m in model.requests[1].messages] == ["user"]  # a fresh history
