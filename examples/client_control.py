"""One conversation, steered while it runs: permission mode, model, interrupt.

    ANTHROPIC_API_KEY=... python examples/client_control.py
"""

import asyncio

from fuxi_notebook import FuxiAgentOptions, FuxiSDKClient, ResultMessage


async def answer(client: FuxiSDKClient) -> ResultMessage:
    async for message in client.receive_response():
        if isinstance(message, ResultMessage):
            return message
    raise RuntimeError("no result")


async def main() -> None:
    async with FuxiSDKClient(FuxiAgentOptions(max_turns=5)) as client:
        info = await client.get_server_info()
        print(f"model {info['model']}, mode {info['permission_mode']}")

        await client.set_permission_mode("acceptEdits")  # file edits need no approval now
        await client.query("Write a file notes.txt that says hello")
        print(f"first: {(await answer(client)).result}")

        await client.set_model("claude-opus-5")  # the conversation goes on
        await client.query("What did you just write?")
        print(f"second: {(await answer(client)).result}")

        await client.query("Now write a long essay")
        await client.interrupt()  # changed our mind: stops that turn before it begins
        print(f"third: {(await answer(client)).subtype}")


asyncio.run(main())
