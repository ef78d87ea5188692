"""`max_budget_usd`: a run stops once what it has spent reaches the budget.

The budget is checked before each model request, so a run may go over it by one
request's cost. A single-shot `query()` that ends on an error result (the budget, the
turn limit, an API failure) yields that result and then raises `ResultError`, on
purpose, with the result's payload; wrap the loop in `try` to go on past it.

    ANTHROPIC_API_KEY=... python examples/max_budget_usd.py
"""

import asyncio

from fuxi_notebook import FuxiAgentOptions, ResultError, ResultMessage, query


async def run(label: str, prompt: str, options: FuxiAgentOptions) -> None:
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                cost = f"${message.total_cost_usd:.4f}" if message.total_cost_usd else "$0"
                print(f"{label}: {message.subtype} after {message.num_turns} turn(s), {cost}")
    except ResultError as error:
        print(f"{label}: raised {type(error).__name__} ({error.terminal_reason}): {error}")


async def main() -> None:
    await run("no budget", "What is 2 + 2?", FuxiAgentOptions())
    await run("$0.10", "What is 2 + 2?", FuxiAgentOptions(max_budget_usd=0.10))
    await run("$0.0001", "Read README.md and summarise it",
              FuxiAgentOptions(max_budget_usd=0.0001, allowed_tools=["Read"]))


if __name__ == "__main__":
    asyncio.run(main())
