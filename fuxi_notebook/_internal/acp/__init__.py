"""The loop as an Agent Client Protocol agent (`fuxi-acp`): jupyter-ai's chat, Zed, marimo
and JetBrains drive it over stdio (agent.py: the protocol's methods; updates.py: what the
loop yields, as the protocol's session updates; server.py: the command)."""
