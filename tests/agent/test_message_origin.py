"""`ResultMessage.origin`, as the comparable SDK's e2e test_message_origin checks it: a
host that stamps `origin` on the user message it streams in gets it back on that turn's
result (also an error result); an unstamped prompt's result has None."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, ResultMessage, ScriptedModel, query
from fuxi_notebook.testing import text, tool_use


def _user(words: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": words},
            "parent_tool_use_id": None, **extra}


async def _one(message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield message


async def test_a_host_stamp_comes_back_on_its_turns_result(tmp_path):
    results: list[ResultMessage] = []
    options = FuxiAgentOptions(model=ScriptedModel([[text("one")], [text("two")]]),
                               cwd=tmp_path, max_turns=1)
    async with FuxiSDKClient(options) as client:
        for message in (_user("Reply with exactly: one", origin={"kind": "human"}),
                        _user("Reply with exactly: two")):
            await client.query(_one(message))
            results += [m async for m in client.receive_response()
                        if isinstance(m, ResultMessage)]
    stamped, unstamped = results
    assert stamped.origin == {"kind": "human"} and stamped.result == "one"
    assert unstamped.origin is None


async def test_query_streaming_input_echoes_each_messages_origin_also_on_an_error(tmp_path):
    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield _user("first", origin={"kind": "system"})
        yield _user("second", origin={"kind": "agent"})

    glob = [tool_use("Glob", {"pattern": "*"})]
    script = ScriptedModel([[text("ok")], glob, glob])  # a second tool turn: over the limit
    options = FuxiAgentOptions(model=script, cwd=tmp_path, max_turns=1,
                               allowed_tools=["Glob"])
    results = [m async for m in query(prompt=prompts(), options=options)
               if isinstance(m, ResultMessage)]
    assert [(r.origin, r.subtype) for r in results] == [
        ({"kind": "system"}, "success"), ({"kind": "agent"}, "error_max_turns")]
