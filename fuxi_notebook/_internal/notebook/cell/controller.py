"""NotebookAgent: runs `%%fuxi` cells on the kernel's loop and keeps the conversation.

One agent per IPython shell. For each cell it settles three questions, each in a module of
its own, then runs the cell live (`live_cell`) or from its record (`replay_run`):

- which cell this is and which notebook it lives in (`identity`);
- which conversation it continues: this kernel's, the one saved in the notebook, a resumed
  or forked one, or a new one (`conversations`);
- whether it replays its record or calls the model (`replay_cell`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ....errors import ConfigurationError
from ....options import FuxiAgentOptions
from ...agent.assemble import build_session
from ...agent.session import Session
from ...common.switches import switch
from ...models.known import unknown_model_warning
from ...models.names import model_name
from ...permissions.integrity import Watched
from ...sessions.history import extend_history
from ...sessions.record import RECORD_MIME, SessionRecord
from ...sessions.replay import RecordedApprovals, why_not_replayable
from ...sessions.text.transcript import turns_taken
from ..display.render import HeadlessRenderer, LiveRenderer, Renderer, TextRenderer
from ..kernel.context import referenced
from ..replay.decide import DivergenceWatch, ReplayMode, has_api_key, replay_mode
from .cellrun import FuxiRun, secrets, ticking
from .conversations import ConversationPlan, Conversations
from .identity import CellIdentity, NotebookIdentity
from .live_cell import ALLOW_HINT, Approvals, LiveCell
from .magic_args import CellArgs, MagicArgsError, parse_cell_line
from .undo import UndoBook

if TYPE_CHECKING:
    from ...tools.base import Declaration
    from ..replay.plan import ReplayPlan

__all__ = ["HEADLESS_MAX_TURNS", "KERNEL_BUDGET", "FuxiRun", "KernelBudget", "KernelMemory",
           "NotebookAgent", "detect_frontend"]

#: one display output: (data, metadata)
_Output = tuple[dict[str, Any], dict[str, Any]]

#: Headless, nobody can approve a call: a run needing more round trips than this is stuck
#: (a model repeating denied calls ran 119 turns). `--max-turns` / `%fuxi config` override.
HEADLESS_MAX_TURNS = 30


def detect_frontend(shell: Any) -> str:
    """"lab" (a frontend that can click), "headless" (nbclient, papermill) or "terminal"."""
    forced = switch("FUXI_FRONTEND")  # read at %load_ext: code the model runs cannot flip it
    if forced in ("lab", "headless", "terminal"):
        return forced
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return "terminal" if sys.stdin is not None and sys.stdin.isatty() else "headless"
    parent = kernel.get_parent() or {}
    return "lab" if (parent.get("metadata") or {}).get("cellId") else "headless"


@dataclass
class KernelMemory:
    """What the user told this kernel that `%reload_ext` keeps (a restart does not): the
    replays consented to, the folders not trusted, the held-back lists already shown."""

    replay_consented: set[str] = field(default_factory=set)
    trust_declined: set[str] = field(default_factory=set)
    held_back_told: set[str] = field(default_factory=set)
    #: what this kernel's cells spent (FUXI_MAX_BUDGET_USD counts it)
    budget_spent: float = 0.0


#: The environment variable capping what all the `%%fuxi` cells of a kernel spend, in USD
#: (a batch gives each run's kernel its share of the batch's budget).
KERNEL_BUDGET = "FUXI_MAX_BUDGET_USD"


@dataclass(frozen=True)
class KernelBudget:
    """What all the `%%fuxi` cells of this kernel may spend together (`FUXI_MAX_BUDGET_USD`,
    read at `%load_ext` like the other switches, so code the model runs cannot raise it)
    and what they spent, from each live cell's cost (a replay spends nothing). Frozen: it
    changes by replacement, which the cell's policy guard watches."""

    limit: float | None = None
    spent: float = 0.0
    #: why the variable's value is unusable (every cell says it), None when it is usable
    problem: str | None = None

    @classmethod
    def read(cls, raw: str | None, spent: float = 0.0) -> KernelBudget:
        """The budget `raw` sets (unset or blank: none, as other `FUXI_*` numbers)."""
        if raw is None or not raw.strip():
            return cls(spent=spent)
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            return cls(spent=spent, problem=(
                f"{KERNEL_BUDGET} must be a positive number of US dollars (e.g. 2.50), not "
                f"{shown!r}; fix or unset it and restart the kernel"))
        return cls(limit=value, spent=spent)

    @property
    def left(self) -> float | None:
        """What the kernel's cells may still spend (None: no kernel budget)."""
        return None if self.limit is None else max(0.0, self.limit - self.spent)

    def ceiling(self, spent_before: float) -> float | None:
        """The `max_budget_usd` a cell's run may reach under this budget: the loop compares
        it with the conversation's cost so far (`spent_before` when the cell starts).
        Rounded down to a millionth of a dollar, so its error line reads well and nothing
        left never becomes a little."""
        left = self.left
        return None if left is None else math.floor((spent_before + left) * 1e6) / 1e6

    def after(self, cost: float) -> KernelBudget:
        """This budget once a cell spent `cost`."""
        return replace(self, spent=self.spent + max(0.0, cost))

    def spent_line(self) -> str:
        """One line: the kernel's budget is spent."""
        return (f"this kernel's budget is spent ({KERNEL_BUDGET}={self.limit:g}; its "
                f"%%fuxi cells spent ${self.spent:.4f}): a live %%fuxi cell now ends without "
                "calling the model; restart the kernel with a larger budget to go on")

    def describe(self) -> str | None:
        """What `%fuxi config` shows of it (None without a kernel budget)."""
        if self.problem is not None:
            return self.problem
        if self.limit is None:
            return None
        return (f"{KERNEL_BUDGET}: ${self.limit:g} for all the %%fuxi cells of this kernel; "
                f"${self.left or 0:.4f} left (${self.spent:.4f} spent)")


