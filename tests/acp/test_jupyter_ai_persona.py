"""The jupyter-ai extra: jupyter-ai's persona manager finds the fuxi persona through the
`jupyter_ai.personas` entry point, as it loads every persona, and the persona's command
is this environment's fuxi-acp. Runs where jupyter-ai 3.2 is installed
(`pip install fuxi-notebook[jupyter-ai]`); skipped elsewhere."""

from __future__ import annotations

import asyncio

import pytest

from fuxi_notebook.testing import Turn, text

from .test_acp_agent import _prompt

pytest.importorskip("jupyter_ai_acp_client", reason="jupyter-ai is not installed")


def test_the_persona_manager_loads_the_fuxi_persona_from_its_entry_point():
    from importlib_metadata import entry_points
    from jupyter_ai_persona_manager import BasePersona
    from jupyter_ai_persona_manager.persona_manager import EPG_NAME

    [found] = [ep for ep in entry_points().select(group=EPG_NAME) if ep.name == "fuxi-acp"]
    persona = found.load()  # what PersonaManager._init_persona_classes does
    assert issubclass(persona, BasePersona) and persona.__name__ == "FuxiAcpPersona"
    assert persona.__module__ == "fuxi_notebook._internal.acp.persona"


async def test_the_personas_command_answers_acp(fake_api, tmp_path):
    from acp import PROTOCOL_VERSION, spawn_agent_process

    from fuxi_notebook._internal.acp.persona import EXECUTABLE

    from .acp_client import RecordingClient, agent_env, new_session

    fake_api.add(Turn([text("Hello from the chat panel.")]))
    client = RecordingClient()
    async with spawn_agent_process(client, *EXECUTABLE, env=agent_env(fake_api),
                                   cwd=str(tmp_path)) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.load_session is True
        sid = await new_session(conn, tmp_path)
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=_prompt("hi")), 60)
    assert done.stop_reason == "end_turn" and client.text() == "Hello from the chat panel."
