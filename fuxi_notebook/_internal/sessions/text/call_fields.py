"""A call's fields as text for someone who must judge it: one form, shared by the consent
card before a replay (`notebook/replay/consent.py`) and the terminal's approval question
(`notebook/display/render.py`), so what one shows the other shows too.

Every field of the input is listed, and what the call's tool shows it does beyond its
input (`ToolPermissionContext.shown`, `PlannedCall.shown`: the source a RunCell runs) as
"<label>, as it is now": short one-line values inline, longer ones line by line, never
cut. Characters that hide or reorder text are shown escaped (`visible.reveal`) and
named by `hidden_warning`. The caller redacts what it shows (a record is redacted
already; a live call is not).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...common.visible import Revealed, reveal

__all__ = ["INLINE_CHARS", "LANGUAGES", "CallField", "call_fields", "fields_text",
           "hidden_warning", "inline", "size_words"]

#: A single-line value up to this long is shown inline.
INLINE_CHARS = 120
#: how a value is highlighted, by its field's name
LANGUAGES = {"command": "bash", "code": "python", "source": "python", "content": "",
             "old_string": "", "new_string": ""}


@dataclass(frozen=True)
class CallField:
    """One field as shown: its name and value revealed, the language of its value."""

    key: Revealed
    value: Revealed
    language: str


def call_fields(tool_input: Mapping[str, Any],
                shown: Mapping[str, str] | None = None) -> list[CallField]:
    """Each field of `tool_input` (a value that is not text as indented JSON), then what
    the call does beyond its input (`shown`, by label), revealed."""
    fields = []
    for key, value in tool_input.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                               indent=2, default=str)
        fields.append(CallField(reveal(str(key)), reveal(text), LANGUAGES.get(str(key), "")
                                if isinstance(value, str) else "json"))
    for key, text in (shown or {}).items():  # what the input names, as it is now
        fields.append(CallField(reveal(f"{key}, as it is now"), reveal(text),
                                LANGUAGES.get(key, "")))
    return fields


def hidden_warning(names: Iterable[str], fields: Iterable[CallField]) -> str | None:
    """What the warning says of the characters shown escaped in `names` (the call's tool,
    its cell...) and in `fields` ("contains ..."), or None when there is none."""
    parts = [reveal(name) for name in names]
    parts += [part for field in fields for part in (field.key, field.value)]
    found: dict[str, tuple[str, str, str]] = {}
    for part in parts:
        for entry in part.found:
            found.setdefault(entry[0], entry)
    return Revealed("", tuple(found.values())).warning() if found else None


def inline(value: str) -> bool:
    """Whether `value` is shown on its field's line."""
    return 0 < len(value) <= INLINE_CHARS and "\n" not in value and value == value.strip()


def size_words(value: str) -> str:
    """`3 line(s), 80 character(s)`."""
    lines = value.count("\n") + 1
    return f"{lines:,} line(s), {len(value):,} character(s)"


def fields_text(fields: Iterable[CallField], indent: str = "     ") -> list[str]:
    """The fields as lines of plain text: `key: value`, or the key and its size, then the
    value line by line after `| `."""
    out = []
    for field in fields:
        value = field.value.text
        if inline(value):
            out.append(f"{indent}{field.key.text}: {value}")
        else:
            out.append(f"{indent}{field.key.text} ({size_words(value)}):")
            out += [f"{indent}  | {line}" for line in value.split("\n")]
    return out
