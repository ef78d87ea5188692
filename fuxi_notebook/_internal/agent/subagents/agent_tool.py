"""The Agent tool (also answering to its older name, Task): the model hands a task to a
subagent, which works in a conversation of its own and returns only its final message.

Which agents exist: a built-in `general-purpose` one (the parent's tools), the agents in
files (`agent_files.py`) and `options.agents`, later ones overriding earlier ones by
name. The tool is offered when agents are defined (or `options.tools` names it), and
only down to `FUXI_MAX_SUBAGENT_DEPTH` levels of nesting (default 1: the main agent's
subagents cannot start subagents of their own).

Kind: `read`. The call itself touches nothing; every call the subagent makes is judged
by the permission engine with the parent's rules, callbacks and hooks (and the mode as
`subagents/session.py` works it out), so asking the user about the delegation as well
would be a second question about nothing, and `read` lets several Agent calls of one
response run at once. What a subagent costs counts in the parent's usage, so
`max_budget_usd` bounds it. At most `FUXI_MAX_CONCURRENT_SUBAGENTS` (default 10) run at
a time in one conversation; a call over the limit is answered with an error.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import ConfigurationError
from ....options import EFFORT_LEVELS, PERMISSION_MODES, AgentDefinition
from ...permissions.rules import parse_rules
from ...tools.base import DeclaredTool, Reach, ToolContext, ToolError, ToolOutput
from ...tools.registry import ToolRegistry
from .files import NAME, load_file_agents

__all__ = ["AGENT_TOOL", "GENERAL_PURPOSE", "AgentTool", "RunSubagent", "SpawnSubagent",
           "agent_names", "max_depth", "subagent_tools"]

AGENT_TOOL = "Agent"
AGENT_ALIASES = ("Task",)
GENERAL_PURPOSE = "general-purpose"

#: Makes a subagent's session: (parent, agent_type, definition, agent_id, model, slots)
#: -> the child session (ConfigurationError when its definition cannot work). The
#: assembler passes it in, so that this module needs neither the loop nor the session.
SpawnSubagent = Callable[[Any, str, AgentDefinition, str, str | None, Any, Any], Any]
#: Runs a child session on an Agent call's input: (parent, child, input) -> its result.
RunSubagent = Callable[[Any, Any, dict[str, Any]], Awaitable[ToolOutput]]

_GENERAL = AgentDefinition(
    description=("General-purpose agent for researching complex questions, searching for "
                 "code and carrying out multi-step tasks. Use it when a search may take "
                 "several tries, or for a piece of work you can describe completely."),
    prompt=("You are a general-purpose agent. Do the task you are given completely, using "
            "your tools; do not stop half-way and do not do more than asked. When you are "
            "done, answer with a concise report of what you did and what you found: it is "
            "all the agent that gave you the task will see."),
)


def _env_limit(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number, not {raw!r}") from None
    return max(value, 0)


def max_depth() -> int:
    """How many levels of subagents may exist below the main agent."""
    return _env_limit("FUXI_MAX_SUBAGENT_DEPTH", 1)


@dataclass
class _Slots:
    """Subagents running now in one conversation (the main agent's and theirs)."""

    limit: int
    running: int = 0

    def take(self) -> bool:
        if self.running >= self.limit:
            return False
        self.running += 1
        return True

    def release(self) -> None:
        self.running -= 1


def _checked(name: object, definition: object, cwd: Path) -> AgentDefinition:
    """A programmatic definition, checked now (a dict is taken as AgentDefinition's
    fields), so that a mistake is a ConfigurationError before anything runs."""
    where = f"options.agents[{name!r}]"
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigurationError(f"{where}: an agent name is letters, digits, '-', '_', "
                                 "'.' or ':'")
    if isinstance(definition, dict):
        try:
            definition = AgentDefinition(**definition)
        except TypeError as error:
            raise ConfigurationError(f"{where}: {error}") from None
    if not isinstance(definition, AgentDefinition):
        raise ConfigurationError(f"{where} must be an AgentDefinition, not "
                                 f"{type(definition).__name__}")
    for field_name in ("description", "prompt"):
        if not isinstance(getattr(definition, field_name), str):
            raise ConfigurationError(f"{where}.{field_name} must be a string")
    for field_name in ("tools", "disallowedTools"):
        value = getattr(definition, field_name)
        if value is not None and not (isinstance(value, list | tuple)
                                      and all(isinstance(v, str) for v in value)):
            raise ConfigurationError(f"{where}.{field_name} must be a list of tool names")
    turns = definition.maxTurns
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int)
                              or turns < 1):
        raise ConfigurationError(f"{where}.maxTurns must be a positive integer")
    if definition.permissionMode is not None and definition.permissionMode not in (
            PERMISSION_MODES):
        raise ConfigurationError(f"{where}.permissionMode must be one of "
                                 f"{', '.join(PERMISSION_MODES)}")
    if isinstance(definition.effort, str) and definition.effort not in EFFORT_LEVELS:
        raise ConfigurationError(f"{where}.effort must be one of {', '.join(EFFORT_LEVELS)}")
    try:
        parse_rules(list(definition.disallowedTools or []), "deny", cwd=cwd)
    except ConfigurationError as error:
        raise ConfigurationError(f"{where}.disallowedTools: {error}") from None
    return definition


