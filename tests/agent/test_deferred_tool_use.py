"""A PreToolUse hook's `permissionDecision: "defer"`, as the comparable SDK documents it:
the call does not run, and when it is the only call of its response the run ends with
`stop_reason` and `terminal_reason` "tool_deferred" and the call in
`ResultMessage.deferred_tool_use`, a success (not an error: query() does not raise). On
resume the deferred call is decided first: the hooks are asked again and, allowed, it
runs before the new prompt is sent; deferred again, the run ends again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import (
    DeferredToolUse,
    FuxiAgentOptions,
    FuxiSDKClient,
    HookMatcher,
    ResultMessage,
    ScriptedModel,
    ToolResultBlock,
    UserMessage,
    query,
)
from fuxi_notebook.testing import text, tool_use

from .helpers import tool_results


def _deferring(decide_later: set[str]):
    async def hook(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict:
        if input_data["tool_input"].get("command") in decide_later:
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "defer",
                                           "permissionDecisionReason": "needs a human"}}
        return {}
    return hook


def _options(tmp_path: Path, script: ScriptedModel, later: set[str]) -> FuxiAgentOptions:
    return FuxiAgentOptions(model=script, cwd=tmp_path, allowed_tools=["Bash"],
                            hooks={"PreToolUse": [HookMatcher(matcher="Bash",
                                                              hooks=[_deferring(later)])]})


async def test_a_deferred_call_ends_the_run_with_the_call_in_the_result(tmp_path):
    script = ScriptedModel([[tool_use("Bash", {"command": "touch deployed"})]])
    messages = [m async for m in query(prompt="deploy", options=_options(
        tmp_path, script, {"touch deployed"}))]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert (result.subtype, result.stop_reason, result.terminal_reason) == (
        "success", "tool_deferred", "tool_deferred")
    deferred = result.deferred_tool_use
    assert isinstance(deferred, DeferredToolUse) and deferred.name == "Bash"
    assert deferred.input == {"command": "touch deployed"} and deferred.id.startswith("toolu_")
    assert not (tmp_path / "deployed").exists()  # it did not run
    assert result.permission_denials == []  # deferred, not denied
    assert len(script.requests) == 1  # the model was not asked again


async def test_a_deferred_call_among_others_is_not_run_and_the_run_goes_on(tmp_path):
    script = ScriptedModel([
        [tool_use("Bash", {"command": "touch a"}), tool_use("Bash", {"command": "touch b"})],
        [text("b ran; a waits for a human.")]])
    messages = [m async for m in query(prompt="both", options=_options(tmp_path, script,
                                                                       {"touch a"}))]
    result = messages[-1]
    assert result.subtype == "success" and result.deferred_tool_use is None
    assert result.terminal_reason == "completed"
    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()
    first, second = tool_results(script.requests[1].messages)
    assert first["is_error"] and "deferred" in str(first["content"]) and "needs a human" in str(
        first["content"])
    assert not second.get("is_error")


@pytest.fixture
def persisted(monkeypatch):
    monkeypatch.delenv("FUXI_SKIP_SESSION_PERSISTENCE", raising=False)


async def _deferred_session(tmp_path: Path) -> ResultMessage:
    deferred = ScriptedModel([[tool_use("Bash", {"command": "touch deployed"})]])
    first = [m async for m in query(prompt="deploy", options=_options(
        tmp_path, deferred, {"touch deployed"}))][-1]
    assert first.deferred_tool_use is not None
    return first


async def test_on_resume_the_deferred_call_runs_once_allowed_then_the_prompt(tmp_path,
                                                                             persisted):
    first = await _deferred_session(tmp_path)
    again = ScriptedModel([[text("Deployed.")]])
    options = _options(tmp_path, again, set())  # the human said yes: the hook allows now
    options.resume = first.session_id
    messages = [m async for m in query(prompt="approved, go on", options=options)]
    assert messages[-1].subtype == "success" and (tmp_path / "deployed").exists()
    results = [b for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
               for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.tool_use_id for r in results] == [first.deferred_tool_use.id]
    [request] = again.requests  # the model's first look: the real result, then the prompt
    sent = request.messages[-1]["content"]
    assert sent[0]["type"] == "tool_result" and not sent[0].get("is_error")
    assert sent[-1]["text"] == "approved, go on" and "deferred" not in str(sent)


async def test_deferred_again_on_resume_ends_the_run_again_without_the_prompt(tmp_path,
                                                                              persisted):
    first = await _deferred_session(tmp_path)
    again = ScriptedModel([])
    options = _options(tmp_path, again, {"touch deployed"})
    options.resume = first.session_id
    result = [m async for m in query(prompt="still waiting", options=options)][-1]
    assert result.terminal_reason == "tool_deferred" and not result.is_error
    assert result.deferred_tool_use.id == first.deferred_tool_use.id
    assert again.requests == [] and not (tmp_path / "deployed").exists()


async def test_a_client_decides_the_deferred_call_with_its_next_query(tmp_path):
    decide_later = {"touch deployed"}
    script = ScriptedModel([[tool_use("Bash", {"command": "touch deployed"})], [text("Done.")]])
    async with FuxiSDKClient(_options(tmp_path, script, decide_later)) as client:
        await client.query("deploy")
        first = [m async for m in client.receive_response()][-1]
        assert first.terminal_reason == "tool_deferred"
        decide_later.clear()  # the caller decided: allow
        await client.query("go on")
        second = [m async for m in client.receive_response()][-1]
    assert second.result == "Done." and (tmp_path / "deployed").exists()
    assert script.requests[1].messages[-1]["content"][0]["tool_use_id"] == (
        first.deferred_tool_use.id)
