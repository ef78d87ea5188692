"""`%load_ext fuxi_notebook`: the `%%fuxi` cell, the `%fuxi` line magic, and their help.

IPython has no async magics, so an input transformer rewrites a `%%fuxi` cell into an
awaited call; the cell then runs as a coroutine on the kernel's own asyncio loop, which
lets approval clicks and "Interrupt kernel" reach it (ipykernel ≥ 7.4). The registered
cell magic exists for `%%fuxi?` help and explains what went wrong if ever called directly.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from IPython.core import magic as _magic
from IPython.core.error import UsageError
from IPython.core.magic import Magics, magics_class

from .frontend_text import fuxi_cell_parts, has_line_magic, sent_cell_parts
from .magic_args import MagicArgsError, parse_cell_line
from .output_redaction import OutputRedaction

_F = TypeVar("_F", bound=Callable[..., Any])
#: IPython's magic decorators, as they behave with a name: typed, so mypy keeps the method
_cell_magic = cast("Callable[[str], Callable[[_F], _F]]", _magic.cell_magic)
_line_magic = cast("Callable[[str], Callable[[_F], _F]]", _magic.line_magic)

__all__ = ["FuxiMagics", "Preload", "load_ipython_extension", "transform_fuxi_cell",
           "unload_ipython_extension"]

_MIN_IPYKERNEL = (7, 4)


def agent_for(shell: Any) -> Any:
    """The NotebookAgent of `shell` (created on first use: the agent loads lazily).

    It lives on the shell's registered `FuxiMagics` instance, not in module state: no
    `import` hands the policy to code the model runs (see permissions/integrity.py for
    what guards it beyond that).
    """
    magics = shell.magics_manager.registry.get("FuxiMagics")
    if magics is None:
        raise UsageError("%%fuxi: the extension is not loaded; run `%load_ext fuxi_notebook`.")
    return magics.agent


async def run_fuxi_cell(line: str, body: str) -> None:
    """What a rewritten `%%fuxi` cell awaits: the cell the frontend sent, as written."""
    from IPython import get_ipython

    shell = get_ipython()
    sent = sent_cell_parts(shell)  # compared as the cell uses them (ends stripped of \n)
    if sent is None or (sent[0], sent[1].strip("\n")) != (line, body.strip("\n")):
        raise UsageError("%%fuxi: this run's options and prompt are not the text of the "
                         "cell you ran (code in the kernel changed them on the way, or "
                         "called the agent itself); nothing ran. A %%fuxi cell runs only "
                         "as the frontend sent it: run the cell itself, or %reload_ext "
                         "fuxi_notebook if an input transformer was added.")
    preload = getattr(shell.magics_manager.registry.get("FuxiMagics"), "_preload", None)
    if preload is not None:  # no import of its own left running when the cell starts
        preload.finish()  # (nor when it seals the package's code)
    await agent_for(shell).run_cell(line, body)


def transform_fuxi_cell(lines: list[str]) -> list[str]:
    """Rewrite a `%%fuxi` cell into `await ...run_fuxi_cell(line, body)`; `%%fuxi?` stays,
    and so does a cell without a prompt yet (terminal IPython keeps reading it)."""
    parts = fuxi_cell_parts(lines)
    if parts is None:
        return lines
    target = f"__import__({__name__!r}, fromlist=['_']).run_fuxi_cell"
    return [f"await {target}({parts[0]!r}, {parts[1]!r})\n"]


# IPython's check_complete skips transformers marked like this, so it still sees a
# `%%fuxi` cell magic and terminal IPython keeps reading lines until a blank one.
transform_fuxi_cell.has_side_effects = True  # type: ignore[attr-defined]


def _kernel_version_problem(shell: Any) -> str | None:
    if getattr(shell, "kernel", None) is None:
        return None
    import ipykernel

    version = str(getattr(ipykernel, "__version__", "0"))
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < _MIN_IPYKERNEL:
        return (f"fuxi_notebook needs ipykernel>=7.4 (this kernel has {version}):"
                " older kernels cannot deliver approval clicks to a running cell. Run "
                "`pip install -U 'ipykernel>=7.4'` and restart the kernel.")
    return None


#: What `%%fuxi?` shows (the cell magic's docstring).
CELL_HELP = """Run the Fuxi agent on the cell's text, in this kernel.

        Usage::

            %%fuxi [--model ID] [--max-turns N] [--max-budget-usd USD]
                   [--permission-mode default|acceptEdits|plan|dontAsk|auto|bypassPermissions]
                   [--allowed-tools RULES] [--disallowed-tools RULES]
                   [--effort low|medium|high|xhigh|max] [--cwd DIR]
                   [--vars NAMES | --no-context] [--output-schema JSON_FILE_OR_NAME]
                   [--mcp-config JSON_FILE_OR_NAME]
                   [--new | --resume CELL_OR_SESSION_ID] [--fork]
                   [--replay [off|lenient|strict]] [--id ID]
            <prompt>

        Consecutive cells continue one conversation. After a kernel restart a cell
        continues the nearest recorded cell above it (a cell not saved yet: the saved
        notebook's last conversation) if it ran in the same working folder; the cell
        says which it continues, or why it starts anew. `--new` starts a fresh one, `--resume ID`
        continues after any recorded cell (or the last cell of a session), `--fork`
        continues in a new session and leaves the original branch as it is. RULES are
        comma-separated permission rules. `--mcp-config` names MCP servers (inline JSON,
        a .json file, or a variable holding {name: config}); they start once and serve
        later cells. A function decorated with `@fuxi_tool` is offered as a tool.

        Replay: a recorded cell can re-run from its record (the model's turns come from
        the notebook, the tools run again for real). `--replay` (lenient: differences are
        noted; strict: the cell fails at the first one; off: call the model), else
        `%fuxi config --replay`, else FUXI_REPLAY; without an API key recorded cells
        replay (lenient) after you confirm once. The agent sees your variables and the cells
        you ran since its last turn; it can run Python in this namespace (always asked
        unless allowed), read and edit files, search, and run shell commands. Calls that
        need your approval show Allow / Always allow / Deny buttons; in headless runs
        (nbclient, papermill) they are denied with a message saying how to allow them.
        The result is in `_fuxi`; the cell keeps a transcript and a session record.

        Cell tools: in JupyterLab and Notebook 7 with the fuxi frontend extension the
        agent can also edit, insert, delete, move and run the notebook's cells (EditCell,
        InsertCell, DeleteCell, MoveCell, RunCell). In VS Code, nbclient, papermill and
        terminal IPython they are not offered: there the kernel cannot change the
        notebook (InsertCell then adds one cell below, when the cell ends). `%fuxi undo`
        takes back what an agent cell changed (files, variables, cells); `%fuxi
        permissions` lists the rules in force and revokes "Always allow" grants.

        Project settings: FUXI.md, `.fuxi/settings.json` (and `settings.local.json`), the
        commands in `.fuxi/commands/` (`/name args` as the prompt), skills and output
        styles of the working folder and of your own `~/.fuxi/`. What would run code or
        widen permissions (hook commands, `.mcp.json` servers, allow rules, modes, env)
        waits until you trust the folder on the card a cell shows. Long conversations are
        compacted near the context window (one line in the cell); `/compact [what to
        keep]` as the prompt compacts now, and `%fuxi` shows how full the context is.

        Examples::

            %%fuxi
            Plot the monthly totals of the DataFrame I just loaded.

            %%fuxi --allowed-tools "Read,Grep,Bash(git status)" --max-turns 10
            Which modules of this repo have no tests?

            %fuxi config --model claude-opus-5 --max-budget-usd 1
            %fuxi config --replay strict
            %fuxi            # session: turns, tokens, cost
            %fuxi sessions   # the sessions recorded in this notebook
            %fuxi models     # the models with a known price, and the default
            %fuxi tools      # what the model is offered, and the MCP servers' state
            %fuxi commands   # the /commands a cell's prompt can start with
            %fuxi skills     # the skills the model can load
            %fuxi trust      # what the folder's settings hold back; ask again next cell
            %fuxi reset      # start a new conversation (and stop the MCP servers)
        """


@magics_class

class FuxiMagics(Magics):
    """`%%fuxi` and `%fuxi`; holds the shell's NotebookAgent."""

    _agent: Any = None
    #: what the agent this kernel had before `%reload_ext` hands on (see KernelMemory)
    _kept: Any = None
    #: the background import of the agent's modules (stopped when a cell starts)
    _preload: Preload | None = None

    @property
    def agent(self) -> Any:
        if self._agent is None:
            from .controller import NotebookAgent

            self._agent = NotebookAgent(self.shell, kept=self._kept)
        return self._agent

    @_cell_magic("fuxi")
    def fuxi_cell(self, line: str, cell: str) -> None:
        if not cell.strip():
            raise UsageError("%%fuxi: the cell body is the prompt; write what the agent "
                             "should do, e.g. '%%fuxi\nSummarise df'")
        raise UsageError("%%fuxi was not rewritten into an awaited cell: run "
                         "`%reload_ext fuxi_notebook` and run the cell again.")

    fuxi_cell.__doc__ = CELL_HELP

    @_line_magic("fuxi")
    def fuxi_line(self, line: str) -> Any:
        """`%fuxi` shows the session; `%fuxi sessions`; `%fuxi models`; `%fuxi tools`;
        `%fuxi commands`; `%fuxi skills`; `%fuxi trust`; `%fuxi reset`;
        `%fuxi undo [CELL] [--list] [--conversation]`; `%fuxi permissions [revoke N]`;
        `%fuxi config [options]`."""
        words = shlex.split(line)
        agent = agent_for(self.shell)
        if not words:
            return _session_summary(agent)
        if words[0] in _POLICY_COMMANDS:
            _check_policy_command(self.shell, agent, line)
        if words[0] == "reset":
            agent.reset()
            agent.reseal()  # a change through fuxi's own command
            return "fuxi: the next %%fuxi cell starts a new conversation."
        if words[0] == "config":
            _configure(agent, line.split("config", 1)[1])
            agent.reseal()
            return None
        if words[0] == "sessions":
            return _sessions(agent)
        if words[0] == "models":
            return _models(agent)
        if words[0] == "tools":
            return _tools(agent)
        if words[0] in ("commands", "skills"):
            return _listing(agent, words[0])
        if words[0] == "permissions":
            if words[1:2] == ["revoke"]:
                _check_policy_command(self.shell, agent, line)
            from ..line.permissions import permissions_command

            permissions_command(agent, words[1:])
            return None
        if words[0] == "undo":
            from ..line.undo import undo_command

            undo_command(agent, words[1:])
            return None
        if words[0] == "trust":
            print(agent.ask_trust_again())
            agent.reseal()  # a change through fuxi's own command
            return None
        raise UsageError(f"%fuxi: unknown command {words[0]!r}; use %fuxi, %fuxi sessions, "
                         "%fuxi models, %fuxi tools, %fuxi commands, %fuxi skills, "
                         "%fuxi trust, %fuxi undo, %fuxi permissions, %fuxi reset or "
                         "%fuxi config [options] (see %%fuxi? for the options)")


