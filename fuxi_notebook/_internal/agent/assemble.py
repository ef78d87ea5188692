"""The assembler: options and project settings -> a `Session` ready to run.

Everything a session is built from is put together here, once, above the loop: the
project settings of `setting_sources` (their env, hooks and model), the plugins, the
tool registry (built-ins, the caller's extra tools such as the kernel's, MCP servers'
tools, Agent, Skill, the session's own web and task tools, StructuredOutput), the
permission engine and the guard over its policy, the model, the context window and the
`/commands`. A subagent's session is built the same way (`_spawn`, which the Agent tool
is given, so that the tool needs neither the loop nor this module); `Session` only holds
and runs the conversation.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...hooks import HookRunner
from ...options import EFFORT_LEVELS, AgentDefinition, FuxiAgentOptions
from ..models.base import Model
from ..models.pricing import check_budget, endpoint_of
from ..permissions.engine import PermissionEngine
from ..permissions.integrity import PolicyGuard, Watched
from ..tools.base import ToolContext, ToolKind, ToolOutput, kind_of
from ..tools.builtin import builtin_tools
from ..tools.registry import ToolRegistry
from .own_tools import own_tools
from .project_link import load_project, with_project
from .prompt import PRESETS, system_blocks
from .session import Conversation, Session, env_int
from .structured import StructuredOutputTool, output_schema

__all__ = ["UNDERSTOOD_EXTRA_ARGS", "build_session"]

#: the comparable SDK's CLI flags (`extra_args`) that mean something here:
#: `replay-user-messages` echoes each prompt as a UserMessage (its uuid is a checkpoint);
#: `debug` sends the loop's debug lines to `stderr`, `debug-file` appends them to a file
UNDERSTOOD_EXTRA_ARGS = frozenset({"replay-user-messages", "debug", "debug-file"})


def build_session(options: FuxiAgentOptions, *, extra_tools: list[Any] | None = None,
                  conversation: Conversation | None = None, mcp: Any = None,
                  project: Any = None, keep_changes: bool = False) -> Session:
    """A session for `options`, ready to run.

    Args:
        extra_tools: tools offered besides the built-ins (e.g. the notebook's kernel
            tools); their names must not clash with a built-in.
        conversation: the conversation to go on with (None = a new one).
        mcp: the started `McpServers` whose tools are offered (their owner, a query,
            client or kernel, starts and stops them; see agent/mcp_link.py).
        project: the project settings of `setting_sources` (None = read them now;
            see agent/project_link.py).
        keep_changes: keep what the calls change in the working folders, in memory,
            even without `enable_file_checkpointing` (the notebook's `%fuxi undo`).

    Raises ConfigurationError for options that cannot work, before anything runs.
    """
    _validate(options)
    session = Session(options, cwd=_working_dir(options.cwd),
                      project=project if project is not None else load_project(options),
                      conversation=conversation, mcp=mcp)
    _equip(session, extra_tools)
    if session.checkpoints is None and keep_changes:
        session.checkpoints = _checkpoints(session, memory=True)
    return session


def _equip(session: Session, extra_tools: list[Any] | None) -> None:
    """Give a new session its hooks, tools, permissions, model, prompt and window."""
    from .extensions.commands import load_commands

    options = session.options
    effective = with_project(options, session.project)  # their env, hooks and model
    session.hooks = HookRunner(effective.hooks)
    if session.mcp is not None:
        extra_tools = [*(extra_tools or []), *session.mcp.tools()]
    candidates = _with_tool_search(options, _candidates(session, extra_tools))
    _police(session, candidates)
    session.model = _model_for(effective, session.project)
    endpoint = endpoint_of(session.model)  # where it is served: its price depends on it
    check_budget(options.max_budget_usd, session.model.name, endpoint)
    session.usage.endpoint = endpoint
    session.registry = ToolRegistry(t for t in candidates if all(
        session.permissions.offered(name) for name in _names(t)))  # older names too
    _loaded_if_unreachable(session.registry)
    session.tool_ctx = ToolContext(
        cwd=session.cwd, add_dirs=session.permissions.roots[1:], env=dict(effective.env),
        read_denied=session.read_denied, read_files=session.conversation.read_files,
        shell_cwd=session.conversation.shell_cwd)
    session.system = system_blocks(options, session.cwd, session.project)
    session.tool_definitions = session.registry.definitions()
    session.window  # noqa: B018 -- a bad window fails now, not at the first request
    session.commands = {} if session.subagent_depth else load_commands(
        options, session.cwd, session.plugins)
    session.checkpoints = _checkpoints(session)
    session.builder = build_session


def _checkpoints(session: Session, *, memory: bool = False) -> Any:
    """The file checkpoints `enable_file_checkpointing` asks for (kept on disk under the
    user folder, per session, so a resumed session can still rewind), those in memory
    `memory` asks for, else None."""
    if not (memory or session.options.enable_file_checkpointing):
        return None
    from ..checkpoints.history import FileHistory
    from ..checkpoints.watch import FileCheckpoints
    from ..common.switches import config_dir, config_dir_of

    with config_dir_of(session.options.env):
        folder = None if memory else config_dir() / "file-history" / session.id
    return FileCheckpoints(session.permissions.roots, FileHistory(folder))


def _candidates(session: Session, extra_tools: list[Any] | None) -> list[Any]:
    """The tools this session may offer: built-ins, the extra tools, Agent, Skill, the
    session's own tools and StructuredOutput (permissions decide what is offered)."""
    from .extensions.plugins import load_plugins
    from .extensions.skills import skill_tools  # the Skill tool, when skills exist
    from .subagents.agent_tool import subagent_tools  # the Agent tool, when agents exist

    options = session.options
    session.plugins = load_plugins(options, session.cwd)
    extra = [*(extra_tools or []), *subagent_tools(session, spawn=_spawn, run=_run),
             *own_tools(session)]
    candidates = _candidate_tools(options, [*extra, *skill_tools(session, extra)])
    session.structured = _structured_tool(options)
    if session.structured is not None:  # offered whatever `options.tools` narrows
        candidates.append(session.structured)
    return candidates


def _police(session: Session, candidates: list[Any]) -> None:
    """The permission engine over `candidates`, and the guard that keeps its policy
    as it is while code the model wrote runs."""
    from .extensions.skills import grant_skills

    options, conversation = session.options, session.conversation
    permissions = session.permissions = PermissionEngine(
        options, cwd=session.cwd, hooks=session.hooks, classifier=session.classify_call,
        tools=candidates, project=session.project)
    grant_skills(permissions, candidates)  # the user's own skills need no approval
    _warn_shadowed(options, {t.name: kind_of(t) for t in candidates})
    permissions.apply(conversation.permission_updates, remember=False)
    permissions.on_update = conversation.permission_updates.append
    guard = session.guard = PolicyGuard()  # its baseline is taken once all is in place
    permissions.on_applied = guard.reseal
    guard.watched = [*permissions.watched(), Watched(
        conversation, "permission_updates", label="the rules granted in this conversation")]
    guard.reseal()


def _spawn(parent: Session, agent_type: str, definition: AgentDefinition, agent_id: str,
           model: str | None, slots: Any, servers: Any = None) -> Session:
    """A subagent's session, built as every session is (the Agent tool's `spawn`);
    `servers`: the MCP servers its definition defines inline, started for this call."""
    from .subagents.session import child_session

    child, extras = child_session(parent, agent_type, definition, agent_id=agent_id,
                                  model=model, slots=slots, servers=servers)
    with warnings.catch_warnings():  # the parent's options were warned about already
        warnings.simplefilter("ignore")
        _validate(child.options)
        _equip(child, extras)
    return child


async def _run(parent: Session, child: Any, input: dict[str, Any]) -> ToolOutput:
    """The subagent's loop on the Agent call's prompt (the Agent tool's `run`)."""
    from .subagents.run import run_subagent

    return await run_subagent(parent, child, input)


def _model_for(options: FuxiAgentOptions, project: Any = None) -> Model:
    """The session's model. `env` is what the comparable SDK passes to its CLI:
    ANTHROPIC_MODEL chooses the model when the options do not (then FUXI_MODEL, then the
    package default), ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY there choose the endpoint
    and key, over the process's own, and FUXI_USE_BEDROCK / _VERTEX / _FOUNDRY (with the
    provider's own variables) the provider. Without a key, the settings' apiKeyHelper
    (`project`) gives one."""
    spec = options.model if options.model is not None else (
        options.env.get("ANTHROPIC_MODEL") or None)
    if spec is not None and not isinstance(spec, str):
        return spec  # a model given (a replay's ReplayModel): the API client stays unloaded
    from ..models.access.providers import current_provider
    from ..models.anthropic import AnthropicModel
    from ..models.names import model_name

    env = options.env
    provider = current_provider(None, {**os.environ, **env} if env else None)
    api_key = env.get("ANTHROPIC_API_KEY") or None
    helper = None
    if provider.name == "anthropic" and project is not None and not (
            api_key or os.environ.get("ANTHROPIC_API_KEY")
            or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        from ..settings.key_helper_setting import key_helper_for

        helper = key_helper_for(project, env=env)
    return AnthropicModel(model_name(spec), api_key=api_key,
                          base_url=env.get("ANTHROPIC_BASE_URL") or None, provider=provider,
                          key_helper=helper, client_app=options.client_app)


def _working_dir(cwd: str | Path | None) -> Path:
    path = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    if not path.is_dir():
        raise ConfigurationError(f"cwd {str(path)!r} is not an existing directory")
    return path.resolve()


def _candidate_tools(options: FuxiAgentOptions, extra_tools: list[Any] | None) -> list[Any]:
    """The tools this session may offer (`options.tools` narrows them; deny rules next)."""
    tools = builtin_tools() + list(extra_tools or [])
    if isinstance(options.tools, dict):  # {"type": "preset", "preset": "fuxi_code"}: all
        if options.tools.get("type") == "preset" and options.tools.get("preset") in PRESETS:
            return tools
        raise ConfigurationError("options.tools must be a list of tool names or "
                                 "{'type': 'preset', 'preset': 'fuxi_code'}, not "
                                 f"{options.tools!r}")
    if options.tools is not None:
        known = {name for tool in tools for name in _names(tool)}
        unknown = sorted(set(options.tools) - known)
        if unknown:
            raise ConfigurationError(
                f"unknown tool(s) in options.tools: {', '.join(unknown)}; "
                f"built-in tools are {', '.join(sorted(known))}"
            )
        # `tools` is the set of built-in tools, as in the comparable SDK: MCP servers'
        # tools (and the ToolSearch that finds them) are chosen by `mcp_servers` and rules
        tools = [tool for tool in tools if set(_names(tool)) & set(options.tools)
                 or _from_mcp(tool)]
    return tools


def _with_tool_search(options: FuxiAgentOptions, candidates: list[Any]) -> list[Any]:
    """The candidates with one ToolSearch over every deferred tool: MCP tools deferred for
    their number (mcp_servers/tool_search.py) and built-ins that declare
    `defer_by_default` (web, the task list), so the default request carries in full only
    what most sessions use. Built-ins are not deferred when `options.tools` names the
    tools (the caller chose them) or FUXI_TOOL_SEARCH is `never`."""
    from ..mcp_servers.tool_search import SETTING, ToolSearchTool

    never = os.environ.get(SETTING, "").strip().lower() == "never"
    chosen = isinstance(options.tools, list)
    for tool in candidates:
        if getattr(type(tool), "defer_by_default", False):
            tool.defer_loading = not (chosen or never)
    tools = [t for t in candidates if not isinstance(t, ToolSearchTool)]
    deferred = [t for t in tools if getattr(t, "defer_loading", False) is True]
    return [*tools, ToolSearchTool(deferred)] if deferred else tools


def _loaded_if_unreachable(registry: ToolRegistry) -> None:
    """Without ToolSearch (a rule took it away), nothing can load a deferred tool: then
    every tool is sent in full."""
    from ..mcp_servers.tool_search import TOOL_SEARCH

    if TOOL_SEARCH in registry:
        return
    for name in registry.names():
        tool = registry.get(name)
        if getattr(tool, "defer_loading", False) is True:
            setattr(tool, "defer_loading", False)  # noqa: B010 (not every Tool declares it)


def _from_mcp(tool: Any) -> bool:
    from ..mcp_servers.tool_search import ToolSearchTool

    return tool.name.startswith("mcp__") or isinstance(tool, ToolSearchTool)


def _names(tool: Any) -> tuple[str, ...]:
    """A tool's name and the older names it answers to (Agent: Task)."""
    return (tool.name, *getattr(tool, "aliases", ()))


def _structured_tool(options: FuxiAgentOptions) -> Any:
    """The StructuredOutput tool when `output_format` asks for one (a bad format is a
    ConfigurationError here, before any request)."""
    wanted = output_schema(options.output_format)
    return StructuredOutputTool(wanted) if wanted is not None else None


def _validate(options: FuxiAgentOptions) -> None:
    """Reject options that cannot work, with a message naming the option."""
    from ..models.names import checked_client_app

    checked_client_app(options.client_app)  # whichever model serves: a bad value is a bug
    if options.max_turns is not None and (
        not isinstance(options.max_turns, int) or options.max_turns < 1
    ):
        raise ConfigurationError(f"max_turns must be a positive integer, not {options.max_turns!r}")
    if options.max_budget_usd is not None and not options.max_budget_usd > 0:
        raise ConfigurationError(
            f"max_budget_usd must be a positive number, not {options.max_budget_usd!r}"
        )
    if options.effort is not None and options.effort not in EFFORT_LEVELS:
        raise ConfigurationError(
            f"effort must be one of {', '.join(EFFORT_LEVELS)}, not {options.effort!r}"
        )
    env_int(options.env, "MAX_THINKING_TOKENS")  # a bad value fails now, not mid-run
    ignored = sorted(set(options.extra_args or {}) - UNDERSTOOD_EXTRA_ARGS)
    if ignored:
        import warnings

        warnings.warn(f"extra_args {ignored} have no effect: they are flags of the "
                      "comparable SDK's CLI, and fuxi_notebook runs no CLI", stacklevel=3)
    _warn_no_effect(options)
    if options.permission_prompts not in ("host", "none"):
        raise ConfigurationError("permission_prompts must be 'host' or 'none', not "
                                 f"{options.permission_prompts!r}")
    if options.thinking is not None and not isinstance(options.thinking, dict):
        raise ConfigurationError("thinking must be a dict such as {'type': 'adaptive'}")
    if options.thinking and options.thinking.get("type") == "enabled":
        budget = options.thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise ConfigurationError("thinking budget_tokens must be an integer >= 1024")


def _warn_shadowed(options: FuxiAgentOptions, kinds: dict[str, ToolKind]) -> None:
    """`can_use_tool` that rules or the mode keep from ever being asked is a mistake worth
    a warning (the comparable SDK warns the same way)."""
    if options.can_use_tool is None:
        return
    import warnings

    from ...errors import CanUseToolShadowedWarning

    if options.permission_mode == "bypassPermissions":
        warnings.warn("can_use_tool is never asked: permission_mode 'bypassPermissions' "
                      "approves every call", CanUseToolShadowedWarning, stacklevel=5)
        return
    # a tool of kind "ask" exists to ask: no rule answers for the user
    bare = [rule for rule in options.allowed_tools if "(" not in rule
            and kinds.get(rule) != "ask"]
    if bare:
        warnings.warn(f"can_use_tool is never asked about {', '.join(bare)}: a bare tool "
                      "name in allowed_tools approves every call of that tool",
                      CanUseToolShadowedWarning, stacklevel=5)


#: the defaults of the no-effect options, filled once (in place: the code seal of
#: permissions/integrity.py sees a module attribute rebound as tampering)
_NO_EFFECT_DEFAULTS: dict[str, Any] = {}


def _warn_no_effect(options: FuxiAgentOptions) -> None:
    """A comparable-SDK option set to something that does nothing here warns (code that
    relies on it, a sandbox say, must not believe it is in force)."""
    import dataclasses
    import warnings

    from ...options import NO_EFFECT

    defaults = _NO_EFFECT_DEFAULTS
    if not defaults:  # made once: they are only compared with
        defaults.update({
            f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING
                     else f.default) for f in dataclasses.fields(FuxiAgentOptions)
            if f.name in NO_EFFECT})
    for name, why in NO_EFFECT.items():
        if getattr(options, name) != defaults[name]:
            warnings.warn(f"{name} has no effect: {why}", stacklevel=4)
