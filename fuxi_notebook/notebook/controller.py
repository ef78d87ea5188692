"""NotebookAgent: runs `%%fuxi` cells on the kernel's loop and keeps the conversation.

One agent per IPython shell. Consecutive cells continue one conversation (`--new`, or a
different model or cwd, starts a fresh one); each cell's run is shown live, approved with
buttons (or decided by policy when no one can click), and ends with plain final outputs:
a transcript and the cell's session record. Interrupt cancels the run within a second,
answers every open tool call, shows the partial run, and re-raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..agent.loop import run_prompt
from ..agent.run import Run
from ..agent.session import Session, reminder
from ..errors import ConfigurationError
from ..options import (
    FuxiAgentOptions,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)
from ..types import ResultMessage
from .magic_args import CellArgs, MagicArgsError, parse_cell_line
from .render import HeadlessRenderer, LiveRenderer, Renderer, TextRenderer

__all__ = ["FuxiRun", "NotebookAgent", "detect_frontend"]

TICK_SECONDS = 0.1  # keeps the loop waking so "Interrupt kernel" lands promptly (ipykernel#881)
_SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def detect_frontend(shell: Any) -> str:
    """"lab" (a frontend that can click), "headless" (nbclient, papermill) or "terminal"."""
    forced = os.environ.get("FUXI_FRONTEND")
    if forced in ("lab", "headless", "terminal"):
        return forced
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        import sys

        return "terminal" if sys.stdin is not None and sys.stdin.isatty() else "headless"
    parent = kernel.get_parent() or {}
    return "lab" if (parent.get("metadata") or {}).get("cellId") else "headless"


@dataclass
class FuxiRun:
    """What a `%%fuxi` cell leaves in the namespace as `_fuxi`."""

    result: ResultMessage
    record: Any
    cell_id: str

    def __repr__(self) -> str:
        return (f"FuxiRun(cell_id={self.cell_id!r}, subtype={self.result.subtype!r}, "
                f"num_turns={self.result.num_turns})")

    @property
    def text(self) -> str | None:
        return self.result.result


class NotebookAgent:
    """The `%%fuxi` state of one shell: defaults, the conversation, the last cell."""

    def __init__(self, shell: Any) -> None:
        from .kernel_tools import KernelContext

        self.shell = shell
        self.defaults: dict[str, Any] = {}
        self.session: Session | None = None
        self._key: tuple[Any, ...] | None = None
        self._rules: list[PermissionUpdate] = []
        self.last_cell_id: str | None = None
        self.context = KernelContext(shell)
        self.runs = 0
        self.turns = 0

    def reset(self) -> None:
        """Forget the conversation (the next cell starts fresh)."""
        self.session = None
        self._key = None
        self._rules = []
        self.last_cell_id = None
        self.runs = self.turns = 0

    def _options(self, args: CellArgs) -> FuxiAgentOptions:
        settings = {**self.defaults, **args.settings()}
        return FuxiAgentOptions(
            model=settings.get("model"),
            max_turns=settings.get("max_turns"),
            max_budget_usd=settings.get("max_budget_usd"),
            permission_mode=settings.get("permission_mode"),
            allowed_tools=list(settings.get("allowed_tools") or []),
            disallowed_tools=list(settings.get("disallowed_tools") or []),
            effort=settings.get("effort"),
            cwd=settings.get("cwd"),
        )

    def _session(self, options: FuxiAgentOptions, new: bool) -> Session:
        """This cell's session: the conversation so far, with this cell's options."""
        from .kernel_tools import kernel_tools

        key = (options.model or os.environ.get("FUXI_MODEL"),
               str(Path(options.cwd or os.getcwd()).resolve()))
        fresh = Session(options, extra_tools=kernel_tools(self.shell))
        old = self.session
        if new or old is None or key != self._key:
            self.reset()
        else:
            fresh.id, fresh.history, fresh.usage = old.id, old.history, old.usage
            fresh.pending_results = old.pending_results
            fresh.tool_ctx.read_files = old.tool_ctx.read_files
            fresh.tool_ctx.shell_cwd = old.tool_ctx.shell_cwd
            fresh.permissions.apply(self._rules)
        self.session, self._key = fresh, key
        return fresh

    def _cell_id(self, args: CellArgs) -> str:
        """The cell's stable id: `--id`, else the frontend's cell id (the nbformat cell id,
        which survives save, reload and reordering), else a fresh one."""
        if args.cell_id:
            return args.cell_id
        kernel = getattr(self.shell, "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
        cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
        return str(cell_id) if cell_id else uuid.uuid4().hex[:8]

    async def run_cell(self, line: str, body: str) -> FuxiRun:
        """Run one `%%fuxi` cell."""
        body = body.strip("\n")
        try:
            args = parse_cell_line(line)
        except MagicArgsError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        if not body.strip():
            raise UsageError("%%fuxi: the cell body is the prompt; write what the agent "
                             "should do, e.g. '%%fuxi\\nSummarise df'")
        frontend = detect_frontend(self.shell)
        renderer = self._renderer(frontend)
        options = self._options(args)
        options.include_partial_messages = renderer.wants_partial
        approvals = _Approvals(renderer) if renderer.interactive else None
        options.can_use_tool = approvals.decide if approvals else None
        try:
            session = self._session(options, args.new)
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        session.permissions.allow_hint = _allow_hint(renderer.interactive)
        cell_id = self._cell_id(args)
        outcome = _CellRun(self, session, renderer, approvals, cell_id, args)
        return await outcome.play(body)

    def _renderer(self, frontend: str) -> Renderer:
        if frontend == "lab":
            return LiveRenderer()
        if frontend == "terminal":
            return TextRenderer()
        return HeadlessRenderer()

    def remember_rule(self, update: PermissionUpdate) -> None:
        self._rules.append(update)


def _allow_hint(interactive: bool) -> str:
    """How the model should tell the user to allow a tool, in the magic's own terms."""
    how = ('allow it with %%fuxi --allowed-tools "{tool}" (or a narrower rule such as '
           '"Bash(git status)")')
    if interactive:
        return how
    return f"nobody could approve it here (a headless run); {how}, or run the cell in a " \
           "frontend that can click"


