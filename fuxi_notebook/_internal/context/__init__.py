"""The context window: token counts, prompt-cache breakpoints, where compaction cuts.
"""
