"""Decides whether a tool call may run, in the documented order:

    PreToolUse hooks → deny rules → ask rules → permission mode → allow rules → can_use_tool

Deny always wins and nothing downgrades it. "Hard" asks (ask rules, removing a critical
path) are confirmed in every mode; "soft" asks (protected paths, commands that could not
be analysed) stop rules and modes from auto-approving but not `bypassPermissions`. What
nobody approves is denied, with a message that tells the model how it could be allowed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast

from ...errors import ConfigurationError
from ...hooks import HookOutcome, HookRunner
from ...options import (
    PERMISSION_MODES,
    FuxiAgentOptions,
    PermissionMode,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    PermissionUpdateError,
    ToolPermissionContext,
    check_permission_update,
)
from ..common import switches
from ..common.foreign_loop import on_callers_loop
from ..common.rule_lists import joined_rules
from ..common.switches import config_dir_of, switch
from ..tools.base import (
    Declaration,
    ToolError,
    always_allow_of,
    declaration_of,
    reach_of,
    shown_of,
)
from .bash import part_rules
from .integrity import Watched
from .judge import Judgement, RuleBook
from .rules import Behavior, Rule, parse_rule, parse_rules
from .settings import load_settings
from .shell.analysis import SimpleCommand, kills_own_process

__all__ = ["Decision", "PermissionEngine", "always_allow_rule", "always_allow_rules",
           "check_mode"]

Classifier = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]


@dataclass
class Decision:
    """The outcome for one call; `stop` ends the whole run (a hook said continue=False)."""

    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False
    stop: bool = False
    defer: bool = False  # a PreToolUse hook deferred the call: not run, the run ends
    context: list[str] = field(default_factory=list)
    banners: list[str] = field(default_factory=list)
    targets: dict[str, str] = field(default_factory=dict)
    #: what the call will do beyond its input, as decided on (`Declaration.shown`)
    shown: dict[str, str] = field(default_factory=dict)


def _by_behavior(options: FuxiAgentOptions) -> list[tuple[Behavior, list[str]]]:
    """The options' own rules, by behavior."""
    return [("allow", options.allowed_tools), ("deny", options.disallowed_tools), ("ask", [])]


def check_mode(mode: str) -> PermissionMode:
    """The mode, checked: unknown modes are rejected, and `bypassPermissions` as root
    outside a declared sandbox."""
    if mode not in PERMISSION_MODES:
        raise ConfigurationError(
            f"unknown permission_mode {mode!r}; expected one of {', '.join(PERMISSION_MODES)}")
    if mode == "bypassPermissions" and _is_root() and switch("IS_SANDBOX") != "1":
        raise ConfigurationError(
            "permission_mode='bypassPermissions' is refused when running as root. "
            "If this is an isolated environment (container, CI sandbox), set IS_SANDBOX=1 "
            "before the package loads (it is read once, at load).")
    return cast("PermissionMode", mode)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _own_process() -> tuple[list[str], list[int]]:
    """Command lines and pids of this process and its parent (the kernel, the server),
    read once per pair of pids (a forked child, or a parent that died, reads again)."""
    pids = (os.getpid(), os.getppid())
    return list(_command_lines(pids)), list(pids)


@lru_cache(maxsize=8)
def _command_lines(pids: tuple[int, ...]) -> tuple[str, ...]:
    lines = []
    for pid in pids:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        lines.append(raw.replace(b"\0", b" ").decode(errors="replace").strip())
    return tuple(lines)


def always_allow_rules(declared: Declaration, tool_input: dict[str, Any], *,
                       cwd: Path) -> list[str]:
    """The rules "Always allow" adds for this call, as the tool declares it (none: the
    declaration names no valid rule). A Bash rule for a compound command becomes a rule
    per part a rule may cover (`bash.part_rules`): never one for a removal."""
    rule = always_allow_of(declared, tool_input)
    try:
        parsed = parse_rule(rule, "allow", cwd=cwd)
    except ConfigurationError:
        return []
    text = str(PermissionRuleValue.from_text(rule))
    if parsed.tool == "Bash" and parsed.specifier:
        parts = part_rules(parsed.specifier)
        if parts is not None:
            return parts
    return [text]


