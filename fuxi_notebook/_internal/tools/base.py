"""What a tool is: a name, a schema, a declaration of what it does, and an async `run`.

The declaration is the one place a tool says what it is: its `kind` (read / edit /
execute / ask / network), what one call touches (`reach`: the paths it reads or writes,
the URL it fetches, the shell command it runs) and the rule "Always allow" adds
(`always_allow`), and whether a replay of a recorded run runs it again or answers with
the recorded result (`on_replay`: a tool that needs a model, an MCP server or the notebook
document answers from the record), and what an approver must be shown beyond the input to
know what a call does (`shown`: RunCell's input names a cell, and the code it runs is that
cell's source now). Concurrency, permission modes, the path boundary,
approval cards, replay and transcripts all read it through `kind_of`, `reach_of`,
`always_allow_of` and `declaration_of`; a tool that declares nothing (an MCP or
user-defined tool) is treated as `execute`, run again on replay.

Tools never raise for the model's mistakes: they raise `ToolError` (or return a
`ToolOutput` with `is_error=True`), which the loop turns into an `is_error` tool result.
This module imports nothing from the rest of the package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, get_args, runtime_checkable

__all__ = [
    "Declaration",
    "DeclaredTool",
    "OnReplay",
    "Reach",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "ToolOutput",
    "always_allow_of",
    "declaration_of",
    "interrupted",
    "kind_of",
    "reach_of",
    "shown_of",
]

#: What a tool does, from least to most trust needed:
#: read = looks only (runs concurrently, auto-approved inside the working directories);
#: edit = changes files or the notebook, runs nothing (approved by `acceptEdits`);
#: execute = runs code or commands (never approved by a mode other than bypass);
#: ask = needs the user's answer (asked in every mode);
#: network = contacts a host (decided by `WebFetch(domain:...)`-style rules).
ToolKind = Literal["read", "edit", "execute", "ask", "network"]
TOOL_KINDS: tuple[str, ...] = get_args(ToolKind)
#: What a replay does with a call: run it again for real, or answer with the recorded result.
OnReplay = Literal["run", "recorded"]


class ToolError(Exception):
    """A failure the model should read and can act on (bad path, no match, ...)."""


def interrupted(output: str) -> BaseException:
    """The cancellation a tool raises when it is interrupted after it started: it carries
    what the call produced so far, which the model and the record are then given."""
    import asyncio

    error = asyncio.CancelledError("interrupted by the user")
    error.partial_output = output  # type: ignore[attr-defined]
    return error


@dataclass
class ToolOutput:
    """A tool's answer: text, or a list of wire content blocks (text / image)."""

    content: str | list[dict[str, Any]]
    is_error: bool = False


@dataclass
class ToolContext:
    """The session state a tool may use.

    Attributes:
        cwd: the session's working directory; relative paths resolve against it.
        add_dirs: extra working directories.
        env: extra environment variables for subprocesses.
        shell_cwd: the Bash tool's persistent working directory (None = `cwd`).
        read_files: absolute path -> mtime_ns when the file was last read or written by
            the agent; Edit and Write refuse files the agent has not read, or that
            changed since.
        approved_targets: for the call being run, path as written -> real path that the
            permission check approved; a write that would land elsewhere is refused.
        read_denied: `(path, tool name) -> bool`: files a search must leave out of its
            results because a deny rule forbids reading them (None = no such rules).
        approved_shown: for the call being run, what the permission decision was given
            of it beyond its input (the tool's `shown`: RunCell's source); a tool runs
            exactly that or refuses.
    """

    cwd: Path
    add_dirs: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    shell_cwd: Path | None = None
    read_files: dict[str, int] = field(default_factory=dict)
    approved_targets: dict[str, str] = field(default_factory=dict)
    read_denied: Callable[[Path, str], bool] | None = None
    approved_shown: dict[str, str] = field(default_factory=dict)

    def resolve(self, path: str) -> Path:
        """`path` made absolute against `cwd` (`~` expanded), without resolving symlinks."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        return Path(_normalize(candidate))


def _normalize(path: Path) -> str:
    import os.path

    return os.path.normpath(str(path))


@dataclass(frozen=True)
class Reach:
    """What one call touches, as written in its input (the permission code resolves it).

    Attributes:
        reads: paths read; with `dirs`, directory roots searched below.
        writes: paths created or changed.
        url: the URL fetched (a `network` tool).
        command: a shell command line, analysed word by word by the permission code.
    """

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    dirs: bool = False
    url: str | None = None
    command: str | None = None

    @property
    def paths(self) -> bool:
        return bool(self.reads or self.writes)


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call (declare `kind`, `reach` and `always_allow` as in
    `DeclaredTool`; what is not declared counts as `execute`, touching nothing known)."""

    name: str
    description: str
    input_schema: dict[str, Any]

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Execute the call; raise `ToolError` for failures the model should see."""
        ...


class DeclaredTool:
    """Base of the package's tools: the declaration with its defaults."""

    name: str
    kind: ToolKind = "execute"
    on_replay: OnReplay = "run"
    #: offered deferred by default (behind ToolSearch, the definition out of the prompt
    #: until it is loaded): a tool most sessions never call (agent/assemble.py decides)
    defer_by_default: bool = False

    def reach(self, input: dict[str, Any]) -> Reach:
        """What this call touches (default: nothing the permission code can check)."""
        return Reach()

    def always_allow(self, input: dict[str, Any]) -> str:
        """The allow rule "Always allow" adds for this call (default: the whole tool)."""
        return self.name

    async def refuses(self, input: dict[str, Any], ctx: ToolContext) -> str | None:
        """Why the tool would refuse this call as things stand (None: it would try).
        Asked before the hooks and the permission check, so that a call bound to fail is
        never put to the user and never grants a rule; `run` checks again."""
        return None


