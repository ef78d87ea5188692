"""Session: one conversation (a `Conversation`) under one set of options.

A session is created from validated options and lives across queries of a
`FuxiSDKClient`. It keeps the history valid for the API at every await point: each
assistant `tool_use` is answered by exactly one `tool_result` in the next user message,
even when a run ends early (results that could not be sent yet wait in `pending_results`).

What belongs to the conversation (its id, history, owed results, usage, the files the
agent has read, the shell's directory, permissions granted along the way) lives in a
`Conversation`, which `Session.continued` carries over to new options: continuing with
another model or other limits, resuming from saved history and forking are all that one
operation.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ...hooks import HookRunner
from ...options import EFFORT_LEVELS, FuxiAgentOptions, PermissionUpdate
from ...types import SystemMessage, new_uuid
from ..common.reminders import REMINDER_OPEN
from ..context.tokens import RequestMeter
from ..context.windows import Window, context_window
from ..models.anthropic import resolve_model
from ..models.base import Model
from ..permissions.classifier import classify
from ..permissions.engine import PermissionEngine
from ..permissions.integrity import PolicyGuard, Watched
from ..tools.base import ToolContext, ToolKind, kind_of
from ..tools.builtin import builtin_tools
from ..tools.registry import ToolRegistry
from ..tools.task_list import TaskList
from .loop.prompt import system_blocks
from .loop.usage import UsageTotals

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "Conversation", "Session", "check_budget"]


DEFAULT_MAX_OUTPUT_TOKENS = int(os.environ.get("FUXI_MAX_OUTPUT_TOKENS", "16384"))


@dataclass
class Conversation:
    """Everything that outlives one set of options: what a resumed or continued
    conversation must get back. A new piece of conversation state belongs here, so that
    continuing, resuming and forking all keep it.

    Attributes:
        id: the session id reported in messages and records.
        history: the Messages-API messages so far (valid at every await point).
        pending_results: tool results owed to the model, sent with the next prompt.
        usage: tokens and cost so far.
        read_files: files the agent read or wrote (path -> mtime_ns), for Edit/Write.
        shell_cwd: the Bash tool's working directory, if it moved.
        permission_updates: rules and modes granted during the conversation
            ("Always allow"), re-applied under new options.
        tasks: the agent's task checklist (TaskCreate / TaskUpdate).
    """

    id: str = field(default_factory=new_uuid)
    history: list[dict[str, Any]] = field(default_factory=list)
    pending_results: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    read_files: dict[str, int] = field(default_factory=dict)
    shell_cwd: Path | None = None
    permission_updates: list[PermissionUpdate] = field(default_factory=list)
    tasks: TaskList = field(default_factory=TaskList)

    def forked(self, new_id: str | None = None) -> Conversation:
        """An independent copy under a new id: the original branch stays as it is."""
        twin = copy.deepcopy(self)
        twin.id = new_id or new_uuid()
        return twin


class Session:
    """One conversation under one set of options: what it needs to make requests and run
    tools."""

    #: how deep under the user's own session this one runs (0: it is the user's; a
    #: subagent's session is one deeper than its parent's)
    subagent_depth: int = 0

    def __init__(self, options: FuxiAgentOptions, *, extra_tools: list[Any] | None = None,
                 conversation: Conversation | None = None, mcp: Any = None,
                 project: Any = None) -> None:
        """Args:
            extra_tools: tools offered besides the built-ins (e.g. the notebook's kernel
                tools); their names must not clash with a built-in.
            conversation: the conversation to go on with (None = a new one).
            mcp: the started `McpServers` whose tools are offered (their owner, a query,
                client or kernel, starts and stops them; see agent/mcp_link.py).
            project: the project settings of `setting_sources` (None = read them now;
                see agent/project_link.py).
        """
        from .project_link import load_project, with_project

        _validate(options)
        self.options = options
        #: the settings files, FUXI.md and output style of `setting_sources`
        self.project = project if project is not None else load_project(options)
        effective = with_project(options, self.project)  # their env, hooks and model
        self.conversation = conversation if conversation is not None else Conversation()
        #: the JSONL file the conversation is saved to, for hooks (set by persist.py)
        self.transcript_path: str | None = None
        #: told of each subagent as it starts, with its Agent call's id (persist.py saves
        #: the subagent's conversation with the session's)
        self.on_subagent: Callable[[Any, str | None], None] | None = None
        self.cwd = _working_dir(options.cwd)
        self.hooks = HookRunner(effective.hooks)
        self.mcp = mcp
        if mcp is not None:
            extra_tools = [*(extra_tools or []), *mcp.tools()]
        candidates = self._candidates(options, extra_tools)
        self._police(options, candidates)
        self.model: Model = _model_for(effective)
        check_budget(options, self.model.name)
        self.registry = ToolRegistry(t for t in candidates if all(
            self.permissions.offered(name) for name in _names(t)))  # older names too
        self.tool_ctx = ToolContext(cwd=self.cwd, add_dirs=self.permissions.roots[1:],
                                    env=dict(effective.env), read_denied=self._read_denied,
                                    read_files=self.conversation.read_files,
                                    shell_cwd=self.conversation.shell_cwd)
        self.system = system_blocks(options, self.cwd, self.project)
        self.tool_definitions = self.registry.definitions()
        self._window = (self.model_name, self._new_window())  # a bad window fails now
        #: the size of the next request (see compacting.py)
        self.meter = RequestMeter()
        self.auto_compact = bool(options.auto_compact)
        from .extensions.commands import load_commands

        #: the `/commands` a user's prompt may start with (a subagent's prompt is the model's)
        self.commands = {} if self.subagent_depth else load_commands(
            options, self.cwd, self.plugins)

    def _candidates(self, options: FuxiAgentOptions, extra_tools: list[Any] | None) -> list[Any]:
        """The tools this session may offer: built-ins, the extra tools, Agent, Skill, the
        session's own tools and StructuredOutput (permissions decide what is offered)."""
        from .extensions.plugins import load_plugins
        from .extensions.skills import skill_tools  # the Skill tool, when skills exist
        from .subagents.agent_tool import subagent_tools  # the Agent tool, when agents are defined

        #: the plugin folders (read once: agents, skills and commands all come from them)
        self.plugins = load_plugins(options, self.cwd)

        extra_tools = [*(extra_tools or []), *subagent_tools(self), *self._own_tools(options)]
        candidates = _candidate_tools(options, [*extra_tools, *skill_tools(self, extra_tools)])
        #: the final answer's schema and the tool that submits it (None: free text)
        self.structured = _structured_tool(options)
        if self.structured is not None:  # offered whatever `options.tools` narrows
            candidates.append(self.structured)
        return candidates

    def _police(self, options: FuxiAgentOptions, candidates: list[Any]) -> None:
        """The permission engine over `candidates`, and the guard that keeps its policy
        as it is while code the model wrote runs."""
        from .extensions.skills import grant_skills

        self.permissions = PermissionEngine(options, cwd=self.cwd, hooks=self.hooks,
                                            classifier=self._classify, tools=candidates,
                                            project=self.project)
        grant_skills(self.permissions, candidates)  # the user's own skills need no approval
        _warn_shadowed(options, {t.name: kind_of(t) for t in candidates})
        self.permissions.apply(self.conversation.permission_updates, remember=False)
        self.permissions.on_update = self.conversation.permission_updates.append
        #: the policy that code the model runs must leave as it is (see integrity.py)
        self.guard = PolicyGuard([*self.permissions.watched(), Watched(
            self.conversation, "permission_updates",
            label="the rules granted in this conversation")])
        self.permissions.on_applied = self.guard.reseal
        self.guard.reseal()

    @staticmethod
    def own_tool_names() -> frozenset[str]:
        """The names of the tools every session makes for itself (a subagent's session
        makes its own, so they are never passed on)."""
        from ..tools.tasks import TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool
        from ..tools.web.fetch_tool import WebFetchTool
        from ..tools.web.search import WebSearchTool

        return frozenset(tool.name for tool in (WebFetchTool, WebSearchTool, TaskCreateTool,
                                                TaskUpdateTool, TaskListTool, TaskGetTool))

    def _own_tools(self, options: FuxiAgentOptions) -> list[Any]:
        """The built-in tools that need the session: web (its model, its usage) and the
        task list (the conversation's, rebuilt from the history when it was loaded)."""
        from ..tools.tasks import task_tools
        from ..tools.web.fetch_tool import web_tools

        web = web_tools(lambda: (self.model, self.model_name),
                        lambda model, usage: self.usage.add(model, usage),
                        private_hosts=options.web_fetch_private_hosts,
                        allowed_domains=options.web_search_allowed_domains,
                        blocked_domains=options.web_search_blocked_domains)
        tasks = task_tools(self.conversation.tasks,
                           [*self.history, *self.pending_messages()])
        return [*web, *tasks]

    def nested_memory(self, file_path: Any) -> list[str]:
        """The FUXI.md files of the folders between the project and a file the model has
        just read, not shown before (each once a session): the rules of a subfolder
        reach the model when it works there."""
        if "project" not in self.project.sources or not isinstance(file_path, str):
            return []
        from ..settings.memory import nested_memory

        shown = self._memory_shown
        if shown is None:
            shown = self._memory_shown = {str(m.path) for m in self.project.memory}
        found = nested_memory(self.tool_ctx.resolve(file_path), self.cwd, shown)
        shown.update(str(path) for path, _ in found)
        return [f"Contents of {path} (instructions for the files in its folder):\n\n{text}"
                for path, text in found]

    _memory_shown: set[str] | None = None

    def continued(self, options: FuxiAgentOptions, *,
                  extra_tools: list[Any] | None = None) -> Session:
        """This conversation going on under new options (model, tools, limits, rules).

        Raises ConfigurationError for unusable options; this session is left untouched.
        """
        return Session(options, extra_tools=extra_tools, conversation=self.snapshot(),
                       mcp=self.mcp)

    def snapshot(self) -> Conversation:
        """The conversation as it stands (the shell's directory brought up to date)."""
        self.conversation.shell_cwd = self.tool_ctx.shell_cwd
        return self.conversation

    def kind(self, tool_name: str) -> ToolKind | None:
        """The declared kind of an offered tool, as the permission engine took it (None:
        no such tool)."""
        if tool_name not in self.registry:
            return None
        declared = self.permissions.declared.get(tool_name)
        return declared.kind if declared is not None else "execute"

    @property
    def id(self) -> str:
        return self.conversation.id

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.conversation.history

    @history.setter
    def history(self, messages: list[dict[str, Any]]) -> None:
        self.conversation.history = messages

    @property
    def pending_results(self) -> list[dict[str, Any]]:
        return self.conversation.pending_results

    @pending_results.setter
    def pending_results(self, results: list[dict[str, Any]]) -> None:
        self.conversation.pending_results = results

    @property
    def usage(self) -> UsageTotals:
        return self.conversation.usage

    @property
    def model_name(self) -> str:
        return self.model.name

    @property
    def window(self) -> Window:
        """The context window's budget (it follows the model, which `set_model` and a
        command's `model` may change)."""
        if self._window[0] != self.model_name:
            self._window = (self.model_name, self._new_window())
        return self._window[1]

    def _new_window(self) -> Window:
        size = _window_size(self.options, self.model_name)
        return Window(size=min(size, self._stated_window or size),
                      output=self.request_params()["max_tokens"])

    def limit_window(self, tokens: int) -> None:
        """The API rejected a prompt over `tokens`: that is the window from now on."""
        if tokens >= 2_000:
            self._stated_window = tokens
            self._window = (self.model_name, self._new_window())

    _stated_window: int | None = None

    def setup_notes(self) -> list[str]:
        """What the user must know about the project's settings, once a session: what
        was held back for want of trust, and what was skipped."""
        if self._noted:
            return []
        self._noted = True
        from .project_link import held_back_note

        note = held_back_note(self.project)
        return [*([note] if note else []), *self.project.warnings]

    _noted: bool = False

    def init_message(self) -> SystemMessage:
        """The `init` system message that starts every run."""
        from .extensions.skills import skill_names
        from .subagents.agent_tool import agent_names

        return SystemMessage(subtype="init", data={
            "type": "system",
            "subtype": "init",
            "uuid": new_uuid(),
            "session_id": self.id,
            "model": self.model_name,
            "tools": self.registry.names(),
            "permission_mode": self.permissions.mode,
            "cwd": str(self.cwd),
            "mcp_servers": self.mcp_servers(),
            "agents": agent_names(self.registry),
            "slash_commands": sorted(self.commands),
            "plugins": [plugin.listed() for plugin in self.plugins.found],
            "plugin_errors": list(self.plugins.errors),
            "skills": skill_names(self.registry),
            "output_style": self.project.output_style.name,
            "available_output_styles": list(self.project.output_style.available),
            "held_back": [item.line() for item in self.project.held_back],
            "apiKeySource": "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none",
        })

    def mcp_servers(self) -> list[dict[str, Any]]:
        """The MCP servers as the init message lists them: name, status, and why a
        server failed."""
        if self.mcp is None:
            return []
        return [{k: v for k, v in status.items() if k in ("name", "status", "error")}
                for status in self.mcp.status()]

    def _read_denied(self, path: Path, tool: str) -> bool:
        book = self.permissions.book
        return book.has_read_denies(tool) and book.read_denied(path, tool)

    def hook_input(self) -> dict[str, Any]:
        """The fields every hook input carries."""
        return {"session_id": self.id, "transcript_path": self.transcript_path,
                "cwd": str(self.cwd),
                "permission_mode": self.permissions.mode}

    def user_requests(self) -> list[str]:
        """What the user asked in this session (prompt text only, never tool results)."""
        texts = []
        for message in self.history:
            if message["role"] == "user":
                texts.extend(b["text"] for b in message["content"] if b.get("type") == "text"
                             and not b["text"].startswith(REMINDER_OPEN))
        return texts

    async def _classify(self, tool_name: str, tool_input: dict[str, Any]) -> tuple[bool, str]:
        """The `auto` mode classifier, on this session's model; its cost is counted."""
        verdict = await classify(self.model, model_name=self.model_name,
                                 user_requests=self.user_requests(), tool_name=tool_name,
                                 tool_input=tool_input)
        if verdict.response is not None:
            self.usage.add(verdict.response.model or self.model_name, verdict.response.usage)
        return verdict.allow, verdict.reason

    def add_user_prompt(self, content: str | list[dict[str, Any]]) -> None:
        """Append a prompt, preceded by any tool results still owed to the model."""
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if self.history and self.history[-1]["role"] == "user" and not self.pending_results:
            self.history[-1] = {"role": "user",
                                "content": [*self.history[-1]["content"], *blocks]}
            return
        if self.pending_results:
            blocks = [*self.pending_results, *blocks]
            self.pending_results = []
        self.history.append({"role": "user", "content": blocks})

    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        """Append a response; private keys (e.g. `_invalid_input`) never reach the API."""
        clean = [{k: v for k, v in block.items() if not k.startswith("_")} for block in content]
        self.history.append({"role": "assistant", "content": clean})

    def add_tool_results(self, results: list[dict[str, Any]], *, send_now: bool) -> int:
        """Answer the last response's tool calls now, or with the next prompt. Together
        the results take at most `window.results` tokens: how many were cut to fit."""
        from ..context.compaction import fit_results

        cut = fit_results([b for b in results if b.get("type") == "tool_result"],
                          self.window.results)
        if send_now:
            self.history.append({"role": "user", "content": results})
        else:
            self.pending_results.extend(results)
        return cut

    def pending_messages(self) -> list[dict[str, Any]]:
        """Tool results still owed to the model, as the user message that will carry them."""
        return [{"role": "user", "content": list(self.pending_results)}] if (
            self.pending_results) else []

    def request_params(self) -> dict[str, Any]:
        """`max_tokens`, `thinking` and `output_config` in the API's own form."""
        options = self.options
        thinking = options.thinking
        budget = options.max_thinking_tokens or _env_int(options.env, "MAX_THINKING_TOKENS")
        if thinking is None and budget:
            thinking = {"type": "enabled", "budget_tokens": budget}
        max_tokens = options.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        if thinking and thinking.get("type") == "enabled":
            max_tokens = max(max_tokens, int(thinking["budget_tokens"]) + 1024)
        output_config = {"effort": options.effort} if options.effort else None
        return {"max_tokens": max_tokens, "thinking": thinking, "output_config": output_config}