def always_allow_rule(declared: Declaration, tool_input: dict[str, Any], *,
                      cwd: Path) -> str | None:
    """`always_allow_rules` in the form an approval records them (None: none). A replay
    checks a recorded "Always allow" against this, so a record cannot grant more than the
    call's own tool would have offered."""
    return joined_rules(always_allow_rules(declared, tool_input, cwd=cwd))


class PermissionEngine:
    """The permission state of one session."""

    def __init__(self, options: FuxiAgentOptions, *, cwd: Path, hooks: HookRunner | None = None,
                 classifier: Classifier | None = None, tools: Iterable[Any] | None = None,
                 project: Any = None) -> None:
        """`tools` are the tools whose declarations decide (default: the built-ins); a
        call of any other tool is judged as an undeclared `execute` tool. `project`: the
        session's project settings (settings/project.py): their rules, directories and
        mode, as far as they apply (what needs trust was held back there)."""
        settings = load_settings(options.settings, cwd)
        sources = [settings, *(project.permissions if project is not None else [])]
        #: the settings the rules come from, each with its origin (`%fuxi permissions`)
        self.sources = sources
        self.mode = check_mode(options.permission_mode or settings.default_mode
                               or (project.mode if project is not None else None) or "default")
        self.cwd = cwd
        self.env = dict(options.env or {})  # its FUXI_CONFIG_DIR: a user folder to protect
        dirs = [*options.add_dirs, *(settings.root / d for d in settings.directories),
                *(project.directories if project is not None else [])]
        self.roots = [cwd.resolve(), *(Path(d).expanduser().resolve() for d in dirs)]
        self.rules: dict[str, list[Rule]] = {
            behavior: parse_rules(values, behavior, cwd=cwd) + [
                rule for source in sources for rule in parse_rules(
                    getattr(source, behavior), behavior, cwd=cwd, root=source.root)]
            for behavior, values in _by_behavior(options)
        }
        self.book = RuleBook(self.rules, self.roots)
        # permission_prompts="none": what would be asked is denied, nobody is asked
        self.can_use_tool = (None if options.permission_prompts == "none"
                             else options.can_use_tool)
        self.hooks = hooks or HookRunner(None)
        self.classifier = classifier
        self.on_update: Callable[[PermissionUpdate], None] | None = None
        #: called once updates are applied: they are the approval path's, so legitimate
        self.on_applied: Callable[[], None] | None = None
        self._own = _own_process()
        if tools is None:
            from ..tools.builtin import builtin_tools

            tools = builtin_tools()
        #: the tools' declarations, taken once (see `tools/base.Declaration`)
        self.declared: dict[str, Declaration] = {
            tool.name: declaration_of(tool, tool.name) for tool in tools}
        #: tool_use_id -> what was shown of that call before it came (a replay's consent
        #: card): the call runs only if it would still do exactly that
        self.expected_shown: dict[str, dict[str, str]] = {}

    def watched(self) -> list[Watched]:
        """What this engine's policy consists of, for integrity checks."""
        book = self.book
        return [Watched(self, "mode", label="the permission mode"),
                Watched(self, "rules", label="the permission rules"),
                Watched(self, "roots", label="the working directories"),
                Watched(self, "declared", "shallow", label="the tool declarations"),
                Watched(self, "cwd", label="the working directory"),
                Watched(self, "expected_shown", label="what the consent card showed"),
                *(Watched(self, attr, "identity", label=f"the engine's {attr}") for attr in
                  ("book", "can_use_tool", "hooks", "classifier", "on_update", "on_applied",
                   "allow_hint")),
                Watched(book, "rules", "identity", label="the rule book"),
                Watched(book, "roots", "identity", label="the rule book's directories"),
                Watched(switches, "VALUES", label="the environment switches")]

    def offered(self, tool_name: str) -> bool:
        """A bare deny rule removes the tool from what the model is offered."""
        return self.book.bare("deny", tool_name) is None

    def reads_only(self, tool_name: str, tool_input: dict[str, Any], *,
                   base: Path | None = None) -> bool:
        """The call is a shell command line the analysis understands in full, every part
        of it read-only inside the working directories (the set that runs without asking):
        it changes no file, so file checkpoints need not scan around it."""
        declared = self.declared.get(tool_name)
        reach = reach_of(declared, tool_input) if declared is not None else None
        if reach is None or reach.command is None:
            return False
        with config_dir_of(self.env):  # the session's own user folder is protected too
            judged = self.book.judge(tool_name, declared, tool_input, cwd=self.cwd,
                                     base=base or self.cwd, refuse=self._refuse)
        return judged.deny is None and judged.safe and not judged.soft_ask

    def _refuse(self, cmd: SimpleCommand) -> str | None:
        lines, pids = self._own
        reason = kills_own_process(cmd, own_cmdlines=lines, own_pids=pids)
        return f"refused: {reason}" if reason else None

    async def decide(self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str, *,
                     base: Path | None = None, hook_input: dict[str, Any] | None = None
                     ) -> Decision:
        """The decision for one call, following the documented evaluation order."""
        hook = await self.hooks.run("PreToolUse", {**(hook_input or {}), "tool_name": tool_name,
                                                   "tool_input": tool_input,
                                                   "tool_use_id": tool_use_id},
                                    tool_use_id=tool_use_id, match=tool_name)
        decision = await self._after_hook(hook, tool_name, tool_input, tool_use_id, base)
        decision.context.extend(hook.additional_context)
        decision.banners.extend(hook.system_messages)
        return decision

    async def _after_hook(self, hook: HookOutcome, tool_name: str, tool_input: dict[str, Any],
                          tool_use_id: str, base: Path | None) -> Decision:
        """Rules, mode and approval, once the PreToolUse hooks have spoken."""
        if hook.stop:
            return Decision("deny", hook.stop_reason or "A hook stopped the run.", stop=True)
        if hook.decision == "deny":
            return Decision("deny", hook.reason or f"A PreToolUse hook blocked {tool_name}.")
        if hook.defer:
            return Decision("deny", hook.reason or f"A PreToolUse hook deferred {tool_name}.",
                            defer=True)
        updated = hook.updated_input
        tool_input = updated if updated is not None else tool_input
        with config_dir_of(self.env):  # the session's own user folder is protected too
            judged = self.book.judge(tool_name, self.declared.get(tool_name), tool_input,
                                     cwd=self.cwd, base=base or self.cwd, refuse=self._refuse)
        if judged.deny:
            return Decision("deny", f"Permission to use {tool_name} was denied: {judged.deny}.")
        try:
            shown = await self._shown(tool_name, tool_input, tool_use_id)
        except ToolError as error:
            return Decision("deny", str(error))
        ask = judged.hard_ask or ("a PreToolUse hook asked for confirmation"
                                  if hook.decision == "ask" else None)
        if ask is None and self._auto_approved(judged, hook.decision == "allow"):
            return Decision("allow", updated_input=updated, targets=judged.targets, shown=shown)
        if ask is None and self.mode == "plan" and judged.changes:
            ask = "plan mode: changes and code need approval"
        reason = ask or next(iter(judged.soft_ask + judged.notes), None)
        decision = await self._ask(tool_name, tool_input, tool_use_id, reason, updated,
                                   hard=judged.hard_ask is not None,
                                   outside=judged.outside[0] if judged.outside else None,
                                   shown=shown)
        if decision.updated_input is None:
            decision.targets = judged.targets  # changed input was not the one judged
        decision.shown = shown  # a changed input is checked against it by the tool
        return decision

    async def _shown(self, tool_name: str, tool_input: dict[str, Any],
                     tool_use_id: str) -> dict[str, str]:
        """What the call will do beyond its input, as its tool declares it; raises
        ToolError when it cannot be shown, or is not what was shown before it came."""
        shown = await shown_of(self.declared.get(tool_name), tool_input)
        expected = self.expected_shown.get(tool_use_id)
        if expected is not None and expected != shown:
            changed = ", ".join(sorted(k for k in {*expected, *shown}
                                       if expected.get(k) != shown.get(k)))
            raise ToolError(f"Not run: what this {tool_name} call would do ({changed}) "
                            "changed after it was shown for approval.")
        return shown

    def _auto_approved(self, judged: Judgement, hook_allow: bool) -> bool:
        """Mode, allow rules and the safe set, in that order (no hard ask pending)."""
        if self.mode == "bypassPermissions":
            return True
        if judged.soft_ask:
            return False
        if self.mode == "acceptEdits" and judged.accept_edits:
            return True
        if self.mode == "plan" and judged.changes:
            return False
        return judged.allowed or hook_allow or judged.safe

    async def _ask(self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str,
                   reason: str | None, updated: dict[str, Any] | None, *, hard: bool,
                   outside: str | None = None, shown: dict[str, str] | None = None
                   ) -> Decision:
        if self.mode == "dontAsk":
            return Decision("deny", self.not_allowed(tool_name, reason))
        request = await self.hooks.run("PermissionRequest", {
            "tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id},
            tool_use_id=tool_use_id, match=tool_name)
        if request.permission_request:
            return self._from_hook(request.permission_request, tool_name, updated)
        if self.mode == "auto" and self.classifier is not None and not hard:
            allow, why = await self.classifier(tool_name, tool_input)
            if allow:
                return Decision("allow", updated_input=updated)
            return Decision("deny", f"The permission classifier blocked {tool_name}: {why}")
        if self.can_use_tool is None:
            return Decision("deny", self.not_allowed(tool_name, reason))
        await self.hooks.run("Notification", {
            "message": f"Fuxi needs your permission to use {tool_name}",
            "title": "Permission needed", "notification_type": "permission_prompt"},
            match="permission_prompt")
        return await self._callback(tool_name, tool_input, tool_use_id, reason, hard, outside,
                                    shown or {})

    def _apply_answer(self, updates: Any, tool_name: str, *,
                      source: str = "The approval callback's updated_permissions"
                      ) -> str | None:
        """Apply an allow's permission updates, all or none; why they were refused (the
        call is then denied: an approval that cannot be applied as given is no approval),
        or None."""
        try:
            if updates is None:
                return None
            if not isinstance(updates, list | tuple):
                raise PermissionUpdateError("the updates must be a list, not "
                                            f"{type(updates).__name__}")
            self.apply([PermissionUpdate.from_dict(u) if isinstance(u, dict) else u
                        for u in updates])
        except PermissionUpdateError as error:
            return f"{source} were refused ({error}), so {tool_name} was not run."
        return None

    def _from_hook(self, decision: dict[str, Any], tool_name: str,
                   updated: dict[str, Any] | None) -> Decision:
        if decision.get("behavior") == "allow":
            refused = self._apply_answer(decision.get("updatedPermissions"), tool_name,
                                         source="A PermissionRequest hook's updatedPermissions")
            if refused is not None:
                return Decision("deny", refused)
            return Decision("allow", updated_input=decision.get("updatedInput") or updated)
        return Decision("deny", decision.get("message") or
                        f"A PermissionRequest hook denied {tool_name}.",
                        interrupt=bool(decision.get("interrupt")))

    async def _callback(self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str,
                        reason: str | None, hard: bool, outside: str | None,
                        shown: dict[str, str]) -> Decision:
        assert self.can_use_tool is not None
        context = ToolPermissionContext(tool_use_id=tool_use_id, display_name=tool_name,
                                        decision_reason=reason, blocked_path=outside,
                                        hard_ask=hard, shown=dict(shown),
                                        suggestions=self.suggestions(tool_name, tool_input))
        try:
            answer = await on_callers_loop(self.can_use_tool, tool_name, dict(tool_input),
                                           context)
        except Exception as error:  # fail closed: a broken approval callback never allows
            return Decision("deny", f"The approval callback failed ({type(error).__name__}: "
                                    f"{error}), so {tool_name} was not run.")
        if isinstance(answer, PermissionResultAllow):
            refused = self._apply_answer(answer.updated_permissions, tool_name)
            if refused is not None:
                return Decision("deny", refused)
            return Decision("allow", updated_input=answer.updated_input)
        if isinstance(answer, PermissionResultDeny):
            message = answer.message or f"The user denied permission to use {tool_name}."
            return Decision("deny", message, interrupt=answer.interrupt)
        return Decision("deny", "The approval callback returned neither PermissionResultAllow "
                                f"nor PermissionResultDeny, so {tool_name} was not run.")

    def suggestions(self, tool_name: str, tool_input: dict[str, Any]) -> list[PermissionUpdate]:
        """What "Always allow" adds for this call, as the tool declares it."""
        rules = always_allow_rules(self.declared.get(tool_name)
                                   or declaration_of(None, tool_name), tool_input, cwd=self.cwd)
        if not rules:
            return []  # a declaration that names no valid rule offers no "Always allow"
        return [PermissionUpdate(type="addRules", behavior="allow",
                                 rules=[PermissionRuleValue.from_text(r) for r in rules],
                                 destination="session")]

    def apply(self, updates: list[PermissionUpdate], *, remember: bool = True) -> None:
        """Apply permission updates for the rest of the session (`on_update` hears of
        each, so that a continued conversation gets them back). All or nothing: every
        update is checked first (its shape, its rules' syntax, its mode), and one that
        cannot apply raises `PermissionUpdateError` (one line) before any takes effect."""
        checked = [self._checked(update) for update in updates]
        for update, rules in checked:
            if remember and self.on_update is not None:
                self.on_update(update)
            target = self.rules[update.behavior or "allow"]
            if update.type == "addRules":
                target.extend(rules)
            elif update.type == "replaceRules":
                target[:] = rules
            elif update.type == "removeRules":
                texts = {r.text for r in rules}
                target[:] = [r for r in target if r.text not in texts]
            elif update.type == "setMode" and update.mode:
                self.mode = check_mode(update.mode)
            elif update.type in ("addDirectories", "removeDirectories"):
                self._directories(update)
        if self.on_applied is not None:
            self.on_applied()

    def _checked(self, update: PermissionUpdate) -> tuple[PermissionUpdate, list[Rule]]:
        """The update and its parsed rules, or `PermissionUpdateError` naming it."""
        check_permission_update(update)
        try:
            if update.type == "setMode" and update.mode:
                check_mode(update.mode)
            behavior: Behavior = update.behavior or "allow"
            return update, [parse_rule(r, behavior, cwd=self.cwd) for r in update.rules or []]
        except PermissionUpdateError:
            raise
        except ConfigurationError as error:
            raise PermissionUpdateError(f"{update.type}: {error}") from None

    def _directories(self, update: PermissionUpdate) -> None:
        dirs = [Path(d).expanduser().resolve() for d in update.directories or []]
        if update.type == "addDirectories":
            self.roots.extend(d for d in dirs if d not in self.roots)
        else:
            self.roots[:] = [r for r in self.roots if r not in dirs or r == self.roots[0]]

    #: How the user can allow a tool, as the model is told; the notebook says it its way.
    allow_hint = ("allow it with allowed_tools=[{tool!r}] (or a narrower rule such as "
                  "'Bash(git status)') or pass a can_use_tool callback")

    def not_allowed(self, tool_name: str, reason: str | None) -> str:
        """What the model is told when nobody approved a call that needed approval."""
        why = f" ({reason})" if reason else ""
        how = self.allow_hint.format(tool=tool_name)
        mode = " (mode dontAsk)" if self.mode == "dontAsk" else ""
        return f"Permission to use {tool_name} was not granted{why}{mode}; {how}."