class NotebookAgent:
    """The `%%fuxi` state of one shell: defaults, the conversation, the records."""

    def __init__(self, shell: Any, kept: KernelMemory | None = None) -> None:
        from ..extension.live_notebook import LiveNotebook
        from ..kernel.mcp import KernelServers
        from ..kernel.tools import KernelContext

        self.shell = shell
        self.defaults: dict[str, Any] = {}
        self.identity = NotebookIdentity(shell)
        self.conversations = Conversations(self.identity)
        self.session: Session | None = None
        #: what each live agent cell changed, for `%fuxi undo`
        self.undo = UndoBook(shell.user_ns)
        self.context = KernelContext(shell)
        self.mcp = KernelServers()
        #: the notebook as the browser has it, when the frontend extension answers
        self.live = LiveNotebook(shell)
        kept = kept or KernelMemory()
        #: the plans (by digest) the user let replay: a record whose calls differ asks again
        self.replay_consented: set[str] = set(kept.replay_consented)
        #: fingerprints of project settings the user chose not to trust (asked once)
        self.trust_declined: set[str] = set(kept.trust_declined)
        #: fingerprints of held-back settings the cells already listed in full
        self.held_back_told: set[str] = set(kept.held_back_told)
        #: what all this kernel's cells may spend, and spent (kept by `%reload_ext`)
        self.budget = KernelBudget.read(switch(KERNEL_BUDGET), kept.budget_spent)
        self.runs = 0
        self.turns = 0
        #: a %%fuxi cell is running (its code cannot start another, nor change the policy)
        self.running = False
        #: this cell's replay planners, by the settings they plan under
        self._planners: dict[str, Callable[[SessionRecord], ReplayPlan]] = {}
        #: the record output the running cell shows until it ends (`_keep_record_shown`)
        self._kept: _Output | None = None
        #: the Settings Editor values left out that a cell said so already
        self._settings_told: set[str] = set()

    def memory(self) -> KernelMemory:
        """What `%reload_ext` hands to the next agent of this kernel."""
        return KernelMemory(set(self.replay_consented), set(self.trust_declined),
                            set(self.held_back_told), budget_spent=self.budget.spent)

    @property
    def last_cell_id(self) -> str | None:
        return self.conversations.last_cell

    def _guard(self, session: Session) -> None:
        """Add what the notebook holds to the session's policy: its defaults, the consent
        to replay, which conversation goes on (see permissions/integrity.py)."""
        session.permissions.allow_hint = ALLOW_HINT
        for watched in (Watched(self, "defaults", label="the %fuxi config defaults"),
                        Watched(self, "replay_consented", label="the consent to replay"),
                        Watched(self, "conversations", "identity",
                                label="the notebook's conversations"),
                        Watched(self, "session", "identity", label="the current session"),
                        Watched(self, "budget", label="the kernel's budget"),
                        Watched(session.options, "max_budget_usd", label="the cell's budget")):
            session.guard.watched.append(watched)
        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None:  # what redacts every output (notebook/output_redaction.py)
            session.guard.watched.append(Watched(kernel.session, "send", "identity",
                                                 label="the redaction of the outputs"))
        session.guard.reseal()
        # the kernel's code is watched across cells: the previous cell's seal carries over
        session.guard.arm(self.session.guard.code if self.session is not None else None)

    def reseal(self) -> None:
        """The policy as it stands is legitimate (`%fuxi config` / `reset` changed it)."""
        if self.session is not None:
            self.session.guard.reseal()

    def _check(self, session: Session | None, when: str) -> str | None:
        """Anything changed outside the approval path is reverted; this says what."""
        breaches = session.guard.check() if session is not None else []
        if not breaches:
            return None
        return (f"%%fuxi: security: the agent's permission policy was changed outside the "
                f"approval path {when} ({'; '.join(breaches[:5])}). The change was reverted")

    def _check_between_cells(self) -> None:
        """Between cells only the user's `%fuxi` commands change the policy; anything else
        (a thread the model's code left running, say) is reverted and the cell refused."""
        problem = self._check(self.session, "since the last cell")
        if problem:
            raise UsageError(f"{problem}; run the cell again to go on.")

    def chosen_defaults(self) -> dict[str, Any]:
        """What later cells use where their line says nothing: `%fuxi config`'s over the
        Settings Editor's (the frontend extension's, checked: extension/settings.py)."""
        from ..extension.settings import frontend_defaults

        return {**frontend_defaults(self.live.frontend_settings)[0], **self.defaults}

    def _settings_problems(self) -> list[str]:
        """A line for each Settings Editor value left out, said once per value."""
        from ..extension.settings import frontend_defaults

        problems = frontend_defaults(self.live.frontend_settings)[1]
        new = [p for p in problems if p not in self._settings_told]
        self._settings_told.update(new)
        return [f"fuxi: {problem}" for problem in new]

    def _context(self, args: CellArgs, body: str, pointed: str | None = None) -> str | None:
        """What the model is sent of the kernel with this prompt: the variables (all, or
        `--vars`), the cells run since its last turn, and each `{name}` the prompt
        references; nothing but the references with `--no-context`; and the cells the
        agent cell is about (`pointed`, extension/pointed.py)."""
        chosen = {**self.chosen_defaults(), **args.settings()}
        kernel = self.context.describe(only=chosen.get("vars"),
                                       nothing=bool(chosen.get("no_context")))
        references = referenced(body, self.shell)
        if references:
            references = f"Variables the prompt refers to as {{name}}:\n{references}"
        return "\n\n".join(part for part in (pointed, kernel, references) if part) or None

    async def _pointed(self, cell_id: str) -> str | None:
        """The cells this agent cell is about (its `metadata.fuxi.about` in the live
        document, set by "Fuxi: insert an agent cell below"), for its context."""
        from ..extension.pointed import about_ids, pointed_context

        document = self.identity.live
        index = document.index_of(cell_id) if document is not None else None
        if document is None or index is None:
            return None
        about = about_ids(document.cells[index].get("fuxi"))
        if not about:
            return None
        return pointed_context(document.cells, about, await self.live.outputs(about))

    def reset(self) -> None:
        """Forget the conversation (the next cell starts fresh) and stop the MCP servers."""
        self.mcp.stop()
        self.conversations.reset()
        self.session = None
        self.runs = self.turns = 0

    def _settings(self, args: CellArgs) -> dict[str, Any]:
        """The cell's options over the defaults (`chosen_defaults`)."""
        return {**{k: v for k, v in self.chosen_defaults().items() if k != "replay"},
                **args.settings()}

    def _options(self, args: CellArgs) -> FuxiAgentOptions:
        return self._options_from(self._settings(args))

    def _options_from(self, settings: dict[str, Any]) -> FuxiAgentOptions:
        return FuxiAgentOptions(
            model=settings.get("model"),
            max_turns=settings.get("max_turns"),
            max_budget_usd=settings.get("max_budget_usd"),
            permission_mode=settings.get("permission_mode"),
            allowed_tools=list(settings.get("allowed_tools") or []),
            disallowed_tools=list(settings.get("disallowed_tools") or []),
            effort=settings.get("effort"),
            cwd=settings.get("cwd"),
            output_format=self._output_format(settings.get("output_schema"),
                                              settings.get("cwd")),
        )

    def _output_format(self, given: str | None, cwd: str | None) -> Any:
        """`--output-schema`: a kernel variable (a schema dict or a pydantic model class),
        inline JSON, or a .json file (relative to `--cwd`); None when not given."""
        if given is None:
            return None
        value: Any
        if given.isidentifier() and given in self.shell.user_ns:
            value = self.shell.user_ns[given]
            if isinstance(value, type):
                return value  # a pydantic model class (Session checks it is one)
        elif given.lstrip().startswith(("{", "[")):
            value = _json(given, "--output-schema's JSON")
        else:  # a file anyone may have put there: the bounded reader, failures one line
            from ...common.reading import (
                MAX_JSON_FILE_BYTES,
                Unreadable,
                load_json,
                read_bounded,
            )

            path = Path(cwd or ".").expanduser() / Path(given).expanduser()
            where = f"--output-schema file {path}"
            try:
                data = read_bounded(path, limit=MAX_JSON_FILE_BYTES, where=where)
                value = load_json(data, where) if data is not None else None
            except Unreadable as error:
                raise UsageError(f"%%fuxi: {error}") from None
            if data is None:  # no such file (a name too long for a path is none either)
                shown = given if len(given) <= 80 else given[:80] + "…"
                raise UsageError(f"%%fuxi: --output-schema takes inline JSON, a .json file or "
                                 f"the name of a variable holding a schema or a pydantic "
                                 f"model class; {shown!r} is none of these")
        if isinstance(value, dict) and value.get("type") != "json_schema":
            value = {"type": "json_schema", "schema": value}
        return value

    async def _project(self, options: FuxiAgentOptions, renderer: Renderer,
                       *, ask: bool) -> Any:
        """The project settings of the cell's `--cwd` (see agent/project_link.py). What
        needs trust and is not trusted: a card says what it would enable (once per
        content, and not on replay); trusting it is stored for that folder and content."""
        from ...agent.project_link import load_project
        from ...settings.project import trust_project

        try:
            project = load_project(options)
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        if (ask and project.needs_trust and renderer.interactive
                and project.fingerprint not in self.trust_declined):
            async with ticking():  # "Interrupt kernel" must reach a waiting card too
                trusted = await renderer.confirm_trust(_trust_summary(project))
            if trusted:
                return trust_project(project)
            self.trust_declined.add(project.fingerprint)
        return project

    def _held_back_notes(self, session: Session) -> list[str]:
        """What the project's settings could not apply: in full the first time a kernel
        meets that content, then one line (the list is one `%fuxi trust` away)."""
        notes = session.setup_notes()
        project = session.project
        if not project.needs_trust:
            return notes
        if project.fingerprint not in self.held_back_told:
            self.held_back_told.add(project.fingerprint)
            return notes
        reminder = (f"the settings of {project.root} that need trust are held back "
                    f"({len(project.held_back)} item(s)); %fuxi trust lists them and asks "
                    "again")
        return [reminder, *project.warnings]

    def ask_trust_again(self) -> str:
        """`%fuxi trust`: what the working folder's settings hold back, and the next cell
        shows the card again."""
        from ...agent.project_link import load_project

        try:
            project = load_project(self._options(CellArgs()))
        except ConfigurationError as error:
            raise UsageError(f"%fuxi trust: {error}") from None
        self.trust_declined.discard(project.fingerprint)
        if not project.needs_trust:
            return f"fuxi: nothing in {project.root} waits for trust."
        return f"{project.describe()}\nThe next %%fuxi cell asks whether to trust it."

    async def _servers(self, args: CellArgs, project: Any = None) -> Any:
        """The MCP servers the cell may use (`--mcp-config`, and the kernel's `@fuxi_tool`
        functions), started now if they are not running yet; None when there are none."""
        from ...mcp_servers import parse_mcp_servers
        from ..kernel.mcp import kernel_functions

        settings = self._settings(args)
        given, cwd = settings.get("mcp_config"), Path(settings.get("cwd") or ".").expanduser()
        try:
            configs = {} if given is None else parse_mcp_servers(
                self._mcp_value(given), base=cwd)
            if project is not None:  # a trusted project's .mcp.json (the cell's own win)
                configs = {**project.mcp_servers, **configs}
            return await self.mcp.for_cell(configs, kernel_functions(self.shell.user_ns),
                                           cwd.resolve())
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: --mcp-config: {error}") from None

    def _mcp_value(self, given: str) -> Any:
        """`--mcp-config NAME` names a kernel variable holding `{name: config}`; anything
        else is inline JSON or a file."""
        if given.isidentifier() and given in self.shell.user_ns:
            value = self.shell.user_ns[given]
            if not isinstance(value, dict):
                raise ConfigurationError(f"the variable {given!r} holds a "
                                         f"{type(value).__name__}, not {{name: config}}")
            return value
        return given

    def probe(self, what: str) -> Session:
        """A session with the current defaults that is never run (no client, no model
        call): what a cell would be offered. `what` names the `%fuxi` command asking."""
        from ...models.scripted import ScriptedModel
        from ..kernel.tools import kernel_tools

        options = self._options(CellArgs())
        options.model = ScriptedModel([])  # only the tool list is wanted: no client
        try:
            return _session(options, extra_tools=kernel_tools(self.shell),
                            mcp=self.mcp.current())
        except ConfigurationError as error:
            raise UsageError(f"%fuxi {what}: {error}") from None

    def offered_tools(self) -> list[tuple[str, str, str]]:
        """`%fuxi tools`: what a cell with the current defaults offers the model, as
        (name, kind, where it comes from); MCP servers count once they run."""
        from ..kernel.tools import kernel_tools

        session = self.probe("tools")
        kernel = {tool.name for tool in kernel_tools(self.shell)}
        rows: list[tuple[str, str, str]] = []
        for name in session.registry.names():
            tool = session.registry.get(name)
            server = getattr(tool, "server", None)
            where = ("kernel" if name in kernel else
                     f"MCP server {server}" if server is not None else "built-in")
            if getattr(tool, "defer_loading", False):
                where += " (deferred: found through ToolSearch)"
            rows.append((name, session.kind(name) or "execute", where))
        return rows

    async def run_cell(self, line: str, body: str) -> FuxiRun:
        """Run one `%%fuxi` cell."""
        self._check_between_cells()
        if self.running:
            raise UsageError("%%fuxi: a %%fuxi cell is running already; code it runs cannot "
                             "start another one")
        self.running = True
        redaction = _redaction(self.shell)
        request = self.shell.kernel.get_parent() if redaction is not None else None
        hellos = self.live.hellos
        if redaction is not None:  # the kernel stays "busy" while a card waits
            redaction.set_running(request)
            outputs = redaction.watch(request)
        try:
            return await self._run_cell(line, body)
        finally:
            self.running = False
            if redaction is not None:
                redaction.set_running(None)
                await self._hand_over(redaction, request, outputs, hellos)

    async def _hand_over(self, redaction: Any, request: Any, outputs: Any,
                         hellos: int) -> None:
        """A tab reloaded while the cell ran (another frontend attached) never shows what
        the cell showed since (a frontend shows the outputs of its own requests): it is
        given the cell's outputs, its record among them, which its extension keeps in the
        cell's metadata, so the run's record reaches the file (live_notebook.py)."""
        try:
            cell_id = _sent_cell_id(self.shell)
            if cell_id is None or not self.live.attached_since(hellos):
                return
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            redaction.release(request)
            answer = await self.live.change({"request": "set_outputs", "cell": cell_id,
                                             "outputs": outputs.outputs()})
            if "error" in answer:
                print(f"fuxi: the notebook tab reloaded while this cell ran could not be "
                      f"given its outputs ({answer['error']})", file=sys.stderr)
        finally:
            redaction.unwatch(request)

    async def _run_cell(self, line: str, body: str) -> FuxiRun:
        body = body.strip("\n")
        if self.budget.problem is not None:
            raise UsageError(f"%%fuxi: {self.budget.problem}; nothing ran.")
        self._planners.clear()  # declarations are read again for each cell
        self._kept = None
        try:
            args = parse_cell_line(line)
        except (MagicArgsError, ValueError) as error:
            raise UsageError(f"%%fuxi: {error}") from None
        if not body.strip():
            raise UsageError("%%fuxi: the cell body is the prompt; write what the agent "
                             "should do, e.g. '%%fuxi\\nSummarise df'")
        frontend = detect_frontend(self.shell)
        renderer = _renderer(frontend)
        # the live document first: it brings the Settings Editor's defaults, and whether
        # the user asked to replay this cell ("Fuxi: replay this cell")
        document = (await self.live.document(self.identity.raw_path())
                    if frontend == "lab" else None)
        self.identity.use_live(document)
        if args.replay is None and document is not None and (
                _sent_cell_id(self.shell) in document.replay):
            args.replay = "lenient"
        try:
            mode = replay_mode(args.replay, self.chosen_defaults().get("replay"))
        except ValueError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        options = self._options(args)
        key = (str(Path(options.cwd or os.getcwd()).resolve()),)
        model = options.model if isinstance(options.model, str) else None
        cell = self.identity.cell(line, body, explicit=args.cell_id)
        try:
            plan = self.conversations.plan(cell=cell, new=args.new, resume=args.resume,
                                           fork=args.fork, key=key,
                                           model=model_name(model),
                                           cwd_option=args.settings().get("cwd"))
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        if plan.source != "kernel":  # `%fuxi` counts the runs of this conversation
            self.runs = self.turns = 0
        figures = self._missing_figures(cell, plan)
        renderer = _Told(renderer, self.live, _sent_cell_id(self.shell),
                         after_card=self._show_kept)
        self._kept = self._keep_record_shown(cell) if frontend == "lab" else None
        replay, why_live = await self._replay_or_live(mode, cell, plan, args, body, renderer)
        # rare, said once: also where headless runs see it
        told = (self.live.take_notes() + self.identity.take_notes()
                + self._settings_problems())
        for note in told:
            print(note, file=sys.stderr)
        if replay is None and (warning := unknown_model_warning(options.model)):
            print(warning, file=sys.stderr)
        notes = told + [f"fuxi: {n}" for n in (plan.note, why_live, figures) if n]
        if replay is not None:
            return await self._replay(replay, mode, cell, plan, args, body, renderer, notes,
                                      key)
        return await self._live(options, cell, plan, args, body, renderer, notes, key)

    async def _replay_or_live(self, mode: ReplayMode, cell: CellIdentity,
                              plan: ConversationPlan, args: CellArgs, body: str,
                              renderer: Renderer) -> tuple[ReplayPlan | None, str | None]:
        """The plan of the record to replay (or None to run live, with why if it matters).
        Every replay follows its record's plan: the card, the terminal's prompt and a
        headless run alike (see replay_plan.py)."""
        from ..replay.plan import ReplayRefused

        if not mode.replays:
            return None, None
        record, problem = self.conversations.recorded(cell)
        key = has_api_key()
        if problem is not None:
            self._refuse(cell, f"its session record cannot be read: {problem}")
        if record is None:
            if key:
                return None, None
            from ...models.access.providers import credential_hint

            raise UsageError(f"%%fuxi: cell {cell.cell_id} has no recorded run to replay and "
                             f"no credential is set: {credential_hint()}, to run it live")
        why = (f"its record belongs to cell {record.cell_id} (a copy?)"
               if record.cell_id != cell.cell_id else None)
        why = why or why_not_replayable(record, prompt=body, options=args.settings(),
                                        parent=plan.parent, secrets=secrets())
        if why is not None:
            if key and mode.mode != "strict":
                return None, f"not replayed ({why}); running it live"
            self._refuse(cell, f"the cell is not replayed: {why}")
        try:
            replay = await self._plan(cell, record, self._settings(args))
        except ReplayRefused as refused:
            self._refuse(cell, f"the cell is not replayed: {refused}; nothing of it ran")
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        if not renderer.interactive and not mode.explicit:
            self._refuse(cell, "this cell has a recorded run, and a headless run re-executes "
                               "recorded tool calls only when asked to: set FUXI_REPLAY="
                               "lenient (or strict), or use --replay")
        if renderer.interactive and replay.digest not in self.replay_consented:
            await self._ask_consent(cell, replay, renderer)
        return replay, None

    async def _ask_consent(self, cell: CellIdentity, replay: ReplayPlan,
                           renderer: Renderer) -> None:
        """The consent card for this record and every other record of the notebook not
        consented to yet; consent covers exactly the plans it showed."""
        from ..replay.consent import replay_consent
        from ..replay.plan import ReplayRefused, with_shown

        notebook = self.identity.saved()
        plans, unplayable, digests = [replay], [], {replay.digest}
        for saved in notebook.cells if notebook is not None else ():
            other = saved.record
            if other is None or other is replay.record or other.cell_id == cell.cell_id:
                continue
            try:
                planned = await with_shown(self._planner(
                    {**self._settings(CellArgs()), **other.options}, other.cell_id)(other))
            except (ReplayRefused, ConfigurationError) as refused:
                unplayable.append((other.cell_id, str(refused)))
                continue
            if planned.digest not in self.replay_consented | digests:
                plans.append(planned)
                digests.add(planned.digest)
        consent = replay_consent(plans, unplayable=unplayable)
        async with ticking():  # "Interrupt kernel" must reach a waiting card too
            confirmed = await renderer.confirm_replay(consent)
        if not confirmed:
            self._refuse(cell, "replay cancelled; the recorded run is shown above and "
                               "nothing was re-executed")
        self.replay_consented |= digests

    async def _plan(self, cell: CellIdentity, record: SessionRecord,
                    settings: dict[str, Any]) -> ReplayPlan:
        """The replay plan of this cell's record, drawn from the very tool objects its
        replay runs with (the plan carries them), with what its calls would do now."""
        from ..replay.plan import with_shown

        tools = self._replay_tools(cell.cell_id, record)
        return await with_shown(self._planning(settings, tools)(record))

    def _planner(self, settings: dict[str, Any], cell_id: str | None = None
                 ) -> Callable[[SessionRecord], ReplayPlan]:
        """Plans records of other cells under the tools a cell with `settings` has here
        (read once per cell and settings: the kernel's tools may change between cells);
        each such cell draws its own plan again when it replays. Raises
        ConfigurationError for settings no cell could run with."""
        same = json.dumps([settings, cell_id], sort_keys=True, default=str)
        if same not in self._planners:
            self._planners[same] = self._planning(settings, self._replay_tools(cell_id))
        return self._planners[same]

    def _planning(self, settings: dict[str, Any], tools: list[Any]
                  ) -> Callable[[SessionRecord], ReplayPlan]:
        from ...permissions.engine import always_allow_rule
        from ..replay.plan import replay_plan

        declared, cwd = self._declarations(settings, tools)

        def plan(record: SessionRecord) -> ReplayPlan:
            return replay_plan(record, declared, tools=tuple(tools),
                               rule_of=lambda declaration, tool_input:
                               always_allow_rule(declaration, tool_input, cwd=cwd))

        return plan

    def _granted_before(self, plan: ConversationPlan, args: CellArgs) -> list[str]:
        """The "Always allow" rules the cells this one continues granted, each checked as
        its own replay checks it (a record that cannot be replayed grants nothing)."""
        from ..replay.plan import ReplayRefused

        if not plan.ancestors:
            return []
        planner = self._planner(self._settings(args))
        rules: list[str] = []
        for earlier in plan.ancestors:
            with contextlib.suppress(ReplayRefused):
                rules += planner(earlier).rules
        return rules

    def _declarations(self, settings: dict[str, Any], tools: list[Any]
                      ) -> tuple[dict[str, Declaration], Path]:
        """Name (older names too) -> declaration of every tool a replayed cell with
        `settings` and the kernel's `tools` has, and its working directory. Raises
        ConfigurationError."""
        from ...models.scripted import ScriptedModel

        options = self._options_from(settings)
        options.model = ScriptedModel([])  # only the declarations are wanted: no client
        session = _session(options, extra_tools=tools)
        return _declared_by_name(session), session.cwd

    def _missing_figures(self, cell: CellIdentity, plan: ConversationPlan) -> str | None:
        """What a record this cell uses refers to and the notebook no longer shows (its
        outputs were cleared or stripped), in one line; None when nothing is missing."""
        from ...sessions.history import missing_figures

        own, _ = self.conversations.recorded(cell)
        records = [*plan.ancestors, *([own] if own is not None else [])]
        outputs = self.conversations.outputs_of(records)
        gone = [(record.cell_id, len(found)) for record in records
                if (found := missing_figures(record, outputs.get(record.cell_id, [])))]
        if not gone:
            return None
        cells = ", ".join(f"cell {cell_id} ({count})" for cell_id, count in gone)
        return (f"figures the records refer to are no longer in the notebook (outputs "
                f"cleared): {cells}; the conversation has a note in their place, and a "
                "replay draws them again")

    def _keep_record_shown(self, cell: CellIdentity) -> _Output | None:
        """A cell that runs again first shows the record it has, so the live document
        never lacks it (Jupyter cleared the outputs when the cell started; autosave could
        write the notebook while a card waits). The final outputs replace it. Returns the
        output shown (shown again after a card that clears the cell), or None."""
        from ...sessions.record import record_to_output

        record, _ = self.conversations.recorded(cell)
        if record is None:
            return None
        data, metadata = record_to_output(
            record, volatile=self.conversations.volatile_of(record.cell_id, cell))
        data["text/markdown"] = (f"*fuxi: the recorded run of this cell ({data['text/plain']})"
                                 " is kept here until this run replaces it*")
        self._show_kept((data, metadata))
        return data, metadata

    def _show_kept(self, kept: _Output | None = None) -> None:
        from ..kernel.capture import publish

        kept = kept or self._kept
        if kept is not None:
            publish(self.shell, *kept)

    def _refuse(self, cell: CellIdentity, why: str) -> None:
        """Keep what the cell had (its saved outputs, or the record it showed while it
        ran), then one clear line."""
        from IPython.display import clear_output

        from ..kernel.capture import publish
        from .outputs import saved_bundle

        saved = [o for o in (cell.saved.outputs if cell.saved is not None else ())
                 if isinstance(o.get("data"), dict)]
        if self._kept is not None:
            clear_output(wait=True)  # what follows replaces the record shown meanwhile
            if not any(RECORD_MIME in o["data"] for o in saved):
                saved = []
                self._show_kept()
        for output in saved:  # as shown, not as the file keeps text (a list of lines)
            publish(self.shell, saved_bundle(output["data"]), dict(output.get("metadata") or {}))
        raise UsageError(f"%%fuxi: {why}")

    async def _replay(self, replay: ReplayPlan, mode: ReplayMode, cell: CellIdentity,
                      plan: ConversationPlan, args: CellArgs, body: str, renderer: Renderer,
                      notes: list[str], key: tuple[Any, ...]) -> FuxiRun:
        from ...models.replay import ReplayModel
        from ..replay.plan import ReplayRefused, check_runs
        from ..replay.run import ReplayCell, answer_from_record

        record = replay.record
        options = self._options(args)
        options.allowed_tools += self._granted_before(plan, args)
        options.model = ReplayModel(replay.turns, name=record.model)
        live = Approvals(renderer) if renderer.interactive else None
        approvals = RecordedApprovals(replay.approvals, fallback=live.decide if live else None)
        options.can_use_tool = approvals
        conversation = plan.conversation
        before = (list(conversation.history), list(conversation.pending_results),
                  list(conversation.permission_updates))
        project = await self._project(options, renderer, ask=False)
        try:  # the very tools the plan (and the card) was drawn from
            session = _session(options, extra_tools=list(replay.tools),
                               conversation=conversation, project=project)
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}") from None
        answer_from_record(session, record)  # what its tools declare is not run again
        try:
            check_runs(replay, _declared_by_name(session, live=True))
        except ReplayRefused as refused:
            self._refuse(cell, f"the cell is not replayed: {refused}; nothing of it ran")
        session.permissions.expected_shown.update(
            (call.tool_use_id, call.shown) for call in replay.calls if call.shown)
        told = self._held_back_notes(session)
        self._guard(session)
        approvals.policy = session.permissions.not_allowed
        approvals.kind_of = session.kind
        watch = DivergenceWatch(record, str(session.cwd), tuple(secrets()))
        volatile = self.conversations.volatile_of(record.cell_id, cell)
        player = ReplayCell(session, renderer, record, mode=mode.mode, approvals=approvals,
                            watch=watch, notes=notes, volatile=volatile,
                            context=self._context(args, body), shell=self.shell)
        player.redraw = self._kept is not None
        try:
            run = await player.play(body)
        finally:  # the conversation goes on from the record, not from the re-run
            _tell(told)
            problem = self._check(session, "during this cell")
            saved = list(cell.saved.outputs) if cell.saved is not None else []
            outputs = saved + player.published.outputs
            with contextlib.suppress(ConfigurationError):  # else: keep the re-run's history
                conversation.history, conversation.pending_results = extend_history(
                    before[0], before[1], record, outputs)
            conversation.permission_updates[:] = before[2]
            self._keep(session, record, outputs, conversation, key, volatile)
        self._ran(run)
        if problem:
            raise UsageError(f"{problem}.")
        return run

    async def _live(self, options: FuxiAgentOptions, cell: CellIdentity,
                    plan: ConversationPlan, args: CellArgs, body: str, renderer: Renderer,
                    notes: list[str], key: tuple[Any, ...]) -> FuxiRun:
        from ..kernel.names import NameWatch
        from ..kernel.tools import kernel_tools

        options.include_partial_messages = renderer.wants_partial
        if not renderer.interactive and options.max_turns is None:
            options.max_turns = HEADLESS_MAX_TURNS  # in _live only: replays are not cut short
        approvals = Approvals(renderer) if renderer.interactive else None
        options.can_use_tool = approvals.decide if approvals else None
        # a cell the kernel's budget ends at once asks nothing first
        project = await self._project(options, renderer, ask=self.budget.left != 0)
        servers = await self._servers(args, project)
        changes = self.undo.begin(cell.cell_id, body)
        cells = self._cells(cell.cell_id, changes)
        tools = kernel_tools(self.shell, names=NameWatch(self.shell.user_ns, changes.names),
                             cells=cells)
        budget, capped = self._budget_for(options, plan.conversation.usage.cost_usd)
        try:
            session = _session(options, extra_tools=tools, conversation=plan.conversation,
                               mcp=servers, project=project, keep_changes=True)
        except ConfigurationError as error:
            raise UsageError(f"%%fuxi: {error}{self._budget_hint(error)}") from None
        session.options.max_budget_usd = budget  # 0 when nothing is left (see _budget_for)
        if cells is not None:
            cells.session_id = session.id  # a cell it inserts or edits names the session
        self.undo.watch_files(changes, session.checkpoints)
        told = self._held_back_notes(session)
        self._guard(session)
        renderer.kind_of = session.kind  # cards and the view name each call's declared kind
        live = LiveCell(session, renderer, approvals, cell_id=cell.cell_id, parent=plan.parent,
                        options=args.settings(),
                        context=self._context(args, body, await self._pointed(cell.cell_id)),
                        notes=notes, shell=self.shell,
                        replaces=cell.saved.metadata_digest if cell.saved else None,
                        cells_named=cells.named if cells is not None else None)
        try:
            run = await live.play(body)
        finally:
            self.undo.finish(changes)
            changes.record = live.record
            changes.shown = live.final.record_output() if live.final else None
            told = [*told, *self._not_undoable(changes)]
            _tell(told)  # after the run: a live view's final outputs replace what was before
            problem = self._check(session, "during this cell")
            problem = self._spend(session, live, capped) or problem
            if live.record is not None:
                self._keep(session, live.record, live.published.outputs, session.snapshot(),
                           key, (live.final.metadata if live.final else {}).get("fuxi"))
            if live.last_run is not None:  # interrupted too: `_fuxi` is this cell's run
                self.shell.user_ns["_fuxi"] = live.last_run
        self._ran(run)
        if problem:
            raise UsageError(f"{problem}.")
        return run

    def _budget_for(self, options: FuxiAgentOptions, spent_before: float
                    ) -> tuple[float | None, bool]:
        """The cell's `max_budget_usd` under the kernel's budget: its own, or what is left
        of the kernel's if less (the loop compares it with the conversation's cost, which
        was `spent_before` when the cell started), and whether the kernel's is the one
        that binds. Nothing left makes it `spent_before` (0 in a new conversation): the
        loop then ends the run before its first request, as over any budget. The options
        keep a positive stand-in until the session is built (it refuses 0, and a model
        without a known price, which no budget can count)."""
        own = options.max_budget_usd
        ceiling = self.budget.ceiling(spent_before)
        if ceiling is None:
            return own, False
        budget = ceiling if own is None else min(own, ceiling)
        options.max_budget_usd = budget if budget > 0 else self.budget.limit
        return budget, budget == ceiling

    def _budget_hint(self, error: ConfigurationError) -> str:
        """Where a budget a cell did not set comes from, when building its session failed
        for the budget (a model without a known price)."""
        if self.budget.limit is None or "max_budget_usd" not in str(error):
            return ""
        return f" ({KERNEL_BUDGET}={self.budget.limit:g} sets a budget for every cell)"

    def _spend(self, session: Session, live: LiveCell, capped: bool) -> str | None:
        """Count what the cell spent against the kernel's budget (the cost its record
        shows; only the priced part when a response had no known price), and say so in
        one line when the kernel's budget cut the cell (`capped`: it was the one that
        bound). The change is legitimate: the cell's guard is sealed again (its check just
        ran); so is the previous cell's, after a check of its own, when this cell left no
        record (its session stays the kernel's, and checks the next cell; with a record
        `_keep` replaces it, and a check of it now would take a rule granted in this cell
        to the conversation they share for tampering). Returns what that check found."""
        if self.budget.limit is None:
            return None
        earlier = (self.session if live.record is None and self.session is not session
                   else None)
        problem = self._check(earlier, "during this cell")  # before the budget moves
        start = live.run.usage_at_start
        cost = session.usage.cost_since(start)
        self.budget = self.budget.after(
            cost if cost is not None else session.usage.cost_usd - start.cost_usd)
        session.guard.reseal()
        if earlier is not None:
            earlier.guard.reseal()
        if capped and live.result is not None and live.result.subtype == "error_max_budget_usd":
            _tell([self.budget.spent_line()])
        return problem

    def _not_undoable(self, changes: Any) -> list[str]:
        """What `%fuxi undo` could not take back of this cell, said when the cell ends
        (a folder too big to watch once per conversation)."""
        from ...sessions.redact import redact

        lines = changes.cannot_undo()
        checkpoints = changes.files
        if checkpoints is not None:
            lines += [n for n in checkpoints.notes if n not in self.undo.told]
            self.undo.told.update(checkpoints.notes)
        if not lines:
            return []
        shown = lines[:_NOT_UNDOABLE_SHOWN] + ([
            f"and {len(lines) - _NOT_UNDOABLE_SHOWN} more (%fuxi undo --list)"]
            if len(lines) > _NOT_UNDOABLE_SHOWN else [])
        text = "%fuxi undo cannot take back all this cell changed:\n" + "\n".join(
            f"  - {line}" for line in shown)
        return [str(redact(text, secrets=secrets()))]

    def _replay_tools(self, cell_id: str | None, record: SessionRecord | None = None
                      ) -> list[Any]:
        """The kernel's tools a replay of `cell_id` runs with, which its plan and consent
        card are drawn from: the cell tools where the extension changes cells, else
        stand-ins answering from the record for those `record` called (every cell tool
        without a record), and the record's MCP tools answered from it."""
        from ...sessions.replay import recorded_calls
        from ..kernel.cells import CELL_TOOL_NAMES, recorded_cell_tools
        from ..kernel.tools import kernel_tools
        from ..replay.run import recorded_mcp_tools
        from .undo import CellChanges

        cells = self._cells(cell_id, CellChanges(cell_id or "", ""))
        tools = kernel_tools(self.shell, cells=cells)
        if cells is None:
            called = ({str(c.get("name")) for c in recorded_calls(record).values()}
                      if record is not None else set(CELL_TOOL_NAMES))
            tools += recorded_cell_tools(called, self.live)
        return [*tools, *(recorded_mcp_tools(record) if record is not None else ())]

    def _cells(self, cell_id: str | None, changes: Any) -> Any:
        """What the cell tools need, when the frontend extension changes cells (None:
        they are not offered); their changes join the cell's (`%fuxi undo`)."""
        from ..kernel.cells import LiveCells

        if not self.live.can_edit:
            return None
        cells = LiveCells(self.live, self.identity.raw_path(), cell_id)
        changes.cell_ops = cells.journal
        return cells

    def _keep(self, session: Session, record: SessionRecord, outputs: list[Any],
              conversation: Any, key: tuple[Any, ...], volatile: dict[str, Any] | None
              ) -> None:
        """A cell left a record (also when interrupted): the conversation goes on from it."""
        self.conversations.remember(record, outputs, conversation, key, volatile)
        self.session = session
        session.guard.reseal()  # checked just before: these changes are the cell's own

    def _ran(self, run: FuxiRun) -> None:
        """A cell finished: `_fuxi` and the counters `%fuxi` shows."""
        self.shell.user_ns["_fuxi"] = run
        self.runs += 1
        self.turns += turns_taken(run.result.subtype, run.result.num_turns)


