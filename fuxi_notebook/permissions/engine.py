"""Decides whether a tool call may run: deny rules → mode → allow rules → `can_use_tool`.

Deny always wins. With no rule and no callback the call is denied with a message that
says how to allow it. Permission updates returned by the callback last for the session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigurationError
from ..options import (
    PERMISSION_MODES,
    FuxiAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ToolPermissionContext,
)
from .rules import Rule, parse_rule, parse_rules

__all__ = ["Decision", "PermissionEngine", "check_mode"]


@dataclass
class Decision:
    """The outcome for one call."""

    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False


def check_mode(mode: str) -> None:
    """Reject unknown modes, and `bypassPermissions` as root outside a declared sandbox."""
    if mode not in PERMISSION_MODES:
        raise ConfigurationError(
            f"unknown permission_mode {mode!r}; expected one of {', '.join(PERMISSION_MODES)}"
        )
    if mode == "bypassPermissions" and _is_root() and os.environ.get("IS_SANDBOX") != "1":
        raise ConfigurationError(
            "permission_mode='bypassPermissions' is refused when running as root. "
            "If this is an isolated environment (container, CI sandbox), set IS_SANDBOX=1."
        )


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


class PermissionEngine:
    """The permission state of one session."""

    def __init__(self, options: FuxiAgentOptions) -> None:
        self.mode = options.permission_mode or "default"
        check_mode(self.mode)
        self.allow: list[Rule] = parse_rules(options.allowed_tools)
        self.deny: list[Rule] = parse_rules(options.disallowed_tools)
        self.can_use_tool = options.can_use_tool

    def offered(self, tool_name: str) -> bool:
        """A bare deny rule removes the tool from what the model is offered."""
        return not any(rule.is_bare and rule.tool == tool_name for rule in self.deny)

    async def decide(self, tool_name: str, tool_input: dict[str, Any],
                     tool_use_id: str) -> Decision:
        """The decision for one call, following the documented evaluation order."""
        for rule in self.deny:
            if rule.matches(tool_name, tool_input, for_allow=False):
                return Decision("deny", f"Permission to use {tool_name} was denied by the rule "
                                        f"{str(rule)!r} in disallowed_tools.")
        if self.mode == "bypassPermissions":
            return Decision("allow")
        if any(rule.matches(tool_name, tool_input, for_allow=True) for rule in self.allow):
            return Decision("allow")
        if self.mode == "dontAsk" or self.can_use_tool is None:
            return Decision("deny", self._not_allowed_message(tool_name))
        return await self._ask(tool_name, tool_input, tool_use_id)

    async def _ask(self, tool_name: str, tool_input: dict[str, Any],
                   tool_use_id: str) -> Decision:
        assert self.can_use_tool is not None
        context = ToolPermissionContext(tool_use_id=tool_use_id, display_name=tool_name)
        try:
            answer = await self.can_use_tool(tool_name, dict(tool_input), context)
        except Exception as error:  # fail closed: a broken approval callback never allows
            return Decision("deny", f"The approval callback failed ({type(error).__name__}: "
                                    f"{error}), so {tool_name} was not run.")
        if isinstance(answer, PermissionResultAllow):
            self.apply(answer.updated_permissions or [])
            return Decision("allow", updated_input=answer.updated_input)
        if isinstance(answer, PermissionResultDeny):
            message = answer.message or f"The user denied permission to use {tool_name}."
            return Decision("deny", message, interrupt=answer.interrupt)
        raise TypeError(
            f"can_use_tool must return PermissionResultAllow or PermissionResultDeny, "
            f"not {type(answer).__name__}"
        )

    def apply(self, updates: list[PermissionUpdate]) -> None:
        """Apply permission updates for the rest of the session."""
        for update in updates:
            rules = [parse_rule(r) for r in update.rules or []]
            if update.type == "addRules":
                (self.deny if update.behavior == "deny" else self.allow).extend(rules)
            elif update.type == "removeRules":
                target = self.deny if update.behavior == "deny" else self.allow
                target[:] = [r for r in target if r not in rules]
            elif update.type == "setMode" and update.mode:
                check_mode(update.mode)
                self.mode = update.mode

    def _not_allowed_message(self, tool_name: str) -> str:
        how = (
            f"allow it with allowed_tools=[{tool_name!r}] (or a narrower rule such as "
            "'Bash(git status)')"
        )
        denied = f"Permission to use {tool_name} was not granted"
        if self.mode == "dontAsk":
            return f"{denied} (permission mode dontAsk); {how}."
        return f"{denied}; {how} or pass a can_use_tool callback."