def catalog(session: Any) -> dict[str, AgentDefinition]:
    """The agents a session offers: general-purpose, then files, then `options.agents`."""
    options = session.options
    agents = {GENERAL_PURPOSE: _GENERAL,
              **load_file_agents(options, session.cwd, session.plugins)}
    if options.agents is not None and not isinstance(options.agents, dict):
        raise ConfigurationError("options.agents must be a dict of name -> AgentDefinition")
    for name, definition in (options.agents or {}).items():
        agents[name] = _checked(name, definition, session.cwd)
    return agents


def subagent_tools(session: Any, *, spawn: SpawnSubagent,
                   run: RunSubagent) -> list[AgentTool]:
    """The Agent tool for this session, or nothing: it is offered when agents are
    defined or `options.tools` names it, above the depth limit. `spawn` and `run` start
    its subagents (see SpawnSubagent)."""
    options = session.options
    depth = session.subagent_depth
    wanted = isinstance(options.tools, list) and bool(
        {AGENT_TOOL, *AGENT_ALIASES} & set(options.tools))
    if depth >= max_depth():
        return []
    agents = catalog(session)
    if agents == {GENERAL_PURPOSE: _GENERAL} and not wanted:  # nothing was defined
        return []
    slots = getattr(session, "subagent_slots", None) or _Slots(
        _env_limit("FUXI_MAX_CONCURRENT_SUBAGENTS", 10))
    return [AgentTool(session, agents, slots, spawn=spawn, run=run)]


def agent_names(registry: ToolRegistry) -> list[str]:
    """The agents the session's Agent tool offers (for the init message)."""
    tool = registry.get(AGENT_TOOL)
    return list(tool.agents) if isinstance(tool, AgentTool) else []


def _listing(agents: dict[str, AgentDefinition]) -> str:
    lines = []
    for name, definition in agents.items():
        tools = ("all of yours" if definition.tools is None
                 else ", ".join(definition.tools) or "none")
        lines.append(f"- {name}: {' '.join(definition.description.split())} "
                     f"(tools: {tools})")
    return "\n".join(lines)


_ABOUT = """\
Launch a subagent to carry out a task on its own. It starts a fresh conversation with its \
own instructions and tools, does not see this conversation, and returns only its final \
message to you (you do not see its steps). So give it a complete, self-contained task in \
`prompt`: what to do, what you already know, and what to report back. `description` is a \
3-5 word summary; `subagent_type` chooses the agent; `model` (sonnet, opus or haiku) \
overrides its model. Several Agent calls in one response run at the same time: use that \
for independent pieces of work. Do not use it for a single file read or search: do that \
yourself.

Available agents (subagent_type):
"""


