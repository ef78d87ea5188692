"""Custom tools and MCP servers: an in-process calculator and a stdio server together.

    ANTHROPIC_API_KEY=... python examples/mcp_tools.py [SERVER_SCRIPT]

The calculator runs in this process (`@tool` + `create_sdk_mcp_server`); an MCP server
script, if given, runs as a child process over stdio. The model sees their tools as
`mcp__calc__add` and `mcp__<server>__<tool>`; the allow rules let them run unasked.
"""

import asyncio
import sys

from fuxi_notebook import (
    AssistantMessage,
    FuxiAgentOptions,
    FuxiSDKClient,
    ResultMessage,
    SystemMessage,
    ToolUseBlock,
    create_sdk_mcp_server,
    tool,
)


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict) -> dict:
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


async def main() -> None:
    servers = {"calc": create_sdk_mcp_server("calculator", tools=[add])}
    if len(sys.argv) > 1:
        servers["demo"] = {"command": sys.executable, "args": [sys.argv[1]]}
    options = FuxiAgentOptions(mcp_servers=servers,
                               allowed_tools=["mcp__calc__add", "mcp__demo__*"], max_turns=5)
    async with FuxiSDKClient(options) as client:
        status = await client.get_mcp_status()
        for server in status["mcpServers"]:
            print(f"server {server['name']}: {server['status']}")
        await client.query("What is 2 + 40? Then echo the answer.")
        async for message in client.receive_response():
            if isinstance(message, SystemMessage) and message.subtype == "init":
                print("tools:", ", ".join(t for t in message.data["tools"]
                                          if t.startswith("mcp__")))
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        print(f"call {block.name} {block.input}")
            elif isinstance(message, ResultMessage):
                print(f"result: {message.result}")


asyncio.run(main())
