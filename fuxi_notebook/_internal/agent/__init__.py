"""The agent: its entry points (`query.py`, `client.py`), the assembler that builds a
session (`assemble.py`), the session it runs (`session.py`), the loop (`loop/`), subagents
(`subagents/`) and what projects add (`extensions/`).
"""
