"""Permission rules: parsing `Tool` / `Tool(specifier)` strings and matching calls.

This is the minimal rule set of the first version: bare tool names, and `Bash(...)`
command patterns with `*` wildcards. A `Bash` pattern never allows a command that
contains shell control syntax (`;`, `&`, `|`, substitutions, redirections, newlines):
such commands need the full shell analysis of the permission engine, so until then they
fall through to the approval step instead of being allowed by a prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..options import PermissionRuleValue

__all__ = ["Rule", "parse_rule", "parse_rules"]

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_\-*]+)(?:\((?P<spec>.*)\))?$", re.DOTALL)
_SHELL_CONTROL = re.compile(r"[;&|`$<>\n\r(){}]")


@dataclass(frozen=True)
class Rule:
    """A parsed rule."""

    tool: str
    specifier: str | None = None

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    @property
    def is_bare(self) -> bool:
        return self.specifier is None

    def matches(self, tool_name: str, tool_input: dict[str, Any], *, for_allow: bool) -> bool:
        """Whether this rule covers the call."""
        if tool_name != self.tool:
            return False
        if self.specifier is None:
            return True
        command = str(tool_input.get("command", ""))
        if for_allow and _SHELL_CONTROL.search(command):
            return False
        return _pattern(self.specifier).fullmatch(command.strip()) is not None


def _pattern(spec: str) -> re.Pattern[str]:
    """`npm test *` -> regex; a trailing ` *` also matches the bare command (`npm test`)."""
    if spec.endswith(":*"):  # legacy prefix form `Bash(npm:*)`
        spec = spec[:-2] + " *"
    optional_tail = spec.endswith(" *")
    core = spec[:-2] if optional_tail else spec
    regex = ".*".join(re.escape(part) for part in core.split("*"))
    if optional_tail:
        regex += r"(?: .*)?"
    return re.compile(regex, re.DOTALL)


def parse_rule(text: str | PermissionRuleValue) -> Rule:
    """Parse one rule, raising `ConfigurationError` with the reason when it is invalid."""
    if isinstance(text, PermissionRuleValue):
        return Rule(text.tool_name, text.rule_content)
    match = _RULE.match(text.strip())
    if not match:
        raise ConfigurationError(
            f"invalid permission rule {text!r}: expected 'Tool' or 'Tool(specifier)', "
            "e.g. 'Read' or 'Bash(git status)'"
        )
    tool, spec = match["tool"], match["spec"]
    if spec is not None and spec.strip() in ("", "*"):
        spec = None  # `Bash()` and `Bash(*)` mean the whole tool
    if spec is not None and tool != "Bash":
        raise ConfigurationError(
            f"permission rule {text!r}: specifiers are supported for Bash only in this "
            f"version; use the bare tool name {tool!r}"
        )
    return Rule(tool, spec.strip() if spec else None)


def parse_rules(texts: list[str] | None) -> list[Rule]:
    """Parse a list of rules."""
    return [parse_rule(t) for t in texts or []]
