"""`session/load` of a session whose transcript in the store is not one the product could
have written (a FIFO under its name, a line nested 100,000 deep) is answered with one
JSON-RPC error naming the file, in bounded time, and the agent goes on serving (issue 35,
the bounded-read class). Through a real `fuxi-acp` over stdio; the other readers of
transcripts are rows of tests/settings/bad_file_readers.py."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from acp import schema

from fuxi_notebook._internal.sessions.store import project_key_for_directory
from fuxi_notebook.testing import Turn, text

from .acp_client import RecordingClient, new_session
from .test_acp_bad_input import _one_line, _refused, agent_logging_to

pytestmark = pytest.mark.timeout(120)

SESSION = "acb0acb0-0000-4000-8000-000000000035"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")


@pytest.mark.parametrize("make", [_fifo, _deep], ids=["fifo", "deep"])
async def test_session_load_of_a_bad_transcript_is_one_json_rpc_error(fake_api, tmp_path,
                                                                       make):
    folder = Path(os.environ["FUXI_CONFIG_DIR"]) / "projects" / project_key_for_directory(
        tmp_path)
    folder.mkdir(parents=True)
    make(folder / f"{SESSION}.jsonl")
    fake_api.add(Turn([text("Still here.")]))
    client, log = RecordingClient(), tmp_path / "stderr.txt"
    async with agent_logging_to(log, client, fake_api, tmp_path) as (conn, _):
        async with asyncio.timeout(60):  # a reader that blocks fails here, not the suite
            error = await _refused(conn.load_session(cwd=str(tmp_path), session_id=SESSION,
                                                     mcp_servers=[]))
        assert error.code == -32602, error.data
        assert f"{SESSION}.jsonl" in _one_line(error)
        sid = await new_session(conn, tmp_path)
        done = await conn.prompt(session_id=sid, prompt=[
            schema.TextContentBlock(type="text", text="are you there?")])
    assert done.stop_reason == "end_turn" and client.text() == "Still here."
    assert "Traceback" not in log.read_text(errors="replace")
