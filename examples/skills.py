"""Skills: a folder of instructions the agent loads only when a task calls for it.

    ANTHROPIC_API_KEY=... python examples/skills.py

The project gets `.fuxi/skills/csv-summary/SKILL.md`. The model sees only the skill's name
and description; when the task matches, it calls the Skill tool, gets the instructions
(and the folder's other files), and follows them.
"""

import asyncio
import tempfile
from pathlib import Path

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    ResultMessage,
    SystemMessage,
    ToolUseBlock,
    query,
)

SKILL = """\
---
name: csv-summary
description: Summarise a CSV file. Use when asked what a CSV file holds.
---
1. Read the CSV file.
2. Answer in one sentence: how many rows, which columns, and the largest value.
"""


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        skill = project / ".fuxi" / "skills" / "csv-summary"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(SKILL)
        (project / "sales.csv").write_text("region,total\nNorth,94000\nSouth,83000\n")

        options = FuxiAgentOptions(
            cwd=project,
            setting_sources=["project"],  # loads .fuxi/skills (and FUXI.md)
            allowed_tools=["Skill", "Read"],
            max_turns=5,
        )
        async for message in query(prompt="What is in sales.csv?", options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                print(f"skills: {', '.join(message.data['skills'])}")
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        print(f"[{block.name}] {block.input}")
            elif isinstance(message, ResultMessage):
                print(f"result: {message.result}")


asyncio.run(main())
