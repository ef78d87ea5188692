"""The session a subagent runs in, derived from its parent's.

What a subagent gets of its own: a fresh conversation (same session id, so its messages
and hooks belong to the parent's session), its definition's prompt as system prompt
(plus FUXI.md under the same `setting_sources`), its tools, model, turn limit, effort and
mode. What it shares with the parent: the permission rules (options, settings and the
rules granted so far), `can_use_tool` (told the `agent_id`; rules granted there are
granted to the parent as well), the tool hooks, the parent's extra tools (kernel, MCP)
and its usage totals, so the budget covers the subagent too. `UserPromptSubmit` and
`Stop` hooks are the parent's alone (a subagent's end fires `SubagentStop` instead), and
the `auto` classifier sees the user's requests, not the prompt the model wrote.

Tools: the definition's `tools` (None = every tool the parent is offered except Agent),
minus `disallowedTools`, which join the deny rules (so `Bash(rm *)` narrows a tool,
and a bare name removes it). The mode is the parent's, unless the definition sets one
and the parent is in `default`: as in the comparable SDK, `bypassPermissions`,
`acceptEdits` and `auto` in the parent are kept, and here `plan` and `dontAsk` too (a
restriction the user chose is not lifted by a definition). Model: the call's `model`,
else the definition's, else the parent's; aliases `sonnet`, `opus` and `haiku` name the
current models, served by the parent's transport.
"""

from __future__ import annotations

import platform
import warnings
from collections.abc import Callable
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from ....options import (
    AgentDefinition,
    FuxiAgentOptions,
    PermissionMode,
    PermissionResult,
    PermissionResultAllow,
    ToolPermissionContext,
)
from ...models.base import Model
from ...models.names import model_name
from ...permissions.modes import NARROW_MODES, widens
from ...tools.builtin import builtin_tools
from ..loop.run_model import RenamedModel
from ..own_tools import own_tool_names
from ..project_link import with_project
from ..session import Conversation, Session
from ..structured import STRUCTURED_TOOL
from .agent_tool import AGENT_ALIASES, AGENT_TOOL, max_depth

__all__ = ["SubagentSession", "child_session"]

#: the model aliases an AgentDefinition or an Agent call may use
_PARENT_ONLY_HOOKS = frozenset({"UserPromptSubmit", "Stop"})

_NOTE = """

You are the subagent "{name}": another agent gave you one task. It sees nothing of your \
work but your final message, so end with a complete, self-contained answer to the task.
Working directory: {cwd}
Platform: {platform}"""


class SubagentSession(Session):
    """A subagent's session: hooks see its `agent_id` / `agent_type`. `child_session`
    makes one; the assembler equips it as it equips every session."""

    def __init__(self, options: FuxiAgentOptions, *, parent: Session, agent_id: str,
                 agent_type: str, slots: Any, conversation: Conversation) -> None:
        super().__init__(options, cwd=parent.cwd, project=_child_project(parent),
                         conversation=conversation)
        self.parent = parent
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.subagent_depth = parent.subagent_depth + 1
        self.subagent_slots = slots
        # saved with the main session: its hooks see that transcript, and it saves ours
        self.transcript_path = parent.transcript_path
        self.on_subagent = parent.on_subagent

    def hook_input(self) -> dict[str, Any]:
        return {**super().hook_input(), "agent_id": self.agent_id,
                "agent_type": self.agent_type}

    def user_requests(self) -> list[str]:
        """The user's own requests: the task prompt was written by a model."""
        return self.parent.user_requests()


def _model(parent: Session, choice: str | None) -> Model:
    if not choice or choice == "inherit":
        return parent.model
    name = model_name(choice)
    return parent.model if name == parent.model.name else RenamedModel(parent.model, name)


def _listed(name: str, entries: list[str]) -> bool:
    """Whether a `tools` entry names the tool: exact, older name, glob, `mcp__server`."""
    for entry in entries:
        base = entry.split("(", 1)[0].strip()
        base = AGENT_TOOL if base in AGENT_ALIASES else base
        if base == name or fnmatchcase(name, base) or (
                base.startswith("mcp__") and base.count("__") == 1
                and name.startswith(base + "__")):
            return True
    return False


def _tools(parent: Session, definition: AgentDefinition,
           servers: Any = None) -> tuple[list[str], list[Any]]:
    """The tool names the subagent is offered (`options.tools`) and the tools beyond the
    built-ins it needs passed on: the parent's (kernel and MCP tools) and those of the
    servers its definition defines inline (`servers`: always offered, it named them)."""
    names = [n for n in parent.registry.names() if n not in (AGENT_TOOL, STRUCTURED_TOOL)]
    if definition.mcpServers is not None:
        chosen = {s for s in definition.mcpServers if isinstance(s, str)}
        names = [n for n in names if not n.startswith("mcp__") or n.split("__")[1] in chosen]
    if definition.tools is not None:
        names = [n for n in names if _listed(n, list(definition.tools))]
    builtin = {tool.name for tool in builtin_tools()} | own_tool_names()
    extras = [parent.registry.get(n) for n in names if n not in builtin]
    own = servers.tools() if servers is not None else []
    names += [t.name for t in own if t.name not in names]
    passed = {getattr(e, "name", None) for e in extras}
    extras += [t for t in own if t.name not in passed]
    nested = parent.subagent_depth + 1 < max_depth()
    if nested and (definition.tools is None or _listed(AGENT_TOOL, list(definition.tools))):
        names.append(AGENT_TOOL)  # its own Agent tool, made by its session
    return names, extras


