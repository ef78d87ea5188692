"""Subagents: the agent hands a review to a specialised agent with its own tools and model.

    ANTHROPIC_API_KEY=... python examples/subagents.py

Only the reviewer's final message comes back to the main agent; what the reviewer does on
the way arrives in the stream tagged with `parent_tool_use_id`.
"""

import asyncio

from fuxi_notebook import (
    AgentDefinition,
    AssistantMessage,
    FuxiAgentOptions,
    ResultMessage,
    ToolUseBlock,
    query,
)


async def main() -> None:
    options = FuxiAgentOptions(
        allowed_tools=["Read", "Grep", "Glob", "Agent"],
        agents={
            "code-reviewer": AgentDefinition(
                description="Expert code reviewer. Use for quality and security reviews.",
                prompt="You review code for bugs and risky patterns. Be specific.",
                tools=["Read", "Grep", "Glob"],
                model="haiku",
            ),
        },
        max_turns=10,
    )
    async for message in query(prompt="Use the code-reviewer agent to review calc.py",
                               options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if not isinstance(block, ToolUseBlock):
                    continue
                if message.parent_tool_use_id:  # a step inside the subagent
                    target = block.input.get("file_path") or block.input.get("pattern")
                    print(f"  [{block.name}] {target}")
                elif block.name in ("Agent", "Task"):
                    print(f"delegated to {block.input['subagent_type']}: "
                          f"{block.input['description']}")
        elif isinstance(message, ResultMessage):
            print(f"answer: {message.result}")


asyncio.run(main())
