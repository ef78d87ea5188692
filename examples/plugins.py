"""Plugins: a folder of slash commands and subagents, passed in code.

    ANTHROPIC_API_KEY=... python examples/plugins.py

A plugin is a folder with `commands/` (a prompt `/greet World` stands for the text of
`commands/greet.md`, with `$ARGUMENTS` filled in) and `agents/` (subagents the model may
start). `.fuxi-plugin/plugin.json` names it; the init message lists the plugins and the
commands they bring.
"""

import asyncio
import json
import tempfile
from pathlib import Path

from fuxi_notebook import FuxiAgentOptions, ResultMessage, SystemMessage, query

GREET = """\
---
description: Greet someone warmly
argument-hint: <name>
---
Greet $ARGUMENTS warmly, in one short sentence.
"""

POET = """\
---
description: Writes a two-line rhyming poem. Use when a greeting should rhyme.
tools: Read
model: haiku
---
You write short rhyming poems.
"""


def make_plugin(root: Path) -> Path:
    """A plugin folder: its manifest, one command and one agent."""
    (root / ".fuxi-plugin").mkdir(parents=True)
    (root / ".fuxi-plugin" / "plugin.json").write_text(
        json.dumps({"name": "greetings", "version": "0.1.0"}))
    (root / "commands").mkdir()
    (root / "commands" / "greet.md").write_text(GREET)
    (root / "agents").mkdir()
    (root / "agents" / "poet.md").write_text(POET)
    return root


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        plugin = make_plugin(Path(folder) / "greetings-plugin")
        options = FuxiAgentOptions(plugins=[{"type": "local", "path": str(plugin)}],
                                   max_turns=5)
        async for message in query(prompt="/greet World", options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                for loaded in message.data["plugins"]:
                    print(f"plugin: {loaded['name']} {loaded.get('version', '')}".rstrip())
                print("slash commands:", ", ".join(
                    f"/{name}" for name in message.data["slash_commands"]))
                print("agents:", ", ".join(message.data["agents"]))
            elif isinstance(message, ResultMessage):
                print(f"result: {message.result}")


asyncio.run(main())
