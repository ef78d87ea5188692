"""The consent card before a replay: exactly what the plans will run, in full.

Drawn from `ReplayPlan`s only (see replay_plan.py), so the card cannot say less than the
replay does. What it promises:

- every call that runs again and is not read-only by this kernel's own declaration is
  listed with its whole input, every field, however many calls there are, and what its
  tool shows it would do beyond that (RunCell: the cell's source now, which is what the
  replay runs): short values inline, longer ones as code blocks (past `FOLD_LINES` lines
  folded under a summary that gives their size), never cut;
- characters that do not show or that reorder text are shown escaped (`\\u202e`) with a
  warning naming them, in the card and in the terminal's text alike;
- read-only calls are listed by their one-line summary (folded), calls answered from the
  record are counted, and the "Always allow" rules the recorded approvals re-add are named.

The same content is given as markdown (the notebook's card) and as plain text (terminal
IPython's y/n prompt). A call's fields, as text, are `sessions/text/call_fields.py`'s,
which the terminal's approval question shows too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...common.visible import reveal
from ...sessions.text.call_fields import (
    CallField,
    call_fields,
    fields_text,
    hidden_warning,
    inline,
    size_words,
)
from ...sessions.text.markdown import code_span, escape_math, fence
from ...sessions.text.transcript import input_summary
from .plan import PlannedCall, ReplayPlan

__all__ = ["FOLD_LINES", "ReplayConsent", "replay_consent"]

#: A value longer than this many lines is folded (its summary says how long it is).
FOLD_LINES = 40


@dataclass(frozen=True)
class ReplayConsent:
    """What the card shows: markdown for the notebook, text for a terminal."""

    markdown: str
    text: str
    calls: int


def replay_consent(plans: Sequence[ReplayPlan], *,
                   unplayable: Sequence[tuple[str, str]] = ()) -> ReplayConsent:
    """The card for replaying `plans`; `unplayable` are (cell id, why) of records in the
    notebook that no replay will run."""
    calls = [call for plan in plans for call in plan.calls]
    listed = [c for c in calls if c.runs and not c.read_only]
    reads = [c for c in calls if c.runs and c.read_only]
    answered = [c for c in calls if not c.runs]
    rules = [rule for plan in plans for rule in plan.rules]
    counts = ", ".join(f"{name} {n}" for name, n in Counter(c.name for c in calls)
                       .most_common()) or "none"
    intro = (f"the model turns of {len(plans)} recorded cell(s) come from the notebook (no "
             f"API calls), and their {len(calls)} tool call(s) run again for real in this "
             f"kernel: {_reveal(counts)}.")
    md = [f"**Replay the recorded agent runs?** {intro[0].upper()}{intro[1:]}"]
    text = [f"Replay the recorded agent runs? {intro[0].upper()}{intro[1:]}"]
    if listed:
        head = (f"What runs or changes something ({len(listed)} call(s), each with its "
                "whole input; read-only is what this kernel's tools declare):")
        md += ["", f"**{head}**"]
        text += ["", head]
        for number, call in enumerate(listed, 1):
            fields = _fields(call)  # revealed once, drawn twice
            warnings = _warnings(call, fields)
            md += ["", *_call_markdown(number, call, fields, warnings)]
            text += _call_text(number, call, fields, warnings)
    else:
        md += ["", "Nothing that runs or changes something: every call is read-only."]
        text += ["", "Nothing that runs or changes something: every call is read-only."]
    if reads:
        md += ["", f"<details><summary>Read-only calls ({len(reads)}), run again as well"
                   "</summary>", "", *(f"- {_summary_markdown(c)}" for c in reads), "",
               "</details>"]
        text += ["", f"Read-only calls ({len(reads)}), run again as well:",
                 *(f"  - {_summary_text(c)}" for c in reads)]
    if answered:
        named = ", ".join(f"{n} {k}" for n, k in Counter(c.name for c in answered)
                          .most_common())
        line = f"Answered from the record, not run again: {_reveal(named)}."
        md += ["", line]
        text += ["", line]
    if unplayable:
        md += ["", "Not replayed (each says why when it runs): "
               + "; ".join(f"cell {code_span(_reveal(c))}: {_reveal(w)}" for c, w in unplayable)]
        text += ["", "Not replayed: " + "; ".join(f"cell {_reveal(c)}: {_reveal(w)}"
                                                for c, w in unplayable)]
    md += ["", _closing([code_span(_reveal(rule)) for rule in rules])]
    text += ["", _closing([_reveal(rule) for rule in rules])]
    return ReplayConsent(escape_math("\n".join(md)), "\n".join(text), len(calls))


def _closing(rules: list[str]) -> str:
    again = f"; their 'Always allow' re-adds {', '.join(rules)}" if rules else ""
    return (f"Recorded approvals are re-applied{again}. Deny rules, ask rules and the "
            "working-directory boundary apply as in a live run.")


def _reveal(text: str) -> str:
    return reveal(text).text


def _fields(call: PlannedCall) -> list[CallField]:
    return call_fields(call.input, call.shown)


def _warnings(call: PlannedCall, fields: list[CallField]) -> list[str]:
    warning = hidden_warning([call.cell_id, call.name], fields)
    return [warning] if warning is not None else []


def _call_markdown(number: int, call: PlannedCall, fields: list[CallField],
                   warnings: list[str]) -> list[str]:
    out = [f"**{number}.** cell {code_span(_reveal(call.cell_id))} · "
           f"**{code_span(_reveal(call.name))}** ({call.declared.kind})"]
    out += [line for warning in warnings
            for line in ("", f"⚠ **This input {warning}.**", "")]
    if not fields:
        out.append("(no input)")
    for field in fields:
        key = field.key.text if field.key.text.isidentifier() else code_span(field.key.text)
        value = field.value.text
        if inline(value):
            out.append(f"- {key}: {code_span(value)}")
            continue
        block = fence(value, field.language) if value else "*(empty)*"
        if value.count("\n") + 1 > FOLD_LINES:
            out += ["", f"<details><summary>{key}: {size_words(value)} (click to show it "
                        "whole)</summary>", "", block, "", "</details>", ""]
        else:
            out += ["", f"{key} ({size_words(value)}):", "", block, ""]
    return out


def _call_text(number: int, call: PlannedCall, fields: list[CallField],
               warnings: list[str]) -> list[str]:
    out = [f"  {number}. cell {_reveal(call.cell_id)} · {_reveal(call.name)} "
           f"({call.declared.kind})"]
    out += [f"     ! this input {warning}" for warning in warnings]
    return out + fields_text(fields)


def _summary(call: PlannedCall) -> str:
    return _reveal(input_summary(call.name, call.input))


def _summary_markdown(call: PlannedCall) -> str:
    return (f"cell {code_span(_reveal(call.cell_id))} · {code_span(_reveal(call.name))} "
            f"{code_span(_summary(call))}")


def _summary_text(call: PlannedCall) -> str:
    return f"cell {_reveal(call.cell_id)} · {_reveal(call.name)} {_summary(call)}"