def _redaction(shell: Any) -> Any:
    """The kernel's OutputRedaction (notebook/output_redaction.py), if installed."""
    from .output_redaction import OutputRedaction

    kernel = getattr(shell, "kernel", None)
    send = getattr(getattr(kernel, "session", None), "send", None)
    owner = getattr(send, "__self__", None)
    return owner if isinstance(owner, OutputRedaction) else None


def _sent_cell_id(shell: Any) -> str | None:
    """The cell id the frontend sent with this execution (the extension's own names)."""
    kernel = getattr(shell, "kernel", None)
    parent = kernel.get_parent() if kernel is not None else None
    cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) else None


class _Told:
    """A renderer that tells the frontend extension while one of its cards waits (so an
    off-screen card marks the notebook's tab); everything else goes to the renderer."""

    def __init__(self, renderer: Renderer, live: Any, cell_id: str | None, *,
                 after_card: Callable[[], None]) -> None:
        self._renderer, self._live, self._cell = renderer, live, cell_id
        #: a yes/no card clears the cell when it goes: the record is shown again
        self._after_card = after_card

    def __getattr__(self, name: str) -> Any:
        return getattr(self._renderer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._renderer, name, value)

    @contextlib.asynccontextmanager
    async def _waiting(self, kind: str) -> Any:
        self._live.tell("waiting", self._cell, kind=kind)
        try:
            yield
        finally:
            self._live.tell("answered", self._cell)

    async def ask(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        kind_of = getattr(self._renderer, "kind_of", None)  # the session's, once it exists
        kind = "question" if kind_of is not None and kind_of(tool_name) == "ask" else "approval"
        async with self._waiting(kind):
            return await self._renderer.ask(tool_name, tool_input, context)

    async def confirm_replay(self, consent: Any) -> bool:
        try:
            async with self._waiting("replay"):
                return await self._renderer.confirm_replay(consent)
        finally:
            self._after_card()

    async def confirm_trust(self, summary: str) -> bool:
        try:
            async with self._waiting("trust"):
                return await self._renderer.confirm_trust(summary)
        finally:
            self._after_card()


def _declared_by_name(session: Session, *, live: bool = False) -> dict[str, Declaration]:
    """Name (older names too) -> the declaration of each of `session`'s tools: as its
    permission engine took them, or (`live`) of the objects its registry runs now."""
    from ...tools.base import declaration_of

    declared = ({name: declaration_of(session.registry.get(name), name)
                 for name in session.registry.names()} if live
                else dict(session.permissions.declared))
    for name in session.registry.names():
        for alias in getattr(session.registry.get(name), "aliases", ()):
            if name in declared:
                declared.setdefault(alias, declared[name])
    return declared


def _session(options: FuxiAgentOptions, **kwargs: Any) -> Session:
    """A cell's session. The approval card is the cell's `can_use_tool`, and the user's
    allow rules are meant to spare them the card: the warning that a rule shadows the
    callback is for code that passes its own callback, not for the notebook."""
    import warnings

    from ....errors import CanUseToolShadowedWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CanUseToolShadowedWarning)
        return build_session(options, **kwargs)


