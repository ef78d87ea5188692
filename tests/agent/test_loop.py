"""The loop through `query()` with a ScriptedModel: turns, messages, limits, results."""

from __future__ import annotations

import pytest

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    ResultMessage,
    ScriptedModel,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from fuxi_notebook._internal.models.script import Turn, text, thinking, tool_use
from fuxi_notebook.errors import ConfigurationError, ModelError

from .helpers import collect, result_text, tool_results


async def test_text_only_run_yields_init_assistant_and_success(tmp_path):
    model = ScriptedModel([[text("Hello there.")]])
    messages, error = await collect("hi", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert error is None
    assert isinstance(messages[0], SystemMessage) and messages[0].subtype == "init"
    init = messages[0].data
    assert init["cwd"] == str(tmp_path.resolve())
    assert init["permission_mode"] == "default"
    assert "Read" in init["tools"] and init["model"] == "scripted-model"
    assert isinstance(messages[1], AssistantMessage)
    assert messages[1].content == [TextBlock(text="Hello there.")]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.subtype == "success" and not result.is_error
    assert result.result == "Hello there."
    assert result.num_turns == 1
    assert result.session_id == init["session_id"]
    assert result.stop_reason == "end_turn"
    model.assert_complete()


async def test_each_block_is_its_own_assistant_message_sharing_message_id(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    model = ScriptedModel([
        [thinking("Let me think."), text("Reading."), tool_use("Read", {"file_path": "a.txt"})],
        [text("Done.")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
    messages, _ = await collect("go", options)
    first = [m for m in messages if isinstance(m, AssistantMessage)][:3]
    assert [type(m.content[0]).__name__ for m in first] == [
        "ThinkingBlock", "TextBlock", "ToolUseBlock"]
    assert all(len(m.content) == 1 for m in first)
    assert len({m.message_id for m in first}) == 1 and first[0].message_id
    assert first[0].usage["input_tokens"] == 10  # the response's usage at message_start
    # thinking travels back to the API unchanged, signature included
    sent = model.requests[1].messages[1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "Let me think.", "signature": "sig"}


async def test_tool_round_trip_feeds_the_result_back(tmp_path):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    model = ScriptedModel([
        [tool_use("Read", {"file_path": "notes.txt"})],
        [text("It says 42.")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
    messages, error = await collect("what do the notes say?", options)
    assert error is None
    user = [m for m in messages if isinstance(m, UserMessage)]
    assert len(user) == 1
    block = user[0].content[0]
    assert isinstance(block, ToolResultBlock) and not block.is_error
    assert "the answer is 42" in result_text({"content": block.content})
    results = tool_results(model.requests[1].messages)
    assert [r["tool_use_id"] for r in results] == ["toolu_01"]
    assert messages[-1].num_turns == 2 and messages[-1].result == "It says 42."


async def test_max_turns_counts_tool_turns_and_raises_after_the_result(tmp_path):
    model = ScriptedModel([
        [tool_use("Bash", {"command": "touch one"})],
        [tool_use("Bash", {"command": "touch two"})],
        [text("never requested")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, max_turns=1,
                               allowed_tools=["Bash(touch *)"])
    messages, error = await collect("go", options)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_turns"
    assert result.is_error and result.result is None
    assert error is not None and error.result_message is result
    assert "maximum number of turns" in str(error)
    assert (tmp_path / "one").exists()
    assert not (tmp_path / "two").exists()  # the call past the limit never ran
    assert len(model.requests) == 2


async def test_max_budget_stops_before_the_next_request(tmp_path):
    expensive = {"input_tokens": 1_000_000}  # $2 at the sonnet-5-5 price
    model = ScriptedModel([
        Turn([tool_use("Glob", {"pattern": "*"})], usage=expensive),
        [text("never requested")],
    ], name="claude-sonnet-5-5")
    options = FuxiAgentOptions(model=model, cwd=tmp_path, max_budget_usd=1.0,
                               allowed_tools=["Glob"])
    messages, error = await collect("go", options)
    result = messages[-1]
    assert result.subtype == "error_max_budget_usd"
    assert result.total_cost_usd == pytest.approx(2.0, rel=0.01)
    assert len(model.requests) == 1
    assert error is not None


async def test_usage_and_cost_accumulate_per_model(tmp_path):
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 10_000,
             "cache_creation_input_tokens": 2000, "output_tokens": 500}
    model = ScriptedModel([
        Turn([tool_use("Glob", {"pattern": "*"})], usage=usage),
        Turn([text("ok")], usage=usage),
    ], name="claude-opus-5")
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Glob"])
    messages, _ = await collect("go", options)
    result = messages[-1]
    assert result.usage == {"input_tokens": 2000, "output_tokens": 1000,
                            "cache_creation_input_tokens": 4000,
                            "cache_read_input_tokens": 20_000}
    # opus-5: input 5, write 6.25, read 0.5, output 25 per million
    expected = 2 * (1000 * 5 + 2000 * 6.25 + 10_000 * 0.5 + 500 * 25) / 1e6
    assert result.total_cost_usd == pytest.approx(expected)
    assert result.model_usage["claude-opus-5"]["costUSD"] == pytest.approx(expected)


@pytest.mark.parametrize("reason", ["refusal", "max_tokens", "end_turn"])
async def test_stop_reason_is_surfaced(tmp_path, reason):
    model = ScriptedModel([Turn([text("partial")], stop_reason=reason)])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert messages[-1].stop_reason == reason


async def test_tool_use_cut_off_by_max_tokens_is_never_executed(tmp_path):
    model = ScriptedModel([
        Turn([tool_use("Bash", {"command": "touch cut"})], stop_reason="max_tokens"),
        [text("ok")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Bash"])
    await collect("go", options)
    assert not (tmp_path / "cut").exists()
    (result,) = tool_results(model.requests[1].messages)
    assert result["is_error"] and "max_tokens" in result_text(result)


async def test_every_tool_use_gets_exactly_one_result_even_when_broken(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    model = ScriptedModel([
        [tool_use("NoSuchTool", {}),
         tool_use("Read", '{"file_path": "a.t'),  # invalid JSON
         tool_use("Read", {"path": "a.txt"}),  # schema mismatch
         tool_use("Read", {"file_path": "missing.txt"}),  # tool failure
         tool_use("Read", {"file_path": "a.txt"})],
        [text("ok")],
    ])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Read"])
    await collect("go", options)
    results = tool_results(model.requests[1].messages)
    assert [r["tool_use_id"] for r in results] == [f"toolu_0{i}" for i in range(1, 6)]
    texts = [result_text(r) for r in results]
    assert [bool(r.get("is_error")) for r in results] == [True, True, True, True, False]
    assert "No such tool available: NoSuchTool" in texts[0]
    assert "not valid JSON" in texts[1] and '{"file_path": "a.t' in texts[1]
    assert "file_path" in texts[2] and "Invalid input" in texts[2]
    assert "missing.txt" in texts[3]
    # the assistant turn sent back carries valid (object) inputs only
    sent_calls = model.requests[1].messages[1]["content"]
    assert all(isinstance(b["input"], dict) and "_invalid_input" not in b for b in sent_calls)


async def test_partial_messages_only_when_asked(tmp_path):
    model = ScriptedModel([[text("streamed text")], [text("again")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, include_partial_messages=True)
    messages, _ = await collect("go", options)
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    deltas = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert deltas == "streamed text"
    plain, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert not any(isinstance(m, StreamEvent) for m in plain)


async def test_request_carries_effort_thinking_system_and_cache_breakpoints(tmp_path):
    model = ScriptedModel([[text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, effort="high",
                               thinking={"type": "adaptive"}, system_prompt="Be brief.")
    await collect("go", options)
    request = model.requests[0]
    assert request.output_config == {"effort": "high"}
    assert request.thinking == {"type": "adaptive"}
    assert request.system == [{"type": "text", "text": "Be brief.",
                               "cache_control": {"type": "ephemeral"}}]
    assert request.messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_max_thinking_tokens_becomes_enabled_thinking(tmp_path):
    model = ScriptedModel([[text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, max_thinking_tokens=4000,
                               max_output_tokens=2000)
    await collect("go", options)
    request = model.requests[0]
    assert request.thinking == {"type": "enabled", "budget_tokens": 4000}
    assert request.max_tokens > 4000


async def test_model_error_ends_with_error_during_execution(tmp_path):
    model = ScriptedModel([ModelError("API error 500: boom", status=500)])
    messages, error = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    result = messages[-1]
    assert result.subtype == "error_during_execution"
    assert result.errors == ["API error 500: boom"]
    assert error is not None and "boom" in str(error)


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("max_turns", 0, "max_turns"),
    ("max_budget_usd", -1, "max_budget_usd"),
    ("effort", "extreme", "effort"),
    ("permission_mode", "yolo", "permission_mode"),
    ("tools", ["Read", "Teleport"], "Teleport"),
    ("allowed_tools", ["Bash(("], "invalid permission rule"),
    ("cwd", "/no/such/dir", "cwd"),
])
async def test_bad_options_raise_a_clear_configuration_error(field, value, needle):
    options = FuxiAgentOptions(model=ScriptedModel([]), **{field: value})
    with pytest.raises(ConfigurationError, match=needle):
        await collect("go", options)


async def test_missing_api_key_names_the_variable(tmp_path):
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        await collect("go", FuxiAgentOptions(cwd=tmp_path))


async def test_fuxi_model_env_and_option_choose_the_model(tmp_path, monkeypatch):
    from fuxi_notebook._internal.models.anthropic import resolve_model
    from fuxi_notebook._internal.models.names import DEFAULT_MODEL
    from fuxi_notebook._internal.models.pricing import is_known_model

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    assert resolve_model(None).name == DEFAULT_MODEL and is_known_model(DEFAULT_MODEL)
    monkeypatch.setenv("FUXI_MODEL", "claude-opus-5")
    assert resolve_model(None).name == "claude-opus-5"
    assert resolve_model("claude-haiku-5-5").name == "claude-haiku-5-5"


async def test_setting_sources_project_loads_fuxi_md(tmp_path):
    (tmp_path / "FUXI.md").write_text("Always answer in French.\n")
    model = ScriptedModel([[text("ok")], [text("ok")]])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"]))
    assert "Always answer in French." in model.requests[0].system[-1]["text"]
    # None reads every source, as the comparable SDK does; [] reads none
    model.add([text("ok")])
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path))
    assert "Always answer in French." in model.requests[1].system[-1]["text"]
    await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=[]))
    assert all("French" not in b["text"] for b in model.requests[2].system)


async def test_assistant_tool_use_block_has_parsed_input(tmp_path):
    model = ScriptedModel([[tool_use("Glob", {"pattern": "*.py"})], [text("none")]])
    messages, _ = await collect("go", FuxiAgentOptions(model=model, cwd=tmp_path,
                                                       allowed_tools=["Glob"]))
    calls = [m.content[0] for m in messages if isinstance(m, AssistantMessage)
             and isinstance(m.content[0], ToolUseBlock)]
    assert calls == [ToolUseBlock(id="toolu_01", name="Glob", input={"pattern": "*.py"})]


async def test_a_budget_with_an_unpriced_model_is_refused_not_ignored(tmp_path):
    """A budget counted in dollars could never stop a model without a known price."""
    from fuxi_notebook._internal.agent.assemble import build_session
    from fuxi_notebook.errors import ConfigurationError

    model = ScriptedModel([[text("hi")]], name="gpt-4o")
    with pytest.raises(ConfigurationError, match="price is unknown"):
        build_session(FuxiAgentOptions(model=model, cwd=tmp_path, max_budget_usd=1.0))
    build_session(FuxiAgentOptions(model=model, cwd=tmp_path))  # without a budget it runs
