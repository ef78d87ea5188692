"""Structured output: the agent's final answer as validated data.

    ANTHROPIC_API_KEY=... python examples/structured_output.py

The model may use tools first (here it may list the CSV files); its answer must match the
pydantic model, and an answer that does not is sent back with the errors until it does.
"""

import asyncio

from pydantic import BaseModel

from fuxi_notebook import FuxiAgentOptions, ResultMessage, query


class BestRegion(BaseModel):
    region: str
    total: float
    reason: str


async def main() -> None:
    options = FuxiAgentOptions(output_format=BestRegion, allowed_tools=["Glob", "Read"],
                               max_turns=5)
    async for message in query(prompt="Which region sold the most? Look at the CSV files.",
                               options=options):
        if isinstance(message, ResultMessage):
            if message.subtype != "success":
                print(f"no answer: {message.subtype}")
                return
            best = BestRegion.model_validate(message.structured_output)
            print(f"{best.region}: {best.total:,.0f} ({best.reason})")


asyncio.run(main())
