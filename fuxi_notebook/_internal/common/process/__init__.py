"""Processes the package starts: each in a process group of its own, stopped whole."""
