"""The comparable SDK 0.2.189's prompt options, renamed: `verbatim_prompts` (a prompt is
sent as typed) and the system prompt's `snapshot` flag on the preset and custom forms
(`SystemPromptCustom`): built at the session's first request, then kept for the session,
or built again before every request with `snapshot: False`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook import (
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    SystemPromptCustom,
    SystemPromptPreset,
)
from fuxi_notebook._internal.agent.assemble import build_session
from fuxi_notebook._internal.agent.loop.loop import run_prompt
from fuxi_notebook._internal.agent.loop.run import Run
from fuxi_notebook._internal.models.script import text
from fuxi_notebook.errors import ConfigurationError

from .agent.helpers import collect


def _sent(model: ScriptedModel, request: int = 0) -> list[str]:
    """The texts of the last user message of a request."""
    content = model.requests[request].messages[-1]["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


def _system(model: ScriptedModel, request: int) -> str:
    return "\n".join(block["text"] for block in model.requests[request].system)


def _command(root: Path) -> None:
    folder = root / ".fuxi" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("Fix issue $ARGUMENTS, then test.\n")


# -- verbatim_prompts ---------------------------------------------------------------------

async def test_verbatim_prompts_send_compact_as_typed_instead_of_compacting(tmp_path):
    model = ScriptedModel([[text("first")], [text("second")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path,
                                              verbatim_prompts=True)) as client:
        for prompt in ("hello", "/compact keep the numbers"):
            await client.query(prompt)
            messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "second"
    assert _sent(model, 1) == ["/compact keep the numbers"]  # a prompt, not a summary
    assert len(model.requests[1].messages) == 3  # the conversation was not compacted


async def test_an_at_path_is_sent_as_typed_and_the_file_is_not_attached(tmp_path):
    (tmp_path / "notes.md").write_text("SECRET PLAN\n")
    for verbatim in (False, True):
        model = ScriptedModel([[text("ok")]])
        await collect("summarise @notes.md", FuxiAgentOptions(
            model=model, cwd=tmp_path, verbatim_prompts=verbatim))
        assert _sent(model) == ["summarise @notes.md"]
        assert "SECRET PLAN" not in str(model.requests[0].messages)


async def test_a_run_stamped_verbatim_sends_a_command_as_typed(tmp_path):
    """`Run.verbatim`: one streaming-input message stamped `client_composed`."""
    _command(tmp_path)
    model = ScriptedModel([[text("one")], [text("two")]])
    session = build_session(FuxiAgentOptions(model=model, cwd=tmp_path,
                                             setting_sources=["project"]))
    [m async for m in run_prompt(Run(session, verbatim=True), "/fix 42")]
    [m async for m in run_prompt(Run(session), "/fix 43")]
    assert _sent(model, 0) == ["/fix 42"]
    assert _sent(model, 1) == ["Fix issue 43, then test."]


def _stream(*prompts: tuple[str, bool]) -> Any:
    async def messages() -> Any:
        for prompt, composed in prompts:
            message: dict[str, Any] = {"type": "user", "message": {"role": "user",
                                                                   "content": prompt}}
            if composed:
                message["client_composed"] = True
            yield message
    return messages()


async def test_a_streamed_message_stamped_client_composed_is_sent_as_typed(tmp_path):
    """query() with streaming input: only the stamped message skips the command."""
    from fuxi_notebook import query

    _command(tmp_path)
    model = ScriptedModel([[text("one")], [text("two")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"])
    [m async for m in query(prompt=_stream(("/fix 42", True), ("/fix 43", False)),
                            options=options)]
    assert _sent(model, 0) == ["/fix 42"]
    assert _sent(model, 1) == ["Fix issue 43, then test."]


async def test_the_client_sends_a_client_composed_message_and_clear_as_typed(tmp_path):
    """FuxiSDKClient: `/clear` stamped `client_composed` is a prompt, not a reset; a
    `/command` likewise; unstamped, both keep their meaning."""
    _command(tmp_path)
    model = ScriptedModel([[text("one")], [text("two")], [text("three")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"])
    async with FuxiSDKClient(options) as client:
        await client.query(_stream(("/fix 42", True)))
        [m async for m in client.receive_response()]
        await client.query(_stream(("/clear", True)))
        [m async for m in client.receive_response()]
        first_session = client.session.id if client.session else None
        await client.query(_stream(("/clear", False)))  # a reset: no model request
        [m async for m in client.receive_response()]
        await client.query(_stream(("/fix 43", False)))
        [m async for m in client.receive_response()]
        second_session = client.session.id if client.session else None
    assert _sent(model, 0) == ["/fix 42"]
    assert _sent(model, 1) == ["/clear"]
    assert len(model.requests[1].messages) == 3  # the conversation went on
    assert _sent(model, 2) == ["Fix issue 43, then test."]
    assert len(model.requests) == 3 and len(model.requests[2].messages) == 1  # cleared
    assert first_session != second_session


async def test_verbatim_prompts_make_clear_a_prompt(tmp_path):
    model = ScriptedModel([[text("one")], [text("two")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path,
                                              verbatim_prompts=True)) as client:
        for prompt in ("hello", "/clear"):
            await client.query(prompt)
            [m async for m in client.receive_response()]
    assert _sent(model, 1) == ["/clear"] and len(model.requests[1].messages) == 3


# -- the system prompt's snapshot ---------------------------------------------------------

def _memory(root: Path, rule: str) -> None:
    (root / "FUXI.md").write_text(f"Always {rule}.\n")


async def _two_queries(tmp_path: Path, system_prompt: Any, between: Any = None
                       ) -> ScriptedModel:
    """A client: FUXI.md says A when it connects, B before its first query and C before
    its second (`between`, if given, runs before the second query too)."""
    model = ScriptedModel([[text("one")], [text("two")]])
    _memory(tmp_path, "rule A")
    options = FuxiAgentOptions(model=model, cwd=tmp_path, setting_sources=["project"],
                               system_prompt=system_prompt)
    async with FuxiSDKClient(options) as client:
        _memory(tmp_path, "rule B")
        await client.query("first")
        [m async for m in client.receive_response()]
        _memory(tmp_path, "rule C")
        if between is not None:
            between(client)
        await client.query("second")
        [m async for m in client.receive_response()]
    return model


@pytest.mark.parametrize("system_prompt", [
    None, "You answer briefly.", {"type": "preset", "preset": "fuxi_code"},
    {"type": "preset", "preset": "fuxi_code", "snapshot": True},
    {"type": "custom", "prompt": "You answer briefly."}])
async def test_the_prompt_built_at_the_first_request_is_kept_for_the_session(
        tmp_path, system_prompt):
    model = await _two_queries(tmp_path, system_prompt)
    first, second = _system(model, 0), _system(model, 1)
    assert "Always rule B." in first  # as at the first request, not as at connect()
    assert "rule A" not in first
    assert second == first  # FUXI.md changed since: the prompt did not


@pytest.mark.parametrize("system_prompt", [
    SystemPromptCustom(type="custom", prompt="You answer briefly.", snapshot=False),
    SystemPromptPreset(type="preset", preset="fuxi_code", snapshot=False)])
async def test_snapshot_false_builds_the_prompt_again_for_each_request(tmp_path,
                                                                       system_prompt):
    model = await _two_queries(tmp_path, system_prompt)
    assert "Always rule B." in _system(model, 0)
    assert "Always rule C." in _system(model, 1) and "rule B" not in _system(model, 1)
    if system_prompt["type"] == "custom":
        assert model.requests[1].system[0]["text"] == "You answer briefly."


async def test_snapshot_false_follows_the_shells_directory(tmp_path):
    (tmp_path / "sub").mkdir()
    session_cwd = str(tmp_path.resolve())

    def cd(client: FuxiSDKClient) -> None:
        assert client.session is not None
        client.session.tool_ctx.shell_cwd = (tmp_path / "sub").resolve()

    for snapshot, expected in ((False, f"{session_cwd}/sub"), (True, session_cwd)):
        model = await _two_queries(tmp_path, {"type": "preset", "preset": "fuxi_code",
                                              "snapshot": snapshot}, between=cd)
        line = next(line for line in _system(model, 1).splitlines()
                    if line.startswith("- Working directory:"))
        assert line == f"- Working directory: {expected}"


async def test_a_custom_prompt_typed_as_system_prompt_custom_is_the_prompt(tmp_path):
    prompt: SystemPromptCustom = {"type": "custom", "prompt": "Only say OK."}
    model = ScriptedModel([[text("OK")]])
    await collect("hi", FuxiAgentOptions(model=model, cwd=tmp_path, system_prompt=prompt,
                                         setting_sources=[]))
    assert [block["text"] for block in model.requests[0].system] == ["Only say OK."]


@pytest.mark.parametrize("snapshot", ["yes", 1, None])
def test_a_snapshot_that_is_not_a_bool_is_one_line(tmp_path, snapshot):
    with pytest.raises(ConfigurationError, match="snapshot must be True or False") as raised:
        build_session(FuxiAgentOptions(model=ScriptedModel([]), cwd=tmp_path, system_prompt={
            "type": "custom", "prompt": "x", "snapshot": snapshot}))
    assert "\n" not in str(raised.value)
