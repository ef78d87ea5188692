"""The request body encoded once per message (models/wire_body.py): what is sent equals
the request, turn after turn, whatever the conversation does to its history (append,
replace, compact, repair), and the bytes reach the fake Messages API through the real
`anthropic` client as the API reads them."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.context.caching import with_cache_breakpoints
from fuxi_notebook._internal.models.anthropic import AnthropicModel
from fuxi_notebook._internal.models.base import ModelRequest
from fuxi_notebook._internal.models.wire_body import BodyEncoder, dumps
from fuxi_notebook.testing import FakeMessagesServer, Turn, text

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
#: what a turn does to the history: append a message, replace one, drop the oldest two
steps = st.lists(st.tuples(st.sampled_from(["append", "replace", "mark", "compact", "same"]),
                           texts, st.integers(0, 50)), min_size=1, max_size=25)


def _body(history: list[dict[str, Any]], system: list[dict[str, Any]],
          tools: list[dict[str, Any]]) -> dict[str, Any]:
    marked_system, marked_tools, messages = with_cache_breakpoints(system, tools, history)
    return {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": messages,
            "system": marked_system, "tools": marked_tools, "stream": True}


@settings(max_examples=150, deadline=None, derandomize=True)
@given(steps)
def test_each_body_decodes_to_the_request_whatever_the_history_does(actions):
    encoder = BodyEncoder()
    system = [{"type": "text", "text": "You are Fuxi."}, {"type": "text", "text": "Be brief."}]
    tools = [{"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}]
    history: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    for action, words, where in actions:
        if action == "append":
            role = "assistant" if history[-1]["role"] == "user" else "user"
            history.append({"role": role, "content": [{"type": "text", "text": words or "."}]})
        elif action == "replace":  # as repair and add_user_prompt do: a new dict
            index = where % len(history)
            old = history[index]
            history[index] = {**old, "content": [*old["content"], {"type": "text",
                                                                    "text": words or "!"}]}
        elif action == "mark":  # a copy sharing the content list (issue 35, finding 16)
            index = where % len(history)
            history[index] = {**history[index], "cache_control": {"type": words or "x"}}
        elif action == "compact" and len(history) > 2:
            history[:] = history[2:]
        body = _body(history, system, tools)
        assert encoder.encode(body) == dumps(body)  # the very bytes of encoding it whole


def test_a_message_changed_in_place_is_encoded_again_when_its_content_list_is_replaced():
    encoder = BodyEncoder()
    message = {"role": "user", "content": [{"type": "text", "text": "one"}]}
    first = encoder.encode({"messages": [message]})
    message["content"] = [{"type": "text", "text": "two"}]
    assert json.loads(encoder.encode({"messages": [message]}))["messages"][0] == message
    assert b"one" in first


def test_a_content_list_grown_in_place_is_encoded_again_wherever_it_is():
    """The kept prefix is checked by each message's content list and its length, for the
    first message, one in the middle and the last."""
    encoder = BodyEncoder()
    history = [{"role": "user" if i % 2 == 0 else "assistant",
                "content": [{"type": "text", "text": f"m{i}"}]} for i in range(9)]
    for index in (0, 4, 8):
        encoder.encode({"messages": history})
        history[index]["content"].append({"type": "text", "text": f"more {index}"})
        sent = json.loads(encoder.encode({"messages": history}))["messages"]
        assert sent == history


def test_a_model_shared_by_threads_encodes_each_body_right():
    """Loops in four threads share one model's encoder; their tool lists start with the
    same definition, as every session's do. Switching threads as often as it can, each
    body is still the very bytes of encoding it whole."""
    import sys
    import threading

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    encoder = BodyEncoder()
    tools = [{"name": f"T{i}", "description": "d" * 50, "input_schema": {"type": "object"}}
             for i in range(15)]
    wrong: list[tuple[int, int, str]] = []

    def converse(tag: int) -> None:
        history: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": f"{tag} go"}]}]
        for turn in range(400):
            history = [*history, {"role": "assistant" if turn % 2 == 0 else "user",
                                  "content": [{"type": "text", "text": f"{tag}-{turn}"}]}]
            body = {"model": "m", "tools": tools[:5 + (turn + tag) % 10], "messages": history}
            try:
                if encoder.encode(body) != dumps(body):
                    wrong.append((tag, turn, "a different body"))
            except Exception as error:  # e.g. a dict changed while another thread read it
                wrong.append((tag, turn, repr(error)))

    threads = [threading.Thread(target=converse, args=(tag,)) for tag in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)
    assert wrong == []


def test_items_that_are_not_objects_are_encoded_as_they_are():
    encoder = BodyEncoder()
    message = {"role": "user", "content": "hi"}
    for _ in range(2):
        assert json.loads(encoder.encode({"messages": ["plain", message, 3]})) == {
            "messages": ["plain", message, 3]}


def test_the_check_catches_a_block_changed_in_place(monkeypatch):
    """A block edited in place keeps its message, list and length: the one change the
    identity check cannot see. The loop never does it; the check the tests turn on
    (FUXI_CHECK_WIRE_BODY=1) says so if it ever does."""
    monkeypatch.setenv("FUXI_CHECK_WIRE_BODY", "1")
    encoder = BodyEncoder()
    message = {"role": "user", "content": [{"type": "text", "text": "one"}]}
    encoder.encode({"messages": [message]})
    message["content"][0]["text"] = "changed"
    with pytest.raises(AssertionError, match="changed in place"):
        encoder.encode({"messages": [message]})


def test_the_cache_keeps_only_what_recent_bodies_hold():
    encoder = BodyEncoder()
    for turn in range(200):
        encoder.encode({"messages": [{"role": "user", "content": [{"type": "text",
                                                                    "text": str(turn)}]}]})
    assert len(encoder._lists["messages"]._seen) <= 66


async def test_the_real_client_sends_the_bytes_and_the_api_reads_them():
    history = [{"role": "user", "content": [{"type": "text", "text": "héllo ✓"}]}]
    with FakeMessagesServer() as server:
        server.add(Turn([text("one")]), Turn([text("two")]))
        model = AnthropicModel("claude-sonnet-5-5", api_key="test-key", base_url=server.url)
        for answer in ("one", "two"):
            request = ModelRequest(model="claude-sonnet-5-5", max_tokens=64,
                                   messages=copy.deepcopy(history),
                                   system=[{"type": "text", "text": "You are Fuxi."}])
            items = [item async for item in model.stream(request)]
            assert items[-1].content == [{"type": "text", "text": answer}]
            history += [{"role": "assistant", "content": items[-1].content},
                        {"role": "user", "content": [{"type": "text", "text": "again"}]}]
        sent = server.requests
        headers = server.request_headers
    assert sent[0]["messages"][0]["content"][0]["text"] == "héllo ✓" and sent[0]["stream"]
    assert len(sent[1]["messages"]) == 3 and server.errors == []
    assert headers[0]["content-type"] == "application/json"
    assert "test-key" in (headers[0].get("x-api-key", "") + headers[0].get("authorization", ""))
    assert "anthropic-version" in headers[0]  # the client's own headers, as create() sends


async def test_a_model_the_api_retires_is_warned_about_as_the_client_would():
    with FakeMessagesServer() as server:
        server.add(Turn([text("ok")]))
        model = AnthropicModel("claude-opus-4-5", api_key="test-key", base_url=server.url)
        request = ModelRequest(model="claude-opus-4-5", max_tokens=16,
                               messages=[{"role": "user", "content": "hi"}])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            [item async for item in model.stream(request)]
    assert any(issubclass(w.category, DeprecationWarning) and "claude-opus-4-5" in str(w.message)
               and "end-of-life" in str(w.message) for w in caught)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.booleans(), steps), min_size=2, max_size=4))
def test_conversations_sharing_a_model_each_get_their_own_bodies(conversations):
    """A parent and its subagents share one model, so one encoder: their turns interleave."""
    encoder = BodyEncoder()
    system = [{"type": "text", "text": "You are Fuxi."}]
    histories = [[{"role": "user", "content": [{"type": "text", "text": f"task {n}"}]}]
                 for n in range(len(conversations))]
    longest = max(len(actions) for _, actions in conversations)
    for turn in range(longest):
        for (_, actions), history in zip(conversations, histories, strict=True):
            if turn >= len(actions):
                continue
            action, words, where = actions[turn]
            if action in ("append", "same"):
                role = "assistant" if history[-1]["role"] == "user" else "user"
                history.append({"role": role, "content": [{"type": "text", "text": words or "."}]})
            elif action == "replace":
                index = where % len(history)
                history[index] = {**history[index], "content": [{"type": "text", "text": "!"}]}
            elif len(history) > 2:
                history[:] = history[2:]
            body = _body(history, system, [])
            assert json.loads(encoder.encode(body)) == body


def test_a_turn_encodes_what_it_added_however_long_the_history(monkeypatch):
    """The messages of earlier turns are not encoded again: the number of encodings per
    turn (the new messages, the marked copies, the other keys) stays the same from turn 5
    to turn 200."""
    from fuxi_notebook._internal.models import wire_body

    calls: list[int] = []
    real = wire_body.dumps
    monkeypatch.setattr(wire_body, "dumps", lambda value: calls.append(1) or real(value))
    encoder = BodyEncoder()
    system = [{"type": "text", "text": "You are Fuxi."}]
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    per_turn = []
    for turn in range(200):
        history += [{"role": "assistant", "content": [{"type": "text", "text": f"{turn}"}]},
                    {"role": "user", "content": [{"type": "text", "text": "more"}]}]
        calls.clear()
        encoder.encode(_body(history, system, []))
        per_turn.append(len(calls))
    assert max(per_turn[5:]) == min(per_turn[5:]) <= 16


def test_a_message_replaced_by_a_copy_sharing_its_content_is_encoded_again():
    """Issue 35, finding 16 (a mutation that survived): `{**m, key: …}` keeps `m`'s
    content list; the body must send the copy, not the bytes kept for `m`."""
    encoder = BodyEncoder()
    first = {"role": "user", "content": [{"type": "text", "text": "one"}]}
    second = {"role": "assistant", "content": [{"type": "text", "text": "two"}]}
    history = [first, second, {"role": "user", "content": [{"type": "text", "text": "3"}]}]
    encoder.encode({"messages": history})
    for index in (0, 1, 2):
        history = [*history]
        history[index] = {**history[index], "cache_control": {"type": "ephemeral"}}
        body = {"messages": history}
        assert encoder.encode(body) == dumps(body)
