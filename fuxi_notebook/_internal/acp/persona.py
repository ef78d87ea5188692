"""fuxi as a persona of jupyter-ai's chat (`pip install fuxi-notebook[jupyter-ai]`).

jupyter-ai 3 finds personas through the `jupyter_ai.personas` entry point; this one runs
`fuxi-acp` (this environment's, through its Python) as jupyter-ai's ACP client runs every
ACP agent: one subprocess, a session per chat. jupyter-ai imports this module only when
it is installed; nothing else in the package imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults

__all__ = ["EXECUTABLE", "FuxiAcpPersona"]

#: the agent's command: this environment's fuxi-acp
EXECUTABLE = [sys.executable, "-m", "fuxi_notebook", "acp"]


class FuxiAcpPersona(BaseAcpPersona):  # type: ignore[misc]
    """The fuxi agent in jupyter-ai's chat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, executable=list(EXECUTABLE), **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="Fuxi", description="The fuxi-notebook agent (files, shell, web, MCP) as an "
            "ACP agent persona.", avatar_path=str(Path(__file__).with_name("fuxi.svg")),
            system_prompt="unused")

    async def is_authed(self) -> bool:
        from ..settings.key_helper_setting import can_run_live

        return can_run_live()

    async def handle_message_no_auth(self, message: Any = None) -> None:
        await super().handle_message_no_auth(message)
        from ..models.access.providers import credential_hint

        self.send_message(f"fuxi needs a model to talk to: {credential_hint()}, in the "
                          "environment JupyterLab starts from, then restart JupyterLab.")