async def refusal_of(tool: object | None, input: dict[str, Any],
                     ctx: ToolContext) -> str | None:
    """The tool's `refuses` answer; a tool without one, or whose check fails, leaves
    the decision to its `run`."""
    check = getattr(tool, "refuses", None)
    if not callable(check):
        return None
    try:
        found = await check(input, ctx)
    except ToolError as error:
        return str(error)
    except Exception:  # a broken check must not refuse what the tool would do
        return None
    return found if isinstance(found, str) and found else None


class Declaration(NamedTuple):
    """A tool's declaration, taken once (an immutable tuple: the permission engine keeps
    it, so changing the tool object afterwards changes no decision)."""

    name: str
    kind: ToolKind
    reach: Callable[[dict[str, Any]], Any] | None
    always_allow: Callable[[dict[str, Any]], Any] | None
    on_replay: OnReplay = "run"
    #: `input -> {label: text}`: what the call will do beyond its input, as it stands now
    #: (None: the input says it all); raises ToolError when the call cannot run
    shown: Callable[[dict[str, Any]], Awaitable[dict[str, str]]] | None = None


def kind_of(tool: object | None) -> ToolKind:
    """The declared kind; an undeclared or unknown value counts as `execute`."""
    kind = getattr(tool, "kind", None)
    return kind if kind in TOOL_KINDS else "execute"


def declaration_of(tool: object | None, name: str) -> Declaration:
    """`tool`'s declaration now (None or an undeclared tool: `execute`, reach unknown)."""
    on_replay: OnReplay = "recorded" if getattr(tool, "on_replay", "run") == "recorded" else "run"
    shown = getattr(tool, "shown", None)
    return Declaration(name, kind_of(tool), getattr(tool, "reach", None),
                       getattr(tool, "always_allow", None), on_replay,
                       shown if callable(shown) else None)


async def shown_of(declared: Declaration | None, input: dict[str, Any]) -> dict[str, str]:
    """What an approver is shown of the call beyond its input (`Declaration.shown`), as
    text; {} when the tool declares nothing. Raises ToolError when the tool says the call
    cannot run, and for a declaration that fails or answers nonsense (what cannot be shown
    must not run)."""
    if declared is None or declared.shown is None:
        return {}
    try:
        found = await declared.shown(input)
    except ToolError:
        raise
    except Exception as error:
        raise ToolError(f"What the {declared.name} call would do could not be shown "
                        f"({type(error).__name__}: {error}), so it is not run.") from None
    if not isinstance(found, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        raise ToolError(f"What the {declared.name} call would do could not be shown, so it "
                        "is not run.")
    return dict(found)


def reach_of(declared: Declaration | None, input: dict[str, Any]) -> Reach | None:
    """What the call touches: `Reach()` when the tool declares nothing, None when its
    declaration fails or answers nonsense (then nothing about the call is known, and no
    mode or safe set may approve it)."""
    if declared is None or declared.reach is None:
        return Reach()
    try:
        found = declared.reach(input)
    except Exception:  # a broken declaration must not decide anything
        return None
    return found if isinstance(found, Reach) else None


def always_allow_of(declared: Declaration, input: dict[str, Any]) -> str:
    """The rule text "Always allow" adds (the bare tool name when undeclared)."""
    if declared.always_allow is None:
        return declared.name
    try:
        rule = declared.always_allow(input)
    except Exception:
        return declared.name
    return rule if isinstance(rule, str) and rule else declared.name
