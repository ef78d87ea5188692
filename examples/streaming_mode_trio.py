"""A multi-turn conversation from a trio program.

The client works under trio as under asyncio: the loop runs on an asyncio loop of its
own in a thread, and your hooks, `can_use_tool` and tools run on trio.

    pip install trio
    ANTHROPIC_API_KEY=... python examples/streaming_mode_trio.py
"""

import trio

from fuxi_notebook import AssistantMessage, FuxiSDKClient, ResultMessage, TextBlock


async def ask(client: FuxiSDKClient, prompt: str) -> None:
    print(f"User: {prompt}")
    await client.query(prompt)
    async for message in client.receive_response():
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"Fuxi: {block.text}")
        elif isinstance(message, ResultMessage):
            print(f"Result: {message.subtype}")


async def main() -> None:
    async with FuxiSDKClient() as client:
        await ask(client, "What's 15 + 27?")
        await ask(client, "Now multiply that result by 2")
        await ask(client, "Divide that by 7 and round to 2 decimal places")


if __name__ == "__main__":
    trio.run(main)