def _model_for(options: FuxiAgentOptions) -> Model:
    """The session's model. `env` is what the comparable SDK passes to its CLI:
    ANTHROPIC_MODEL chooses the model when the options do not (then FUXI_MODEL, then the
    package default), and ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY there choose the endpoint
    and key, over the process's own."""
    spec = options.model if options.model is not None else (
        options.env.get("ANTHROPIC_MODEL") or None)
    base_url, api_key = options.env.get("ANTHROPIC_BASE_URL"), options.env.get(
        "ANTHROPIC_API_KEY")
    if (base_url or api_key) and (spec is None or isinstance(spec, str)):
        from ..models.anthropic import AnthropicModel
        from ..models.names import model_name

        return AnthropicModel(model_name(spec), api_key=api_key or None,
                              base_url=base_url or None)
    return resolve_model(spec)


def _window_size(options: FuxiAgentOptions, model: str) -> int:
    """The context window: `options.context_window`, else `FUXI_CONTEXT_WINDOW`, else the
    model's (a configured window larger than a known model's is the model's)."""
    given = options.context_window
    if given is None:
        raw = os.environ.get("FUXI_CONTEXT_WINDOW", "").strip()
        if raw:
            try:
                given = int(raw)
            except ValueError:
                raise ConfigurationError(f"FUXI_CONTEXT_WINDOW must be a whole number of "
                                         f"tokens, not {raw!r}") from None
    from ..context.windows import CONTEXT_WINDOWS
    from ..models.pricing import model_family

    own = context_window(model)
    if given is None:
        return own
    if isinstance(given, bool) or not isinstance(given, int) or given < 2_000:
        raise ConfigurationError(f"context_window must be a whole number of tokens of at "
                                 f"least 2000, not {given!r}")
    return min(given, own) if model_family(model, CONTEXT_WINDOWS) else given


