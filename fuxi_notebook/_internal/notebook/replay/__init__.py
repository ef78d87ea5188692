"""Replaying a cell from its record: when it replays, the consent card, the exact plan, the
replayed run.
"""
