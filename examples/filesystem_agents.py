"""Agents and settings from the project's files, with the default setting sources.

Run it in a project with `.fuxi/agents/*.md` agent files (and, say, an `outputStyle` in
`.fuxi/settings.local.json`): the init message lists the agents and the style in force,
as the comparable SDK's CLI loads user, project and local settings by default.

    ANTHROPIC_API_KEY=... python examples/filesystem_agents.py
"""

import asyncio

from fuxi_notebook import AssistantMessage, FuxiSDKClient, ResultMessage, SystemMessage, TextBlock


async def main() -> None:
    async with FuxiSDKClient() as client:  # cwd: this folder; setting sources: all three
        await client.query("Say hello in exactly 3 words")
        async for message in client.receive_response():
            if isinstance(message, SystemMessage) and message.subtype == "init":
                print("agents:", ", ".join(message.data["agents"]))
                print("output style:", message.data["output_style"])
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print("Fuxi:", block.text)
            elif isinstance(message, ResultMessage):
                print("result:", message.subtype)


if __name__ == "__main__":
    asyncio.run(main())