def _env_int(env: dict[str, str], name: str) -> int | None:
    """A whole number from `options.env` (the comparable SDK's CLI reads these)."""
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"env {name} must be a whole number, not {raw!r}") from None
    return value if value > 0 else None


def _working_dir(cwd: str | Path | None) -> Path:
    path = Path(cwd).expanduser() if cwd is not None else Path.cwd()
    if not path.is_dir():
        raise ConfigurationError(f"cwd {str(path)!r} is not an existing directory")
    return path.resolve()


def _candidate_tools(options: FuxiAgentOptions, extra_tools: list[Any] | None) -> list[Any]:
    """The tools this session may offer (`options.tools` narrows them; deny rules next)."""
    from .loop.prompt import PRESETS

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


def _from_mcp(tool: Any) -> bool:
    from ..mcp_servers.tool_search import ToolSearchTool

    return tool.name.startswith("mcp__") or isinstance(tool, ToolSearchTool)


def _names(tool: Any) -> tuple[str, ...]:
    """A tool's name and the older names it answers to (Agent: Task)."""
    return (tool.name, *getattr(tool, "aliases", ()))


def _structured_tool(options: FuxiAgentOptions) -> Any:
    """The StructuredOutput tool when `output_format` asks for one (a bad format is a
    ConfigurationError here, before any request)."""
    from .loop.structured import StructuredOutputTool, output_schema

    wanted = output_schema(options.output_format)
    return StructuredOutputTool(wanted) if wanted is not None else None


