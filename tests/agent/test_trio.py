"""Under trio, as the comparable SDK runs (its examples/streaming_mode_trio.py): the
client and query() work from a trio program, the loop itself running on an asyncio loop
in a thread of its own, and the user's own coroutines (hooks, `can_use_tool`, SDK MCP
tools, a streaming-input iterable) run on trio, so they may await trio's functions."""

from __future__ import annotations

import threading
from typing import Any

import pytest

trio = pytest.importorskip("trio")

from fuxi_notebook import (  # noqa: E402
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultError,
    ResultMessage,
    ScriptedModel,
    TextBlock,
    create_sdk_mcp_server,
    query,
    tool,
)
from fuxi_notebook.testing import text, tool_use  # noqa: E402


def _texts(messages: list) -> list[str]:
    return [b.text for m in messages if isinstance(m, AssistantMessage)
            for b in m.content if isinstance(b, TextBlock)]


def test_a_multi_turn_client_conversation_under_trio(tmp_path):
    script = ScriptedModel([[text("42")], [text("84")], [text("12.00")]])

    async def main() -> list[list[str]]:
        said = []
        async with FuxiSDKClient(FuxiAgentOptions(model=script, cwd=tmp_path)) as client:
            for prompt in ("What's 15 + 27?", "Now multiply that result by 2",
                           "Divide that by 7 and round to 2 decimal places"):
                await client.query(prompt)
                said.append(_texts([m async for m in client.receive_response()]))
        return said

    assert trio.run(main) == [["42"], ["84"], ["12.00"]]
    assert [r.messages[-1]["content"][-1]["text"] for r in script.requests][-1] == (
        "Divide that by 7 and round to 2 decimal places")


@pytest.mark.filterwarnings("ignore::fuxi_notebook.CanUseToolShadowedWarning")
def test_callbacks_and_tools_run_on_the_trio_loop(tmp_path):
    seen: list[tuple[str, str]] = []

    def note(what: str) -> None:
        trio.lowlevel.current_trio_token()  # raises off trio's thread
        seen.append((what, threading.current_thread().name))

    async def hook(input_data: dict, tool_use_id: str | None, context: Any) -> dict:
        await trio.sleep(0)
        note(f"hook {input_data['tool_name']}")
        return {}

    async def approve(name: str, tool_input: dict, context: Any) -> PermissionResultAllow:
        await trio.sleep(0)
        note(f"approve {name}")
        return PermissionResultAllow()

    @tool("double", "Doubles a number", {"n": int})
    async def double(args: dict) -> dict:
        await trio.sleep(0)
        note("tool double")
        return {"content": [{"type": "text", "text": str(args["n"] * 2)}]}

    script = ScriptedModel([[tool_use("mcp__calc__double", {"n": 21})],
                            [tool_use("Bash", {"command": "touch made"})], [text("done")]])
    options = FuxiAgentOptions(
        model=script, cwd=tmp_path, can_use_tool=approve, allowed_tools=["mcp__calc__double"],
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[double])},
        hooks={"PreToolUse": [HookMatcher(hooks=[hook])]})

    async def main() -> list:
        return [m async for m in query(prompt="double 21, then make a file", options=options)]

    messages = trio.run(main)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    assert [what for what, _ in seen] == [
        "hook mcp__calc__double", "tool double", "hook Bash", "approve Bash"]
    assert {thread for _, thread in seen} == {threading.main_thread().name}
    assert (tmp_path / "made").exists()
    assert script.requests[1].messages[-1]["content"][0]["content"] == "42"


def test_a_streaming_input_written_for_trio(tmp_path):
    script = ScriptedModel([[text("one")], [text("two")]])

    async def prompts():
        for words in ("first", "second"):
            await trio.sleep(0)
            yield {"type": "user", "message": {"role": "user", "content": words}}

    async def main() -> list[str | None]:
        return [m.result async for m in query(prompt=prompts(), options=FuxiAgentOptions(
            model=script, cwd=tmp_path)) if isinstance(m, ResultMessage)]

    assert trio.run(main) == ["one", "two"]


def test_an_error_result_raises_under_trio_too(tmp_path):
    glob = [tool_use("Glob", {"pattern": "*"})]
    options = FuxiAgentOptions(model=ScriptedModel([glob, glob]), cwd=tmp_path, max_turns=1,
                               allowed_tools=["Glob"])

    async def main() -> None:
        async for _ in query(prompt="look", options=options):
            pass

    with pytest.raises(ResultError) as raised:
        trio.run(main)
    assert raised.value.subtype == "error_max_turns"
    assert not [t for t in threading.enumerate() if t.name == "fuxi-asyncio"]


def test_a_trio_cancel_scope_stops_waiting_and_the_client_still_closes(tmp_path):
    started, finished = threading.Event(), []

    async def slow(input_data: dict, tool_use_id: str | None, context: Any) -> dict:
        started.set()
        await trio.sleep(30)
        finished.append(True)
        return {}

    script = ScriptedModel([[tool_use("Glob", {"pattern": "*"})], [text("after")]])
    options = FuxiAgentOptions(model=script, cwd=tmp_path, allowed_tools=["Glob"],
                               hooks={"PreToolUse": [HookMatcher(hooks=[slow], timeout=60)]})

    async def main() -> str:
        async with FuxiSDKClient(options) as client:
            await client.query("look")
            with trio.move_on_after(5) as scope:
                async for _ in client.receive_response():
                    if started.is_set():
                        await client.interrupt()
            assert not scope.cancelled_caught
            return "closed"

    assert trio.run(main) == "closed"
    assert finished == []  # the hook was cancelled on trio's side, not waited for
    assert len(script.requests) == 1  # the interrupted turn asked nothing more
    assert not [t for t in threading.enumerate() if t.name == "fuxi-asyncio"]
