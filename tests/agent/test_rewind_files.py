"""`enable_file_checkpointing` and `FuxiSDKClient.rewind_files`, through the client."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuxi_notebook import (
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    ScriptedModel,
    UserMessage,
)
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.sessions.store import InMemorySessionStore
from fuxi_notebook.errors import ConfigurationError
from fuxi_notebook.types import ToolResultBlock


async def _turn(client: FuxiSDKClient, prompt: str) -> list:
    await client.query(prompt)
    return [message async for message in client.receive_response()]


def _options(tmp_path: Path, model: ScriptedModel, **extra) -> FuxiAgentOptions:
    return FuxiAgentOptions(model=model, cwd=tmp_path, enable_file_checkpointing=True,
                            allowed_tools=["Write", "Bash"], **extra)


async def test_a_tool_results_uuid_rewinds_to_just_after_that_call(tmp_path: Path):
    (tmp_path / "table.csv").write_text("x\n1\n")
    model = ScriptedModel([
        [tool_use("Write", {"file_path": "summary.md", "content": "# one\n"})],
        [tool_use("Bash", {"command": "printf 'x\\n9\\n' > table.csv"})],
        [text("done")]])
    async with FuxiSDKClient(_options(tmp_path, model)) as client:
        messages = await _turn(client, "summarise, then fix the table")
        results = [m for m in messages if isinstance(m, UserMessage)]
        assert [type(m.content[0]) for m in results] == [ToolResultBlock] * 2  # no echo
        assert (tmp_path / "table.csv").read_text() == "x\n9\n"
        done = await client.rewind_files(results[0].uuid)  # after Write, before Bash
    assert (tmp_path / "table.csv").read_text() == "x\n1\n"
    assert (tmp_path / "summary.md").read_text() == "# one\n"
    assert [Path(p).name for p in done.restored] == ["table.csv"] and done.removed == []


async def test_the_prompt_echo_marks_the_files_before_the_prompt(tmp_path: Path):
    model = ScriptedModel([[tool_use("Write", {"file_path": "a.txt", "content": "A"})],
                           [text("ok")]])
    options = _options(tmp_path, model, extra_args={"replay-user-messages": None})
    async with FuxiSDKClient(options) as client:
        messages = await _turn(client, "write a.txt")
        echo = next(m for m in messages if isinstance(m, UserMessage))
        assert echo.content == "write a.txt"
        assert messages.index(echo) < next(i for i, m in enumerate(messages)
                                           if isinstance(m, UserMessage)
                                           and isinstance(m.content, list))
        await client.rewind_files(echo.uuid)
    assert not (tmp_path / "a.txt").exists()


async def test_rewind_needs_checkpointing_and_a_known_message(tmp_path: Path):
    model = ScriptedModel([[text("hi")]])
    async with FuxiSDKClient(FuxiAgentOptions(model=model, cwd=tmp_path)) as client:
        await _turn(client, "hello")
        with pytest.raises(ConfigurationError, match="enable_file_checkpointing=True"):
            await client.rewind_files("0b9a7a4e-0000-4000-8000-000000000000")
    model = ScriptedModel([[text("hi")]])
    async with FuxiSDKClient(_options(tmp_path, model)) as client:
        await _turn(client, "hello")
        with pytest.raises(ConfigurationError, match="no file checkpoint for message"):
            await client.rewind_files("not-a-message")


async def test_checkpoints_and_a_session_store_cannot_go_together(tmp_path: Path):
    options = _options(tmp_path, ScriptedModel([]), session_store=InMemorySessionStore())
    client = FuxiSDKClient(options)
    with pytest.raises(ConfigurationError, match="session_store cannot be combined with "
                                                 "enable_file_checkpointing"):
        await client.connect()
        await _turn(client, "hello")
    await client.disconnect()


async def test_an_empty_prompt_asks_the_model_nothing(tmp_path: Path):
    async with FuxiSDKClient(FuxiAgentOptions(model=ScriptedModel([]),
                                              cwd=tmp_path)) as client:
        messages = await _turn(client, "  ")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.num_turns == 0 and result.result == ""


async def test_checkpoints_take_nothing_when_not_enabled(tmp_path: Path):
    model = ScriptedModel([[tool_use("Write", {"file_path": "a.txt", "content": "A"})],
                           [text("ok")]])
    options = FuxiAgentOptions(model=model, cwd=tmp_path, allowed_tools=["Write"],
                               extra_args={"replay-user-messages": None})
    async with FuxiSDKClient(options) as client:
        messages = await _turn(client, "write")
        assert client.session is not None and client.session.checkpoints is None
    echo = next(m for m in messages if isinstance(m, UserMessage))
    assert echo.content == "write"


async def test_read_only_command_lines_are_not_scanned_around(tmp_path: Path, monkeypatch):
    from fuxi_notebook._internal.checkpoints.watch import FileCheckpoints

    scans: list[int] = []
    files = FileCheckpoints._files

    def counted(self):
        scans.append(1)
        return files(self)

    monkeypatch.setattr(FileCheckpoints, "_files", counted)
    (tmp_path / "table.csv").write_text("x\n1\n")
    model = ScriptedModel([
        [tool_use("Bash", {"command": "cat table.csv && wc -l table.csv | head -1"})],
        [tool_use("Bash", {"command": "ls -la; grep -n x table.csv"})],
        [tool_use("Bash", {"command": "cat table.csv > copy.csv"})],
        [tool_use("Bash", {"command": "sort table.csv | tee sorted.csv"})],
        [text("done")]])
    async with FuxiSDKClient(_options(tmp_path, model)) as client:
        messages = await _turn(client, "look, then copy")
        results = [m for m in messages if isinstance(m, UserMessage)]
        assert len(scans) == 4  # two calls that write, each scanned before and after
        await client.rewind_files(results[1].uuid)  # after the reads, before the writes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]
