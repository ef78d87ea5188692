"""The `stderr` callback: quiet on a clean run, the loop's debug log when asked for.

    ANTHROPIC_API_KEY=... python examples/stderr_callback.py
"""

import asyncio

from fuxi_notebook import FuxiAgentOptions, ResultMessage, query


async def run(options: FuxiAgentOptions) -> str:
    async for message in query(prompt="What is 2 + 2?", options=options):
        if isinstance(message, ResultMessage):
            return message.subtype
    raise RuntimeError("no result")


async def main() -> None:
    quiet: list[str] = []
    print(await run(FuxiAgentOptions(stderr=quiet.append)), f"- {len(quiet)} stderr lines")

    debug: list[str] = []
    options = FuxiAgentOptions(stderr=debug.append, extra_args={"debug": None})
    print(await run(options), f"- {len(debug)} stderr lines in debug mode")
    print("first:", debug[0].split("] ", 1)[1])


if __name__ == "__main__":
    asyncio.run(main())