#: The `%fuxi` commands that change what later cells may do (or which conversation and
#: consent they go on with): only the user's own text may run them.
_POLICY_COMMANDS = frozenset({"config", "reset", "trust", "undo"})


def _check_policy_command(shell: Any, agent: Any, line: str) -> None:
    """`%fuxi config`, `reset` and `trust` run only as a line the frontend sent, never
    while a `%%fuxi` cell runs (from code the agent runs, or a thread it left)."""
    if agent.running or not has_line_magic(shell, line):
        raise UsageError(f"%fuxi {line.split()[0]}: changes what later %%fuxi cells may do, "
                         "so it runs only as a line of a cell you run yourself (not from "
                         "code, and not while a %%fuxi cell runs); nothing changed.")


def _configure(agent: Any, rest: str) -> None:
    try:
        args = parse_cell_line(rest, prog="%fuxi config")
    except MagicArgsError as error:
        raise UsageError(f"%fuxi config: {error}") from None
    if args.new or args.cell_id or args.resume or args.fork:
        raise UsageError("%fuxi config: --new, --resume, --fork and --id apply to one cell, "
                         "not as defaults")
    agent.defaults.update(args.settings())
    if args.replay is not None:
        agent.defaults["replay"] = args.replay
    chosen = agent.chosen_defaults()
    editor = sorted(k for k in chosen if k not in agent.defaults)
    from_editor = ("from the Settings Editor (Fuxi): " + ", ".join(
        "--" + k.replace("_", "-") for k in editor)) if editor else None
    _show_settings(chosen, [from_editor, agent.budget.describe(), _where(chosen)])


