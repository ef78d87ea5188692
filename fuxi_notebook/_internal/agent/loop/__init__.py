"""The agent loop and its steps: one run, its model calls, tool calls, relayed messages,
repairs and compaction.
"""
