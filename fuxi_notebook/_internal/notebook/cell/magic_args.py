"""Parsing the `%%fuxi` line (and `%fuxi config`) into options, with clear usage errors.

Spellings: `--model`, `--max-turns`, `--max-budget-usd`, `--permission-mode`,
`--allowed-tools` / `--disallowed-tools` (comma-separated rules; commas inside
parentheses belong to the rule), `--effort`, `--cwd`; what the model sees of the kernel:
`--vars a,b` (only these variables), `--no-context`; the answer's shape: `--output-schema`
(inline JSON, a .json file, or a variable holding a schema or a pydantic model class); MCP
servers whose tools the model may call: `--mcp-config` (inline JSON, a .json file, or a
variable holding `{name: config}`); and how the cell runs: `--new`,
`--resume ID`, `--fork`, `--replay [off|lenient|strict]`, `--id`.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from typing import Any

from ....options import EFFORT_LEVELS, PERMISSION_MODES
from ...common.replay_modes import REPLAY_MODES

__all__ = ["CellArgs", "MagicArgsError", "parse_cell_line", "split_rules"]



class MagicArgsError(ValueError):
    """A bad magic line; the magic shows it as a UsageError (no traceback)."""


@dataclass
class CellArgs:
    """What a `%%fuxi` line asked for; None means "use the default"."""

    model: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] | None = None
    disallowed_tools: list[str] | None = None
    effort: str | None = None
    cwd: str | None = None
    vars: list[str] | None = None
    no_context: bool | None = None
    output_schema: str | None = None
    mcp_config: str | None = None
    new: bool = False
    cell_id: str | None = None
    resume: str | None = None
    fork: bool = False
    replay: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def settings(self) -> dict[str, Any]:
        """The option values given explicitly (for defaults and for the record)."""
        names = ("model", "max_turns", "max_budget_usd", "permission_mode", "allowed_tools",
                 "disallowed_tools", "effort", "cwd", "vars", "no_context", "output_schema",
                 "mcp_config")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


def split_rules(text: str) -> list[str]:
    """`"Read,Bash(git diff a,b)"` -> `["Read", "Bash(git diff a,b)"]`."""
    rules, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            rules.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    if depth != 0:
        raise MagicArgsError(f"unbalanced parentheses in the rule list {text!r}")
    rules.append(current.strip())
    return [rule for rule in rules if rule]


def _rules(text: str) -> list[str]:
    try:
        return split_rules(text)
    except MagicArgsError as error:  # argparse keeps the message of this type only
        raise argparse.ArgumentTypeError(str(error)) from None


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    bad = [name for name in names if not name.isidentifier()]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"--vars takes comma-separated variable names, not {', '.join(bad) or repr(text)}")
    return names


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError
    return value


# argparse names the type in its message: "invalid positive integer value: '0'"
_positive_int.__name__ = "positive integer"
_positive_float.__name__ = "positive number"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise MagicArgsError(message)


def _parser(prog: str) -> _Parser:
    parser = _Parser(prog=prog, add_help=False, exit_on_error=False)
    parser.add_argument("--model")
    parser.add_argument("--max-turns", type=_positive_int)
    parser.add_argument("--max-budget-usd", type=_positive_float)
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES)
    parser.add_argument("--allowed-tools", type=_rules)
    parser.add_argument("--disallowed-tools", type=_rules)
    parser.add_argument("--effort", choices=EFFORT_LEVELS)
    parser.add_argument("--cwd")
    parser.add_argument("--vars", type=_names, metavar="NAMES")
    parser.add_argument("--no-context", action="store_const", const=True)
    parser.add_argument("--output-schema", metavar="JSON_FILE_OR_NAME")
    parser.add_argument("--mcp-config", metavar="JSON_FILE_OR_NAME")
    parser.add_argument("--new", action="store_true")
    parser.add_argument("--id", dest="cell_id")
    parser.add_argument("--resume", metavar="CELL_OR_SESSION_ID")
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--replay", nargs="?", const="lenient", choices=REPLAY_MODES)
    return parser


def parse_cell_line(line: str, prog: str = "%%fuxi") -> CellArgs:
    """Parse the options of a `%%fuxi` line."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise MagicArgsError(f"cannot split the options: {error}") from error
    try:
        parsed, rest = _parser(prog).parse_known_args(words)
    except argparse.ArgumentError as error:
        raise MagicArgsError(str(error)) from error
    if rest:
        raise MagicArgsError(f"unknown option(s): {' '.join(rest)} (see %%fuxi? for the list)")
    args = CellArgs(**vars(parsed))
    if args.no_context and args.vars:
        raise MagicArgsError("--no-context sends nothing of the kernel and --vars sends these "
                             "variables: use one of them")
    if args.new and args.resume:
        raise MagicArgsError("--new starts a new conversation and --resume continues one: "
                             "use one of them")
    return args
