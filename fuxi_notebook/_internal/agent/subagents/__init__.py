"""Subagents: the Agent tool, their definitions (options and Markdown files), the session a
subagent runs in and how it runs.
"""
