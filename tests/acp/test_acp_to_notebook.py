"""A conversation held over ACP (jupyter-ai's chat, Zed, ...) becomes `%%fuxi` cells
(`python -m fuxi_notebook sessions cells`) that replay it in a real kernel, strict, with
no model asked."""

from __future__ import annotations

import subprocess
import sys

import nbformat

from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from ..notebook.test_kernel_sessions import _env, _errors
from .acp_client import RecordingClient, acp_agent, agent_env, new_session
from .test_acp_agent import _prompt


async def test_an_acp_conversation_replays_as_fuxi_cells(fake_api, tmp_path):
    (tmp_path / "notes.md").write_text("Revenue rose 12% in May.\n")
    fake_api.add(Turn([tool_use("Read", {"file_path": "notes.md"})]),
                 Turn([text("The note says revenue rose 12% in May.")]),
                 Turn([text("That is the only figure in it.")]))
    client = RecordingClient()
    async with acp_agent(client, fake_api, tmp_path) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("what does notes.md say?"))
        await conn.prompt(session_id=sid, prompt=_prompt("any other figure?"))
    path = tmp_path / "chat.ipynb"
    done = subprocess.run([sys.executable, "-m", "fuxi_notebook", "sessions", "cells", sid,
                           "--cwd", str(tmp_path), "-o", str(path)], env=agent_env(fake_api),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    nb = nbformat.read(path, as_version=4)
    assert [c.source for c in nb.cells] == ["%load_ext fuxi_notebook",
                                            "%%fuxi\nwhat does notes.md say?",
                                            "%%fuxi\nany other figure?"]
    saved = [c.outputs for c in nb.cells]
    requests = len(fake_api.requests)
    with NotebookFrontend(cwd=str(tmp_path),
                          env=_env(fake_api, path, FUXI_REPLAY="strict")) as frontend:
        frontend.open(nb, str(path))
        for cell in nb.cells:
            status = frontend.execute(cell, decide=lambda card: (
                ("Replay", None) if "Replay" in card.buttons else None))
            assert status == "ok", _errors(cell)
    assert len(fake_api.requests) == requests  # replayed from the records
    transcript = str(nb.cells[1].outputs)
    assert "revenue rose 12% in May" in transcript and "Read" in transcript
    assert nb.cells[2].metadata["fuxi"]["record"]["parent"] == "s1"
    assert len(saved[1]) == len(nb.cells[1].outputs)


def test_a_session_that_is_not_saved_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fuxi_notebook", "sessions", "cells",
                           "nope", "--cwd", str(tmp_path), "-o", str(tmp_path / "x.ipynb")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.startswith("fuxi sessions: no saved session")
    assert not (tmp_path / "x.ipynb").exists()
