"""Shell command analysis for the `Bash` permission check (pure, synchronous).

`analyse(command)` lists every simple command bash would run and the reasons the string
cannot be fully analysed; the policy helpers judge one `SimpleCommand`. Nothing here
knows about rules, modes or the filesystem.
"""

from __future__ import annotations

from .model import Redirect, ShellAnalysis, SimpleCommand, strip_wrappers
from .parse import analyse
from .policy import critical_removal, is_interpreter, is_read_only, kills_own_process

__all__ = [
    "Redirect",
    "ShellAnalysis",
    "SimpleCommand",
    "analyse",
    "critical_removal",
    "is_interpreter",
    "is_read_only",
    "kills_own_process",
    "strip_wrappers",
]