def _where(defaults: dict[str, Any]) -> str:
    """Which model later cells use, and where it lives (provider, region, endpoint)."""
    from ....errors import ConfigurationError
    from ...models.access.providers import current_provider
    from ...models.names import model_name

    try:
        place = current_provider().describe()
    except ConfigurationError as error:
        place = str(error)
    return f"model: {model_name(defaults.get('model'))} on {place}"


def _setting(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _show_settings(defaults: dict[str, Any], notes: list[str | None]) -> None:
    """The defaults later cells use, as a table (a quoted Python dict was hard to read),
    then `notes`: the kernel's budget with what is left of it (when one is set), the model
    and where it lives."""
    from IPython.display import display

    from ...sessions.text.markdown import code_span, escape_math

    rows = sorted(defaults.items())
    below = [note for note in notes if note]
    if not rows:
        text = "\n".join(["fuxi defaults: none (each cell uses its own options)", *below])
        display({"text/markdown": escape_math(text.replace("\n", "\n\n")),
                 "text/plain": text}, raw=True)
        return
    names = {name: "--" + name.replace("_", "-") for name, _ in rows}
    markdown = "\n".join(["**fuxi defaults** for later cells", "", "| option | value |",
                          "|---|---|", *(f"| `{names[n]}` | {code_span(_setting(v))} |"
                                         for n, v in rows), *(["", *below] if below else [])])
    plain = "\n".join(["fuxi defaults for later cells:",
                       *(f"  {names[n]}: {_setting(v)}" for n, v in rows), *below])
    display({"text/markdown": escape_math(markdown), "text/plain": plain}, raw=True)


def _sessions(agent: Any) -> None:
    """Show the sessions recorded in the saved notebook and in this kernel."""
    from IPython.display import display

    from ...sessions.listing import format_sessions, summarize
    from ...sessions.text.markdown import escape_math

    sessions = agent.conversations.sessions()
    text = "\n\n".join([*agent.identity.take_notes(),
                         format_sessions(summarize(sessions, agent.conversations.volatile()))])
    # a `$` in markdown starts math in JupyterLab: the costs are escaped there
    display({"text/markdown": escape_math(text), "text/plain": text}, raw=True)


def _tools(agent: Any) -> None:
    """What the model is offered with the current defaults, one row per tool, and the
    MCP servers' state (a failed server says why)."""
    from IPython.display import display

    from ...sessions.text.markdown import code_span, escape_math

    rows = agent.offered_tools()
    servers = agent.mcp.status()
    lines = ["| tool | kind | from |", "|---|---|---|",
             *(f"| {code_span(name)} | {kind} | {where} |" for name, kind, where in rows)]
    plain = [f"  {name} · {kind} · {where}" for name, kind, where in rows]
    notes = [f"MCP server {s['name']}: {s['status']}" + (f" ({s['error']})" if s.get("error")
                                                         else "") for s in servers]
    if agent.defaults.get("mcp_config") and not servers:
        notes.append("the --mcp-config servers start with the next %%fuxi cell")
    head = f"fuxi offers {len(rows)} tools"
    markdown = "\n".join([f"**{head}**", "", *lines, *(["", *notes] if notes else [])])
    text = "\n".join([f"{head}:", *plain, *notes])
    display({"text/markdown": escape_math(markdown), "text/plain": text}, raw=True)


def _listing(agent: Any, what: str) -> None:
    """`%fuxi commands` / `%fuxi skills`: what a cell can use, where each comes from, and
    how to use it (`/name args` as a cell's prompt; the model calls a skill itself)."""
    from IPython.display import display

    from ...agent.extensions.skills import SKILL_TOOL
    from ...sessions.text.markdown import code_span, escape_math

    session = agent.probe(what)
    if what == "commands":
        rows = [(f"/{c.name}" + (f" {c.argument_hint}" if c.argument_hint else ""),
                 c.description or "", c.plugin or c.source) for c in session.commands.values()]
        use = "Write `/name arguments` as a %%fuxi cell's prompt."
    else:
        tool = session.registry.get(SKILL_TOOL)
        skills = getattr(tool, "skills", {}) if tool is not None else {}
        rows = [(name, skill.description, skill.source) for name, skill in skills.items()]
        use = "The model loads a skill's instructions when the task needs it."
    where = ", ".join(session.project.sources) or "none"
    if not rows:
        text = (f"fuxi: no {what} found (setting sources: {where}; they live in "
                f".fuxi/{what}/ of the project, the user folder, or a plugin).")
        display({"text/markdown": escape_math(text), "text/plain": text}, raw=True)
        return
    head = f"**{len(rows)} {what}** (setting sources: {where}). {use}"
    lines = [head, "", f"| {what[:-1]} | description | from |", "|---|---|---|",
             *(f"| {code_span(a)} | {escape_math(b)} | {c} |" for a, b, c in rows)]
    plain = [head.replace("**", "").replace("`", ""),
             *(f"  {a} · {b} · {c}" for a, b, c in rows)]
    display({"text/markdown": "\n".join(lines), "text/plain": "\n".join(plain)}, raw=True)


def _models(agent: Any) -> None:
    """Show the models with a known price, so that `--model` can be chosen knowing what
    a cell costs; marks the default (`%fuxi config --model`, else FUXI_MODEL, else
    DEFAULT_MODEL)."""
    from IPython.display import display

    from ...models.names import model_name
    from ...models.pricing import models_table
    from ...sessions.text.markdown import escape_math

    text = models_table(model_name(agent.chosen_defaults().get("model")))
    # a `$` in markdown starts math in JupyterLab: the prices are escaped there
    display({"text/markdown": escape_math(text), "text/plain": text}, raw=True)


def _session_summary(agent: Any) -> str | None:
    """`%fuxi`: the session's totals in one line, and a table of its cells (turns, tokens,
    cost, time) under it."""
    from IPython.display import display

    from ...models.pricing import format_cost
    from ...models.usage import tokens_in
    from ...sessions.text.markdown import escape_math

    session = agent.session
    if session is None:
        return "fuxi: no conversation yet (run a %%fuxi cell)."
    tokens = session.usage.tokens
    total_in = tokens_in(tokens)
    provider = getattr(session.model, "provider", None)  # a cloud provider is named
    where = (f" on {provider.describe()}" if provider is not None
             and getattr(provider, "name", "anthropic") != "anthropic" else "")
    line = (f"fuxi session {session.id[:8]} · model {session.model_name}{where} · "
            f"{agent.runs} cell run(s) · {agent.turns} turn(s) · "
            f"{total_in:,} input / "
            f"{tokens['output_tokens']:,} output tokens "
            f"({tokens['cache_read_input_tokens']:,} from cache) · "
            f"{format_cost(session.usage.total_cost_usd, estimate=True)}")
    line += f"\n\n{context_line(session)}"
    rows = _cell_rows(agent, session.id)
    header = ["| cell | turns | tokens in / out | cost | time |", "|---|---:|---:|---:|---:|"]
    markdown = "\n".join([line, "", *header, *(f"| `{r[0]}` | " + " | ".join(r[1:]) + " |"
                                                for r in rows)]) if rows else line
    plain = "\n".join([line, *("  " + " · ".join(r) for r in rows)])
    display({"text/markdown": escape_math(markdown), "text/plain": plain}, raw=True)
    return None


def context_line(session: Any) -> str:
    """How full the conversation's context window is, and when it compacts."""
    from ...agent.loop.compacting import context_usage

    usage = context_usage(session)
    automatic = (f"compacts automatically above {usage['autoCompactThreshold']:,}"
                 if usage["isAutoCompactEnabled"] else "automatic compaction is off")
    return (f"context: {usage['totalTokens']:,} of {usage['rawMaxTokens']:,} tokens "
            f"({usage['percentage']:g} %) · {automatic} · `/compact` as a prompt compacts now")


def _cell_rows(agent: Any, session_id: str) -> list[tuple[str, ...]]:
    """One row per cell of this session run in the kernel (from what its output kept)."""
    from ...models.pricing import format_cost
    from ...models.usage import tokens_in
    from ...sessions.text.transcript import turns_taken
    from ..display.spend import cell_cost

    rows: list[tuple[str, ...]] = []
    for cell_id in agent.conversations.order:
        remembered = agent.conversations.records[cell_id]
        if remembered.record.session_id != session_id:
            continue
        volatile = remembered.volatile or {}
        usage = volatile.get("usage") or {}
        read = tokens_in(usage)
        seconds = (volatile.get("duration_ms") or 0) / 1000
        result = remembered.record.result  # turns as the cell's last line counts them
        rows.append((cell_id, str(turns_taken(result.subtype, result.num_turns)),
                     f"{read:,} / {int(usage.get('output_tokens') or 0):,}",
                     format_cost(cell_cost(volatile), estimate=True), f"{seconds:.1f} s"))
    return rows


#: What the first `%%fuxi` cell imports, in the order it imports it, imported in the
#: background once the extension is loaded, so that `%load_ext` stays instant and a cell
#: typed a few seconds later does not pay for it: the agent (the controller pulls in the
#: loop, the tools, sessions and permissions) and what a cell imports as it starts. Then
#: the model's side, as the first cell will run (`_model_side`), and the cards' widgets
#: where a frontend can click them. Nothing a first cell does not import (the sessions
#: store, the whole `anthropic` package): the preload shares the interpreter with the
#: cells that run meanwhile.
PRELOAD = tuple(f"fuxi_notebook.{name}" for name in (
    "_internal.notebook.cell.controller", "_internal.notebook.kernel.tools",
    "_internal.agent.project_link", "_internal.agent.extensions.skills",
    "_internal.agent.subagents.agent_tool", "_internal.tools.web.fetch_tool",
    "_internal.tools.tasks",
))
#: a replayed cell: the record's model and the replay's run (never the API client)
PRELOAD_REPLAY = tuple(f"fuxi_notebook.{name}" for name in (
    "_internal.models.replay", "_internal.notebook.replay.run",
    "_internal.notebook.replay.consent",
))
#: where a frontend can click: the approval and consent cards
PRELOAD_CARDS = ("fuxi_notebook._internal.notebook.display.approval_widgets",)


class Preload:
    """The background import of what the first `%%fuxi` cell needs (`PRELOAD`).

    It stops at the next module once a `%%fuxi` cell starts (`finish`): from then on the
    cell imports what it still needs itself, rather than sharing the interpreter with a
    thread importing what it may not need (Run All: `%load_ext`, then the cell at once).
    """

    def __init__(self, clicks: bool) -> None:
        import threading

        self._clicks = clicks
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fuxi-preload", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def finish(self) -> None:
        """Stop after the module being imported now, and wait for it: the cell seals the
        package's code next, and a module half imported would change under the seal."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def join(self) -> None:
        """Wait for the whole list (tests and benchmarks)."""
        self._thread.join()

    def _run(self) -> None:
        for step in self._steps():
            if self._stop.is_set():
                return
            try:
                step()
            except Exception:  # the cell imports it again and reports the error
                continue

    def _steps(self) -> Iterator[Callable[[], object]]:
        import importlib
        from functools import partial

        for name in PRELOAD:
            yield partial(importlib.import_module, name)
        yield from _model_side()
        if self._clicks:
            for name in PRELOAD_CARDS:
                yield partial(importlib.import_module, name)


def _model_side() -> Iterator[Callable[[], object]]:
    """The replay's modules when the first cell would replay (no API key, or FUXI_REPLAY
    asks for it), else the API client: its own modules, not the SDK's type index
    (models/anthropic_import.py). A replay never imports `anthropic`."""
    import importlib
    from functools import partial

    from ..replay.decide import replay_mode

    try:
        replays = replay_mode(None, None).replays
    except ValueError:  # a FUXI_REPLAY the cell will refuse
        return
    if replays:
        for name in PRELOAD_REPLAY:
            yield partial(importlib.import_module, name)
        return
    yield partial(importlib.import_module, "fuxi_notebook._internal.models.anthropic")
    yield _client


def _client() -> None:
    """The API client's modules, then what its first request imports (the deprecated
    models' table, anyio's asyncio backend)."""
    import importlib

    from ...models.anthropic_import import load_client

    load_client()
    for name in ("anthropic._data", "anyio._backends._asyncio"):
        importlib.import_module(name)


def _can_click(shell: Any) -> bool:
    """Whether the frontend can click cards (JupyterLab sends each cell's id): only a
    guess for the preload; the cell itself asks `controller.detect_frontend`."""
    from ...common.switches import switch

    forced = switch("FUXI_FRONTEND")
    if forced in ("lab", "headless", "terminal"):
        return forced == "lab"
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    parent = kernel.get_parent() or {}
    return bool((parent.get("metadata") or {}).get("cellId"))


def load_ipython_extension(shell: Any) -> None:
    """Register the transformer and the magics; in a kernel, pin the user folder and
    redact every output from now on; the agent loads in the background."""
    problem = _kernel_version_problem(shell)
    if problem:
        raise UsageError(problem)
    from ...common import switches  # environment switches are read now, at load

    kernel = getattr(shell, "kernel", None)
    if kernel is not None:  # the model's code shares this process and its environment
        switches.pin_config_dir(str(switches.config_dir().resolve()))
        if not isinstance(getattr(kernel.session.send, "__self__", None), OutputRedaction):
            OutputRedaction(kernel.session).install()  # every output, whenever written
    transformers = shell.input_transformers_cleanup
    if transform_fuxi_cell not in transformers:
        transformers.insert(0, transform_fuxi_cell)
    before = shell.magics_manager.registry.get("FuxiMagics")
    shell.register_magics(FuxiMagics)
    if before is not None:  # `%reload_ext`: one consent per notebook and kernel
        shell.magics_manager.registry["FuxiMagics"]._kept = before._kept
    if os.environ.get("FUXI_PRELOAD", "1") != "0":
        preload = Preload(_can_click(shell))
        shell.magics_manager.registry["FuxiMagics"]._preload = preload
        preload.start()


def unload_ipython_extension(shell: Any) -> None:
    """Remove the transformer (the magics stay registered, as IPython allows)."""
    if transform_fuxi_cell in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(transform_fuxi_cell)
    magics = shell.magics_manager.registry.get("FuxiMagics")
    if magics is not None:
        if magics._agent is not None:  # a reload keeps what the user told this kernel
            magics._kept = magics._agent.memory()
            magics._agent.live.close()
        magics._agent = None
