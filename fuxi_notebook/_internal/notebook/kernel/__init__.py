"""The kernel tools: the agent's hands inside the user's live kernel (Python, Variables,
Inspect, the notebook document, MCP servers kept per kernel).
"""
