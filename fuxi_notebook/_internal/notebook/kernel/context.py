"""What the agent should know about the kernel at the start of a turn.

The user keeps working between `%%fuxi` cells: defining variables, running analysis.
`KernelContext.describe()` summarises the namespace and the cells run since the last
call, compactly and deterministically, so it can be prepended to the agent's prompt.
The user chooses what goes: `only` a few variables (`--vars`), or nothing (`--no-context`,
and then the cells stay unsent for the next cell that sends context); `{name}` in a prompt
adds that variable's full description (`referenced`), never a secret-named one's value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

from ...common.secret_names import is_secret_variable_name
from ...sessions.redact import redact_text, redacted_head
from .values import (
    masked,
    shape_of,
    short_repr,
    type_name,
    user_variables,
)

__all__ = ["KernelContext", "referenced"]

MAX_VARIABLES = 40
FIRST_CALL_CELLS = 5
MAX_NEW_CELLS = 20
CELL_CODE_CHARS = 1500
OUT_REPR_CHARS = 200


@dataclass
class RanCell:
    """One cell the user ran: its number, code and the repr of its `Out` value."""

    number: int
    code: str
    out: str | None


class KernelContext:
    """Reports the user's variables and the cells they ran since the last report."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._seen: int | None = None
        """Highest `In` index already looked at; None before the first call."""

    def describe(self, *, max_chars: int = 4000, only: list[str] | None = None,
                 nothing: bool = False) -> str | None:
        """Variables (`only` these, when given) and new cells within `max_chars`; None if
        there are neither, or if `nothing` is to be sent."""
        if nothing:
            return None
        variables = _variables_line(self.shell, max(max_chars // 3, 80), only)
        first_call = self._seen is None
        cells = self._new_cells()
        if not variables and not cells:
            return None
        parts = [variables] if variables else []
        if cells:
            title = "Cells the user ran recently:" if first_call else (
                "Cells the user ran since your last turn:")
            parts.append(_cells_section(title, cells, max_chars - len("\n\n".join(parts)) - 2))
        # the cells' code may hold secret literals (`db_password = "..."`): the model needs
        # the code, not the secret, and the record would only redact it afterwards
        text = redact_text("\n\n".join(part for part in parts if part))
        return text if len(text) <= max_chars else text[: max(max_chars - 3, 0)] + "..."

    def _new_cells(self) -> list[RanCell]:
        """Finished cells after the last one seen (the last few on the first call)."""
        history = self.shell.user_ns.get("In")
        if not isinstance(history, list):
            return []
        start = 1 if self._seen is None else self._seen + 1
        limit = FIRST_CALL_CELLS if self._seen is None else MAX_NEW_CELLS
        self._seen = max(len(history) - 1, self._seen or 0)
        running = _running_cell(self.shell)
        raw = getattr(getattr(self.shell, "history_manager", None), "input_hist_raw", None)
        outputs = self.shell.user_ns.get("Out")
        cells = []
        for number in range(start, len(history)):
            code = _cell_source(history, raw, number)
            if number == running or not code.strip() or _is_agent_cell(code, history[number]):
                continue
            cells.append(RanCell(number, code, _out_repr(outputs, number)))
        return cells[-limit:]


def _running_cell(shell: Any) -> int | None:
    """The execution count of the cell running now (the agent's own), if any.

    IPython gives the display hook the running cell's result object for exactly the
    duration of the cell; `In` already holds that cell, so it must be left out.
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else None


def _cell_source(history: list[Any], raw: Any, number: int) -> str:
    """What the user typed (raw, with magics) when available, else IPython's `In`."""
    if isinstance(raw, list) and len(raw) == len(history) and isinstance(raw[number], str):
        return cast(str, raw[number])
    return str(history[number])


def _is_agent_cell(raw: str, parsed: Any) -> bool:
    """`%%fuxi` cells are the conversation itself, already known to the agent."""
    return raw.lstrip().startswith("%%fuxi") or "run_cell_magic('fuxi'" in str(parsed)


def _out_repr(outputs: Any, number: int) -> str | None:
    if not isinstance(outputs, dict) or number not in outputs:
        return None
    return short_repr(outputs[number], OUT_REPR_CHARS)


def _variables_line(shell: Any, budget: int, only: list[str] | None = None) -> str:
    """`Variables in the kernel: a: int; df: pandas.DataFrame (3, 2); ...` within budget
    (with `only`: those the user named, and which of them are not defined)."""
    if only is not None:
        namespace = shell.user_ns
        missing = [name for name in only if name not in namespace]
        variables = [(name, namespace[name]) for name in only if name in namespace]
        line = _entries_line(variables, budget, "Variables the user chose to share")
        return line + (f"\n(not defined in the kernel: {', '.join(missing)})"
                       if missing else "")
    return _entries_line(list(user_variables(shell)), budget, "Variables in the kernel")


def _entries_line(variables: list[tuple[str, Any]], budget: int, title: str) -> str:
    if not variables:
        return ""
    entries = []
    for name, value in variables[:MAX_VARIABLES]:
        shape = shape_of(value)
        entries.append(f"{name}: {type_name(value)}" + (f" {shape}" if shape else ""))
    head = f"{title} ({len(variables)}): "
    shown: list[str] = []
    for entry in entries:
        if len(head) + len("; ".join([*shown, entry])) + 20 > budget:
            break
        shown.append(entry)
    hidden = len(variables) - len(shown)
    more = f"{'; ' if shown else ''}... ({hidden} more)" if hidden else ""
    return head + "; ".join(shown) + more


def _cells_section(title: str, cells: list[RanCell], budget: int) -> str:
    """Newest cells first into the budget, then shown oldest first."""
    rendered: list[str] = []
    used = len(title)
    for cell in reversed(cells):
        block = _render_cell(cell)
        if rendered and used + len(block) + 2 > budget:
            break
        rendered.insert(0, block)
        used += len(block) + 2
    omitted = len(cells) - len(rendered)
    note = [f"({omitted} earlier cells omitted)"] if omitted else []
    return "\n\n".join([title, *note, *rendered])


def _render_cell(cell: RanCell) -> str:
    code, extra = redacted_head(cell.code.rstrip(), CELL_CODE_CHARS)  # whole, then cut
    if extra:
        code = f"{code}\n... (cell truncated, {extra} more characters)"
    lines = [f"[In {cell.number}]", code]
    if cell.out is not None:
        lines.append(f"[Out {cell.number}] {cell.out}")
    return "\n".join(lines)


_REFERENCE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
REFERENCE_CHARS = 3000


def referenced(prompt: str, shell: Any) -> str | None:
    """The description of each variable written as `{name}` in `prompt` (`{{name}}` is
    literal), or None. A secret-named variable is described by type only."""
    from .inspect import describe_object

    parts = []
    for name in dict.fromkeys(_REFERENCE.findall(prompt)):
        if name not in shell.user_ns:
            continue
        value = shell.user_ns[name]
        if is_secret_variable_name(name):
            parts.append(f"{name}: {masked(value)}")
            continue
        try:
            described = describe_object(name, value)
        except Exception as error:  # a broken __repr__ must not stop the cell
            described = f"{name}: {type_name(value)} (cannot be described: {error})"
        parts.append(described[:REFERENCE_CHARS])
    if not parts:
        return None
    return redact_text("\n\n".join(parts))