class AgentTool(DeclaredTool):
    """Runs a subagent for the model (see the module docstring)."""

    name = AGENT_TOOL
    aliases = AGENT_ALIASES
    kind = "read"
    #: a subagent asks a model, and its turns are not in the parent's record
    on_replay = "recorded"
    #: its subagent's messages join the parent's stream while it runs (see relay.py)
    relays_messages = True

    def __init__(self, session: Any, agents: dict[str, AgentDefinition], slots: _Slots, *,
                 spawn: SpawnSubagent, run: RunSubagent) -> None:
        self.session = session
        self.agents = agents
        self.slots = slots
        self._spawn = spawn
        self._run = run
        self.description = _ABOUT + _listing(agents)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "description": {"type": "string",
                                "description": "A short (3-5 word) summary of the task"},
                "prompt": {"type": "string", "description": "The task for the agent"},
                "subagent_type": {"type": "string",
                                  "description": "Which agent to use (listed above)"},
                "model": {"type": "string", "enum": ["sonnet", "opus", "haiku"],
                          "description": "Another model for this agent (optional)"},
                "run_in_background": {"type": "boolean",
                                      "description": "Run it in the background: its "
                                                     "result comes later, as a task "
                                                     "notification (where the host "
                                                     "cannot take one, it runs in the "
                                                     "foreground)"},
                "name": {"type": "string", "description": "A name for the agent (optional)"},
                "isolation": {"type": "string", "enum": ["worktree", "remote"],
                              "description": "Not supported: agents work in this folder"},
            },
            "required": ["description", "prompt", "subagent_type"],
        }

    def reach(self, input: dict[str, Any]) -> Reach:
        """Nothing: what the subagent touches is judged call by call."""
        return Reach()

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Start the subagent, wait for its final message, return it."""
        parent, agent_type = self.session, input["subagent_type"]
        definition = self.agents.get(agent_type)
        if definition is None:
            raise ToolError(f"Unknown subagent_type {agent_type!r}. Available agents: "
                            f"{', '.join(self.agents)}.")
        budget = parent.options.max_budget_usd
        if budget is not None and parent.usage.cost_usd >= budget:
            raise ToolError(f"Not started: the budget (${budget}) is used up.")
        if not self.slots.take():
            raise ToolError(f"Concurrent subagent limit reached ({self.slots.limit} running, "
                            "FUXI_MAX_CONCURRENT_SUBAGENTS): wait for one to finish, or do "
                            "this yourself.")
        servers, detached = None, False
        try:
            agent_id = uuid.uuid4().hex[:17]
            try:
                servers = await self._own_servers(agent_type, definition)
                child = self._spawn(parent, agent_type, definition, agent_id,
                                    input.get("model"), self.slots, servers)
            except ConfigurationError as error:
                raise ToolError(f"The {agent_type} agent could not start: {error}") from None
            background = getattr(parent, "background", None)
            if background is not None and (input.get("run_in_background")
                                           or definition.background):
                detached = True
                return self._detach(background, child, input, servers)
            return await self._run(parent, child, input)
        finally:
            if not detached:  # a background agent frees its slot and servers as it ends
                self.slots.release()
                if servers is not None:  # its own servers live as long as this call
                    await servers.close()

    def _detach(self, background: Any, child: Any, input: dict[str, Any],
                servers: Any) -> ToolOutput:
        """Start the subagent in the background (background.py); the call's answer."""
        from ...tools.progress import current_call

        parent = self.session
        child.running_in_background = True

        async def run() -> ToolOutput:
            try:
                return await self._run(parent, child, {**input, "run_in_background": False})
            finally:
                child.running_in_background = False
                if servers is not None:
                    await servers.close()

        background.start(run, task_id=child.agent_id, tool_use_id=current_call(),
                         description=input["description"], agent_type=child.agent_type,
                         release=self.slots.release)
        return ToolOutput(
            f"The {child.agent_type} agent is running in the background (agentId: "
            f"{child.agent_id}). Its result will come to you as a task notification when "
            "it finishes: do not wait or poll for it; go on with other work, or end your "
            "turn.")

    async def _own_servers(self, agent_type: str, definition: AgentDefinition) -> Any:
        """The MCP servers the definition defines inline (`{name: config}` entries of
        `mcpServers`), started for this call; None without any. Only a definition in
        `options.agents` (code) may: a server is a command to run, and an agent file of
        the project is not trusted code."""
        inline = [entry for entry in definition.mcpServers or [] if isinstance(entry, dict)]
        if not inline:
            return None
        from ..mcp_link import start_agent_servers

        parent = self.session
        if (parent.options.agents or {}).get(agent_type) is not definition:
            raise ConfigurationError(
                "its file defines MCP servers inline, which only an AgentDefinition in "
                "options.agents may; define them in .mcp.json and name them instead")
        configs: dict[str, Any] = {}
        for entry in inline:
            configs.update(entry)
        return await start_agent_servers(configs, parent.options, parent.cwd)