class _Approvals:
    """The `can_use_tool` of an interactive cell: ask the renderer, log the decision."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.records: list[dict[str, Any]] = []
        self.agent: NotebookAgent | None = None

    async def decide(self, tool_name: str, tool_input: dict[str, Any],
                     context: ToolPermissionContext) -> PermissionResult:
        verdict, reason, updated = await self.renderer.ask(tool_name, tool_input, context)
        rule = _suggested_rule(tool_name, tool_input) if verdict == "always" else None
        self.records.append({"tool_use_id": context.tool_use_id or "", "tool_name": tool_name,
                             "decision": {"always": "always_allow"}.get(verdict, verdict),
                             "source": "user", "reason": reason,
                             "rule": str(rule) if rule else None})
        if verdict == "deny":
            why = f" Their reason: {reason}" if reason else ""
            return PermissionResultDeny(message=f"The user denied this {tool_name} call.{why}")
        updates = None
        if rule is not None:
            updates = [PermissionUpdate(type="addRules", behavior="allow", rules=[rule],
                                        destination="session")]
            if self.agent is not None:
                self.agent.remember_rule(updates[0])
        return PermissionResultAllow(updated_input=updated, updated_permissions=updates)


def _suggested_rule(tool_name: str, tool_input: dict[str, Any]) -> PermissionRuleValue:
    """What "Always allow" adds: this exact command, this folder, or the whole tool."""
    if tool_name == "Bash" and tool_input.get("command"):
        return PermissionRuleValue("Bash", str(tool_input["command"]))
    if tool_name in ("Edit", "Write", "Read") and tool_input.get("file_path"):
        folder = Path(str(tool_input["file_path"])).parent
        anchor = f"/{folder}" if folder.is_absolute() else f"./{folder}"
        return PermissionRuleValue("Edit" if tool_name == "Write" else tool_name,
                                   f"{anchor}/**")
    return PermissionRuleValue(tool_name)


class _CellRun:
    """One cell's run: stream, render, finish (also when interrupted)."""

    def __init__(self, agent: NotebookAgent, session: Session, renderer: Renderer,
                 approvals: _Approvals | None, cell_id: str, args: CellArgs) -> None:
        self.agent, self.session, self.renderer = agent, session, renderer
        self.approvals, self.cell_id, self.args = approvals, cell_id, args
        if approvals is not None:
            approvals.agent = agent
        self.run = Run(session)
        self.result: ResultMessage | None = None
        renderer.view.live_status = self._status

    def _status(self) -> str:
        """The live status line: turns, tokens and cost so far."""
        tokens = self.session.usage.since(self.run.usage_at_start)
        read = (tokens["input_tokens"] + tokens["cache_read_input_tokens"]
                + tokens["cache_creation_input_tokens"])
        cost = self.session.usage.cost_usd - self.run.usage_at_start.cost_usd
        return (f"running · {self.run.num_turns} model turn(s) so far · {read} in / "
                f"{tokens['output_tokens']} out tokens · ${cost:.4f}")

    def _content(self, body: str) -> list[dict[str, Any]]:
        described = self.agent.context.describe()
        blocks = [reminder(f"Kernel context (what the user's notebook holds now):\n{described}")]
        return [*(blocks if described else []), {"type": "text", "text": body}]

    def _start_index(self) -> tuple[int, Any]:
        history = self.session.history
        return len(history), history[-1] if history else None

    def _first_own_message(self, start: int, last_before: Any) -> int:
        """Where this cell's messages begin (the prompt may have joined an unanswered one)."""
        history = self.session.history
        if start and len(history) >= start and history[start - 1] is not last_before:
            return start - 1
        return start

    async def play(self, body: str) -> FuxiRun:
        start, last_before = self._start_index()
        self.renderer.start(body)
        ticker = asyncio.get_running_loop().create_task(_tick())
        try:
            async for message in run_prompt(self.run, self._content(body)):
                self.renderer.on_message(message)
                if isinstance(message, ResultMessage):
                    self.result = message
        except asyncio.CancelledError:
            self.result = self.run.result("error_during_execution", terminal_reason="aborted",
                                          errors=["Interrupted by the user."])
            self.renderer.on_message(self.result)
            self._finish(body, self._first_own_message(start, last_before))
            # a short error (not a CancelledError traceback through the HTTP stack);
            # like any error it makes the frontend abort the queued cells
            raise KeyboardInterrupt("the partial run is shown above") from None
        finally:
            ticker.cancel()
        assert self.result is not None
        return self._finish(body, self._first_own_message(start, last_before))

    def _finish(self, body: str, start: int) -> FuxiRun:
        from .outputs import final_outputs

        assert self.result is not None
        data, metadata, record = final_outputs(
            cell_id=self.cell_id, session=self.session, parent=self.agent.last_cell_id,
            prompt=body, options=self.args.settings(),
            messages=self.session.history[start:] + self.session.pending_messages(),
            approvals=self._approvals(), result=self.result,
            secrets=[os.environ[name] for name in _SECRET_ENV if os.environ.get(name)])
        self.renderer.finish(data, metadata)
        run = FuxiRun(result=self.result, record=record, cell_id=self.cell_id)
        self.agent.shell.user_ns["_fuxi"] = run
        self.agent.last_cell_id = self.cell_id
        self.agent.runs += 1
        self.agent.turns += self.result.num_turns
        return run

    def _approvals(self) -> list[dict[str, Any]]:
        records = list(self.approvals.records) if self.approvals else []
        decided = {r["tool_use_id"] for r in records}
        for denial in self.result.permission_denials or [] if self.result else []:
            if denial["tool_use_id"] not in decided:
                records.append({"tool_use_id": denial["tool_use_id"],
                                "tool_name": denial["tool_name"], "decision": "deny",
                                "source": "policy"})
        return records


async def _tick() -> None:
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            await asyncio.sleep(TICK_SECONDS)
