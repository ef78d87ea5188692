"""The built-in tools: what a tool declares (base.py), the registry, the shell, the task
list; `files/` and `web/` hold the file and web tools.
"""
