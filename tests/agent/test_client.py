"""FuxiSDKClient: one conversation, queued prompts, streaming input, interrupt."""

from __future__ import annotations

import asyncio

import pytest

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    UserMessage,
    query,
)
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook.errors import ClientNotConnectedError

from .helpers import result_text


def _user(content: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": content},
            "parent_tool_use_id": None, "session_id": "s"}


async def _response(client: FuxiSDKClient) -> list:
    return [m async for m in client.receive_response()]


async def test_consecutive_queries_share_one_conversation(tmp_path):
    model = ScriptedModel([[text("first answer")], [text("second answer")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await client.query("one")
        first = await _response(client)
        await client.query("two")
        second = await _response(client)
    assert first[-1].result == "first answer" and second[-1].result == "second answer"
    assert first[-1].session_id == second[-1].session_id
    sent = model.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"][0]["text"] == "one" and sent[2]["content"][0]["text"] == "two"


async def test_prompts_sent_while_a_turn_runs_are_queued_not_dropped(tmp_path):
    model = ScriptedModel([[tool_use("Bash", {"command": "sleep 0.3"})], [text("answer one")],
                           [text("answer two")], [text("answer three")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash(sleep *)"])
    async with FuxiSDKClient(options) as client:
        await client.query("one")
        results, sent = [], False
        async for message in client.receive_messages():
            if isinstance(message, AssistantMessage) and not sent:
                # the first turn is about to run its tool: send two more prompts now
                await client.query("two")
                await client.query("three")
                sent = True
            if isinstance(message, ResultMessage):
                results.append(message.result)
                if len(results) == 3:
                    break
    assert results == ["answer one", "answer two", "answer three"]
    assert len(model.requests) == 4


async def test_streaming_input_prompt_to_connect(tmp_path):
    model = ScriptedModel([[text("A")], [text("B")]])

    async def prompts():
        yield _user("first")
        yield _user("second")

    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await client.query(prompts())
        first = await _response(client)
        second = await _response(client)
    assert [first[-1].result, second[-1].result] == ["A", "B"]


async def test_query_with_async_iterable_prompt_runs_each_message(tmp_path):
    model = ScriptedModel([[text("A")], [text("B")]])

    async def prompts():
        yield _user("first")
        yield _user("second")

    results = [m.result async for m in query(prompt=prompts(),
                                             options=FuxiAgentOptions(model=model, cwd=tmp_path))
               if isinstance(m, ResultMessage)]
    assert results == ["A", "B"]
    assert len(model.requests[1].messages) == 3  # one conversation


async def test_streaming_input_error_result_does_not_raise(tmp_path):
    glob = [tool_use("Glob", {"pattern": "*"})]
    model = ScriptedModel([glob, glob, [text("B")]])

    async def prompts():
        yield _user("first")
        yield _user("second")

    options = FuxiAgentOptions(model=model, cwd=tmp_path, max_turns=1, allowed_tools=["Glob"])
    subtypes = [m.subtype async for m in query(prompt=prompts(), options=options)
                if isinstance(m, ResultMessage)]
    assert subtypes == ["error_max_turns", "success"]


async def test_interrupt_stops_a_running_tool_and_the_conversation_stays_valid(tmp_path):
    model = ScriptedModel([
        [tool_use("Bash", {"command": "touch started; sleep 30; touch finished"})],
        [text("after interrupt")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash"])
    async with FuxiSDKClient(options) as client:
        await client.query("run it")
        async for message in client.receive_messages():
            if isinstance(message, AssistantMessage):
                break  # the tool call has been announced; the command is starting
        for _ in range(200):  # evidence, not a guess: the command is running
            if (tmp_path / "started").exists():
                break
            await asyncio.sleep(0.05)
        assert (tmp_path / "started").exists()
        await client.interrupt()
        rest = await _response(client)
        result = rest[-1]
        assert result.subtype == "error_during_execution" and result.is_error
        assert result.errors == ["Interrupted by the user."]
        await client.query("go on")
        after = await _response(client)
    assert after[-1].result == "after interrupt"
    assert not (tmp_path / "finished").exists()
    # the interrupted call was answered before the next prompt
    last_user = model.requests[1].messages[-1]["content"]
    assert last_user[0]["type"] == "tool_result" and last_user[0]["is_error"]
    assert "Interrupted by the user after" in result_text(last_user[0])  # it had started
    assert last_user[1] == {"type": "text", "text": "go on",
                            "cache_control": {"type": "ephemeral"}}


async def test_methods_before_connect_raise():
    client = FuxiSDKClient()
    with pytest.raises(ClientNotConnectedError):
        await client.query("hi")


async def test_tool_results_are_user_messages_in_the_stream(tmp_path):
    model = ScriptedModel([[tool_use("Glob", {"pattern": "*"})], [text("done")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path,
                                              allowed_tools=["Glob"])) as client:
        await client.query("go")
        messages = await _response(client)
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["SystemMessage", "AssistantMessage", "UserMessage", "AssistantMessage",
                     "ResultMessage"]
    assert isinstance(messages[2], UserMessage)


async def test_interrupt_right_after_query_stops_that_turn_before_it_calls_the_model(tmp_path):
    model = ScriptedModel([[text("never")], [text("the next one runs")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await client.query("start something")
        await client.interrupt()  # before the worker picked the prompt up
        stopped = await _response(client)
        assert stopped[-1].subtype == "error_during_execution"
        assert stopped[-1].terminal_reason == "aborted_streaming"
        assert model.requests == []
        await client.query("go on")
        assert (await _response(client))[-1].subtype == "success"
    assert len(model.requests) == 1


async def test_interrupt_with_nothing_running_returns_at_once(tmp_path):
    model = ScriptedModel([[text("hi")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await asyncio.wait_for(client.interrupt(), timeout=5)  # no hang
        await client.query("hello")
        assert (await _response(client))[-1].result == "hi"  # and nothing was spoiled


async def test_set_model_and_set_permission_mode_apply_to_what_follows(tmp_path):
    first = ScriptedModel([[tool_use("Write", {"file_path": "a.txt", "content": "x"})],
                           [text("written")]], name="claude-sonnet-5-5")
    second = ScriptedModel([[text("from the second model")]], name="claude-opus-5")
    options = FuxiAgentOptions(model=first, cwd=tmp_path)
    async with FuxiSDKClient(options) as client:
        await client.set_permission_mode("acceptEdits")
        await client.query("write a.txt")
        assert (await _response(client))[-1].result == "written"
        assert (tmp_path / "a.txt").read_text() == "x"  # acceptEdits allowed the write
        await client.set_model(second)
        info = await client.get_server_info()
        assert info["model"] == "claude-opus-5" and info["permission_mode"] == "acceptEdits"
        await client.query("again")
        assert (await _response(client))[-1].result == "from the second model"
        history = second.requests[0].messages
        assert "write a.txt" in str(history)  # the conversation went on with the new model
        with pytest.raises(Exception, match="unknown permission_mode"):
            await client.set_permission_mode("yolo")


async def test_server_info_is_none_before_connect():
    assert await FuxiSDKClient().get_server_info() is None