def _approval(parent: Session, agent_id: str) -> Any:
    """The parent's `can_use_tool`, told which agent asks; rules granted there (not a
    mode) hold for the parent (and its parents) from then on too."""
    callback = parent.permissions.can_use_tool
    if callback is None:
        return None

    async def approve(tool_name: str, tool_input: dict[str, Any],
                      context: ToolPermissionContext) -> PermissionResult:
        context.agent_id = agent_id
        answer = await callback(tool_name, tool_input, context)
        if isinstance(answer, PermissionResultAllow) and answer.updated_permissions:
            shared = [u for u in answer.updated_permissions if u.type != "setMode"]
            session: Session | None = parent
            while shared and session is not None:
                session.permissions.apply(shared)
                session = getattr(session, "parent", None)
        return answer

    return approve


def _stderr(callback: Callable[[str], None] | None,
            agent_type: str) -> Callable[[str], None] | None:
    if callback is None:
        return None

    def log(line: str) -> None:
        callback(f"{line} [subagent {agent_type}]")

    return log


def _options(parent: Session, agent_type: str, definition: AgentDefinition, *,
             agent_id: str, model: Model, tools: list[str]) -> FuxiAgentOptions:
    options = parent.options
    mode = _mode(parent.permissions.mode, definition.permissionMode, agent_type)
    # the parent's hooks with its settings files' hook commands (the child session gets
    # the project without them: see child_session), less those of the parent's prompt
    hooks = {event: matchers for event, matchers in (with_project(
        options, parent.project).hooks or {}).items() if event not in _PARENT_ONLY_HOOKS}
    note = _NOTE.format(name=agent_type, cwd=parent.cwd, platform=platform.system())
    return replace(
        options, tools=tools, model=model, cwd=parent.cwd, permission_mode=mode,
        disallowed_tools=[*options.disallowed_tools, *(definition.disallowedTools or [])],
        system_prompt=definition.prompt.rstrip() + note,
        can_use_tool=_approval(parent, agent_id),
        max_turns=definition.maxTurns or options.max_turns,
        effort=definition.effort if isinstance(definition.effort, str) else options.effort,
        include_partial_messages=(options.include_partial_messages
                                  and options.forward_subagent_text),
        hooks=hooks or None, output_format=None, stderr=_stderr(options.stderr, agent_type),
        extra_args={flag: value for flag, value in (options.extra_args or {}).items()
                    if flag in ("debug", "debug-file")},  # its debug lines too
        mcp_servers={}, strict_mcp_config=True, continue_conversation=False,
        resume=None, session_id=None, fork_session=False, resume_session_at=None,
        session_store=None)


def _mode(parent: PermissionMode, wanted: PermissionMode | None,
          agent_type: str) -> PermissionMode:
    """The subagent's mode: its definition's where the parent's allows an override (as
    in the comparable SDK, not under acceptEdits, auto or bypassPermissions) and it does
    not widen the parent's; else the parent's, with a warning when one was asked for."""
    if wanted is None or wanted == parent:
        return parent
    if parent in NARROW_MODES and not widens(wanted, parent):
        return wanted
    if widens(wanted, parent):
        warnings.warn(f"the agent {agent_type!r} asks for permissionMode {wanted!r}, which "
                      f"would approve more than its parent's {parent!r}; the parent's mode "
                      "applies", stacklevel=3)
    return parent


def child_session(parent: Session, agent_type: str, definition: AgentDefinition, *,
                  agent_id: str, model: str | None, slots: Any,
                  servers: Any = None) -> tuple[SubagentSession, list[Any]]:
    """The subagent's session, not yet equipped, and the tools beyond the built-ins that
    it is to be offered (the parent's kernel and MCP tools, its own servers' tools)."""
    names, extras = _tools(parent, definition, servers)
    options = _options(parent, agent_type, definition, agent_id=agent_id, tools=names,
                       model=_model(parent, model or definition.model))
    granted = [u for u in parent.conversation.permission_updates if u.type != "setMode"]
    conversation = Conversation(id=parent.id, usage=parent.usage,
                                permission_updates=list(granted))
    child = SubagentSession(options, parent=parent, agent_id=agent_id,
                            agent_type=agent_type, slots=slots, conversation=conversation)
    return child, extras


def _child_project(parent: Session) -> Any:
    """The parent's project settings, read once for both (their hook commands are in the
    child's options already, filtered as the parent's hooks are)."""
    return replace(parent.project, hooks={})
