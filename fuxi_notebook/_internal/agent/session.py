"""Session: one conversation (a `Conversation`) under one set of options.

A session is built by the assembler (`assemble.build_session`: options and project
settings -> tools, permissions, hooks, model, window) and lives across queries of a
`FuxiSDKClient`; this module only holds and runs it. It keeps the history valid for
the API at every await point: each assistant `tool_use` is answered by exactly one
`tool_result` in the next user message, even when a run ends early (results that could
not be sent yet wait in `pending_results`).

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
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ...hooks import HookRunner
from ...options import FuxiAgentOptions, PermissionUpdate
from ...types import SystemMessage, new_uuid
from ..common.reminders import REMINDER_OPEN
from ..context.tokens import RequestMeter
from ..context.windows import Window, context_window
from ..models.base import Model
from ..models.usage import UsageTotals
from ..permissions.classifier import classify
from ..permissions.engine import PermissionEngine
from ..permissions.integrity import PolicyGuard
from ..tools.base import ToolContext, ToolKind
from ..tools.registry import ToolRegistry
from ..tools.task_list import TaskList

if TYPE_CHECKING:
    from ..checkpoints.watch import FileCheckpoints
    from ..settings.project import ProjectSettings
    from .extensions.commands import Command
    from .extensions.plugins import Plugins

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "Conversation", "Session", "env_int"]


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
        title: the title a UserPromptSubmit hook gave the session (`sessionTitle`),
            stored as its transcript's custom title.
    """

    id: str = field(default_factory=new_uuid)
    history: list[dict[str, Any]] = field(default_factory=list)
    pending_results: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    read_files: dict[str, int] = field(default_factory=dict)
    shell_cwd: Path | None = None
    permission_updates: list[PermissionUpdate] = field(default_factory=list)
    tasks: TaskList = field(default_factory=TaskList)
    title: str | None = None

    def forked(self, new_id: str | None = None) -> Conversation:
        """An independent copy under a new id: the original branch stays as it is."""
        twin = copy.deepcopy(self)
        twin.id = new_id or new_uuid()
        return twin


