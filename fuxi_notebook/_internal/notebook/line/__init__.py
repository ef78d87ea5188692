"""The `%fuxi` line commands that have grown beyond a few lines: `undo` and `permissions`.
"""