def check_budget(options: FuxiAgentOptions, model: str) -> None:
    """A budget is kept by pricing each response: with a model whose price is unknown it
    could never stop the run, so it is refused up front instead of silently ignored."""
    from ..models.pricing import is_known_model

    if options.max_budget_usd is not None and not is_known_model(model):
        raise ConfigurationError(
            f"max_budget_usd cannot be kept with model {model!r}: its price is unknown, so "
            "the cost of a run cannot be counted (use a model from the price table, or no "
            "budget)")


def _validate(options: FuxiAgentOptions) -> None:
    """Reject options that cannot work, with a message naming the option."""
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
    _env_int(options.env, "MAX_THINKING_TOKENS")  # a bad value fails now, not mid-run
    if options.extra_args:
        import warnings

        warnings.warn(f"extra_args {sorted(options.extra_args)} have no effect: they are flags "
                      "of the comparable SDK's CLI, and fuxi_notebook runs no CLI",
                      stacklevel=3)
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
                      "approves every call", CanUseToolShadowedWarning, stacklevel=4)
        return
    # a tool of kind "ask" exists to ask: no rule answers for the user
    bare = [rule for rule in options.allowed_tools if "(" not in rule
            and kinds.get(rule) != "ask"]
    if bare:
        warnings.warn(f"can_use_tool is never asked about {', '.join(bare)}: a bare tool "
                      "name in allowed_tools approves every call of that tool",
                      CanUseToolShadowedWarning, stacklevel=4)


def _warn_no_effect(options: FuxiAgentOptions) -> None:
    """A comparable-SDK option set to something that does nothing here warns (code that
    relies on it, a sandbox say, must not believe it is in force)."""
    import dataclasses
    import warnings

    from ...options import NO_EFFECT

    defaults = {f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING
                         else f.default) for f in dataclasses.fields(FuxiAgentOptions)}
    for name, why in NO_EFFECT.items():
        if getattr(options, name) != defaults[name]:
            warnings.warn(f"{name} has no effect: {why}", stacklevel=4)