class Session:
    """One conversation under one set of options: what it needs to make requests and run
    tools. `assemble.build_session` makes one and equips it (the attributes declared
    below without a value); a Session itself builds nothing."""

    #: how deep under the user's own session this one runs (0: it is the user's; a
    #: subagent's session is one deeper than its parent's)
    subagent_depth: int = 0

    # -- equipped by the assembler (agent/assemble.py) --
    hooks: HookRunner
    #: the plugin folders (read once: agents, skills and commands all come from them)
    plugins: Plugins
    #: the final answer's schema and the tool that submits it (None: free text)
    structured: Any
    permissions: PermissionEngine
    #: the policy that code the model runs must leave as it is (see integrity.py)
    guard: PolicyGuard
    model: Model
    registry: ToolRegistry
    tool_ctx: ToolContext
    system: list[dict[str, Any]]
    tool_definitions: list[dict[str, Any]]
    #: the `/commands` a user's prompt may start with (a subagent's prompt is the model's)
    commands: dict[str, Command]
    #: what the calls changed in the working folders, for `rewind_files` (None: not
    #: kept; `enable_file_checkpointing`)
    checkpoints: FileCheckpoints | None
    #: builds a session for `continued` (the assembler's own entry point)
    builder: Callable[..., Session]

    def __init__(self, options: FuxiAgentOptions, *, cwd: Path, project: ProjectSettings,
                 conversation: Conversation | None = None, mcp: Any = None) -> None:
        """Args:
            cwd: the working directory (resolved, existing).
            project: the project settings of `setting_sources` (agent/project_link.py).
            conversation: the conversation to go on with (None = a new one).
            mcp: the started `McpServers` whose tools are offered (their owner, a query,
                client or kernel, starts and stops them; see agent/mcp_link.py).
        """
        self.options = options
        self.project = project
        self.conversation = conversation if conversation is not None else Conversation()
        self.cwd = cwd
        self.mcp = mcp
        #: the JSONL file the conversation is saved to, for hooks (set by persist.py)
        self.transcript_path: str | None = None
        #: told of each subagent as it starts, with its Agent call's id (persist.py saves
        #: the subagent's conversation with the session's)
        self.on_subagent: Callable[[Any, str | None], None] | None = None
        #: told when a round of tool results has joined the conversation, before the next
        #: request (persist.py writes the turn behind, while the API answers)
        self.on_turn: Callable[[], None] | None = None
        #: where Agent calls may run in the background (subagents/background.py), set by
        #: an owner that takes their results later; None: they run in the foreground
        self.background: Any = None
        #: the size of the next request (see compacting.py)
        self.meter = RequestMeter()
        self.auto_compact = bool(options.auto_compact)

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
        return self.builder(options, extra_tools=extra_tools, conversation=self.snapshot(),
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
        if self._window is None or self._window[0] != self.model_name:
            self._window = (self.model_name, self._new_window())
        return self._window[1]

    _window: tuple[str, Window] | None = None

    def _new_window(self) -> Window:
        size = _window_size(self.options, self.model_name)
        return Window(size=min(size, self._stated_window or size),
                      output=self.request_params()["max_tokens"])

    def limit_window(self, tokens: int) -> None:
        """The API rejected a prompt over `tokens`: that is the window from now on (it
        only ever shrinks: an API that does not state its window is bounded by the size
        of each prompt it refused)."""
        if tokens >= 2_000:
            self._stated_window = min(tokens, self._stated_window or tokens)
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
            "output_style": self.project.output_style.reported,
            "available_output_styles": list(self.project.output_style.available),
            "held_back": [item.line() for item in self.project.held_back],
            "apiKeySource": getattr(self.model, "key_source", None) or (
                "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none"),
        })

    def mcp_servers(self) -> list[dict[str, Any]]:
        """The MCP servers as the init message lists them: name, status, and why a
        server failed."""
        if self.mcp is None:
            return []
        return [{k: v for k, v in status.items() if k in ("name", "status", "error")}
                for status in self.mcp.status()]

    def read_denied(self, path: Path, tool: str) -> bool:
        """Whether a read rule denies `tool` reading `path` (the tools' context asks)."""
        book = self.permissions.book
        return book.has_read_denies(tool) and book.read_denied(path, tool)

    def hook_input(self) -> dict[str, Any]:
        """The fields every hook input carries."""
        return {"session_id": self.id, "transcript_path": self.transcript_path,
                "cwd": str(self.cwd),
                "permission_mode": self.permissions.mode}

    def user_requests(self) -> list[str]:
        """What the user asked in this session (prompt text only, never tool results)."""
        texts: list[str] = []
        for message in self.history:
            if message["role"] == "user":
                texts.extend(b["text"] for b in message["content"] if b.get("type") == "text"
                             and not b["text"].startswith(REMINDER_OPEN))
        return texts

    async def classify_call(self, tool_name: str, tool_input: dict[str, Any]) -> tuple[bool, str]:
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

    def withdraw_prompt(self, blocks: list[dict[str, Any]]) -> bool:
        """Take back a prompt the model never answered (its request failed), so that the
        next request does not carry it unseen: the last user message loses `blocks` (the
        very objects `add_user_prompt` appended), and the tool results it carried are
        owed again. False when the history no longer ends with them (compacted)."""
        last = self.history[-1] if self.history else None
        content = last["content"] if last is not None and last["role"] == "user" else None
        if not isinstance(content, list) or not blocks or len(content) < len(blocks) or any(
                a is not b for a, b in zip(content[-len(blocks):], blocks, strict=True)):
            return False
        rest = content[:-len(blocks)]
        if rest and all(b.get("type") == "tool_result" for b in rest):
            self.pending_results = [*rest, *self.pending_results]
            rest = []
        if rest:
            self.history[-1] = {"role": "user", "content": rest}
        else:
            self.history.pop()
        return True

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
        budget = options.max_thinking_tokens or env_int(options.env, "MAX_THINKING_TOKENS")
        if thinking is None and budget:
            thinking = {"type": "enabled", "budget_tokens": budget}
        max_tokens = options.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        if thinking and thinking.get("type") == "enabled":
            max_tokens = max(max_tokens, int(thinking["budget_tokens"]) + 1024)
        output_config = {"effort": options.effort} if options.effort else None
        return {"max_tokens": max_tokens, "thinking": thinking, "output_config": output_config}


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


def env_int(env: dict[str, str], name: str) -> int | None:
    """A whole number from `options.env` (the comparable SDK's CLI reads these)."""
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"env {name} must be a whole number, not {raw!r}") from None
    return value if value > 0 else None