#: lines naming what cannot be undone, at most, when a cell ends
_NOT_UNDOABLE_SHOWN = 5


def _tell(notes: list[str]) -> None:
    """What the project's settings could not apply (held back for want of trust, or
    skipped) goes to the cell's stderr after the run: it stays visible in every frontend."""
    for note in notes:
        print(f"fuxi: {note}", file=sys.stderr)


def _trust_summary(project: Any) -> str:
    """The trust card's text: what the folder's settings would run or allow."""
    from ...sessions.text.markdown import code_span, escape_math

    lines = [f"**The project settings in {code_span(str(project.root))} would run code or "
             "widen what runs without asking.** Nothing of it applies until you trust this "
             "folder (with exactly this content):", ""]
    lines += [f"- {code_span(item.description)} "
              f"(from {code_span(item.file.name if item.file else item.source)})"
              for item in project.held_back]
    if project.trust_changes is not None:
        lines += ["", "It was trusted before with other content; changed since:"]
        lines += [f"- added: {code_span(line)}" for line in project.trust_changes.added]
        lines += [f"- removed: {code_span(line)}" for line in project.trust_changes.removed]
    lines += ["", "*Not now* runs the cell without them."]
    return escape_math("\n".join(lines))


def _json(text: str, what: str) -> Any:
    """`text` as JSON; anything wrong with it (invalid, nested too deep) is one line."""
    from ...common.reading import parse_json

    try:
        return parse_json(text, what)
    except ConfigurationError as error:
        raise UsageError(f"%%fuxi: {error}") from None


def _renderer(frontend: str) -> Renderer:
    if frontend == "lab":
        return LiveRenderer()
    if frontend == "terminal":
        return TextRenderer()
    return HeadlessRenderer()
