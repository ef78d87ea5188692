"""What an ACP client is shown of a tool call: its title, its whole input as content, and
the name of the "Always allow" option. The one home of what an approver reads over ACP.

Most clients show a permission ask's title, its content and its options' names, not its
raw input, and Zed renders the title and the content as markdown. So what runs must be
readable in those three, whatever the input holds:

- the content has the call's whole input, every field: a short one-line value inline as
  code, anything else in a fenced code block (markdown inside does not render), whole up
  to MAX_SHOWN_CHARS; a longer value shows its beginning and says its size, with a
  warning first. A Write's `content` that the diff shows whole is named there with its
  size. What the call does beyond its input (`ToolPermissionContext.shown`: the source a
  RunCell runs) follows, and why it is asked;
- characters that hide or reorder text are shown escaped (`visible.reveal`) with a warning
  naming them: `\\r`, U+2028, a vertical tab and a form feed among them, so a line break
  the client draws is one the shell or Python reads too;
- the title names the tool and the value that says most, as code, and says what it
  leaves out: more lines, more characters, more fields, characters shown escaped;
- the "Always allow" option names every rule it adds, each revealed, on one line;
- text shown as it is (`verbatim`: the trust question's hook commands and servers) is a
  fenced block, revealed, with the same warning.

Secrets are redacted first (sessions/redact.py), keys too, as on every channel out, and
every cut here is made on the redacted text (`redacted_head`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..common.visible import Revealed, reveal
from ..sessions.redact import redact, redact_text, redacted_head
from ..sessions.text.markdown import code_span, fence

__all__ = ["MAX_SHOWN_CHARS", "always_allow_name", "described", "label", "title", "verbatim"]

#: a value longer than this is shown by its beginning and its size
MAX_SHOWN_CHARS = 64 * 1024
_TITLE_CHARS = 120
_INLINE_CHARS = 120
_PATH_KEYS = ("file_path", "notebook_path", "path")
_WORD_KEYS = ("command", "pattern", "url", "query", "description", "code", "cell_id")
_LANGUAGES = {"command": "bash", "code": "python"}


@dataclass(frozen=True)
class _Field:
    key: Revealed
    value: Revealed
    language: str


def label(text: str) -> str:
    """`text` for one line of its own: hidden characters escaped, line breaks and tabs
    written as `\\n` and `\\t`."""
    return reveal(text).text.replace("\n", "\\n").replace("\t", "\\t")


def _fields(tool_input: Mapping[str, Any]) -> list[_Field]:
    """Each field of the (redacted) input, key and value as text, revealed."""
    found = []
    for key, value in tool_input.items():
        text = value if isinstance(value, str) else json.dumps(
            value, ensure_ascii=False, indent=2, default=str)
        language = _LANGUAGES.get(str(key), "") if isinstance(value, str) else "json"
        found.append(_Field(reveal(redact_text(str(key))), reveal(text), language))
    return found


def _redacted(tool_input: Mapping[str, Any]) -> dict[str, Any]:
    return dict(redact(dict(tool_input)))


def _count(number: int, word: str) -> str:
    return f"{number:,} {word}{'' if number == 1 else 's'}"


def _lines(text: str) -> list[str]:
    """`text`'s lines (on `\\n` only: other breaks are revealed first), without the blank
    ones around them."""
    lines = text.split("\n")
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    while len(lines) > 1 and not lines[0].strip():
        lines.pop(0)
    return lines


def title(name: str, tool_input: Mapping[str, Any]) -> str:
    """One line naming the call: the tool, the input that says most as code, and what the
    line leaves out, e.g. "Bash: `true` (+1 more line)"."""
    safe = _redacted(tool_input)
    fields = _fields(safe)
    key = next((k for k in (*_PATH_KEYS, *_WORD_KEYS)
                if isinstance(safe.get(k), str) and safe[k].strip()), None)
    more: list[str] = []
    shown = ""
    if key is not None:
        lines = _lines(reveal(safe[key]).text)
        head = lines[0].strip()
        if len(head) > _TITLE_CHARS:
            head, left = redacted_head(head, _TITLE_CHARS - 1)  # never cut before redacted
            more.append(f"+{left:,} more characters")
            head += "…"
        if len(lines) > 1:
            more.append(f"+{_count(len(lines) - 1, 'more line')}")
        if len(fields) > 1:
            more.append(f"+{_count(len(fields) - 1, 'more field')}")
        shown = (" " if key in _PATH_KEYS else ": ") + code_span(head)
    elif fields:
        more.append(_count(len(fields), "input field"))
    if reveal(name).found or any(f.key.found or f.value.found for f in fields):
        more.append("hidden characters shown escaped")
    return f"{label(name)}{shown}" + (f" ({', '.join(more)})" if more else "")


def described(name: str, tool_input: Mapping[str, Any], *,
              in_diff: Iterable[str] = (), shown: Mapping[str, str] | None = None,
              reason: str | None = None) -> str:
    """The call's whole input as markdown (see the module docstring). `in_diff`: keys
    whose value a diff sent with it shows whole; `shown`: what it does beyond its input,
    by label; `reason`: why it is asked."""
    fields = _fields(_redacted(tool_input))
    beyond = [(reveal(redact_text(str(k))), reveal(redact_text(str(v))))
              for k, v in (shown or {}).items()]
    diffed = set(in_diff)
    out = _warnings([reveal(name), *(p for f in fields for p in (f.key, f.value)),
                     *(p for pair in beyond for p in pair)],
                    folded=any(len(f.value.text) > MAX_SHOWN_CHARS for f in fields
                               if f.key.text not in diffed)
                    or any(len(text.text) > MAX_SHOWN_CHARS for _, text in beyond))
    if reason:
        out += [f"Asked because: {code_span(label(redact_text(reason)))}", ""]
    out.append(f"{code_span(label(name))}, its whole input ({_count(len(fields), 'field')}):"
               if fields else f"{code_span(label(name))}, with no input.")
    for field in fields:
        out += ["", *_field(field, in_diff=field.key.text in diffed)]
    for what, text in beyond:
        out += ["", f"What it runs beyond its input, {code_span(label(what.text))} "
                    f"({_size(text.text)}):", "", *_block(text.text, "")]
    return "\n".join(out)


def verbatim(text: str) -> str:
    """`text` shown as it is (a trust question's list of hook commands and servers): in a
    fenced block, redacted, hidden characters escaped with a warning first."""
    revealed = reveal(redact_text(text))
    return "\n".join([*_warnings([revealed], folded=False), *_block(revealed.text, "")])


def _warnings(parts: list[Revealed], *, folded: bool) -> list[str]:
    found: dict[str, tuple[str, str, str]] = {}
    for part in parts:
        for entry in part.found:
            found.setdefault(entry[0], entry)
    out = []
    if found:
        out += [f"⚠ This input {Revealed('', tuple(found.values())).warning()}.", ""]
    if folded:
        out += [f"⚠ A value is longer than {MAX_SHOWN_CHARS:,} characters: only its "
                "beginning is shown here, with its size. Read the whole raw input before "
                "allowing it.", ""]
    return out


def _size(text: str) -> str:
    return f"{_count(text.count(chr(10)) + 1, 'line')}, {_count(len(text), 'character')}"


def _field(field: _Field, *, in_diff: bool) -> list[str]:
    key, value = code_span(label(field.key.text)), field.value.text
    if not value:
        return [f"{key}: (empty)"]
    if in_diff:
        return [f"{key} ({_size(value)}): shown whole in the diff"]
    if len(value) <= _INLINE_CHARS and "\n" not in value and value == value.strip():
        return [f"{key}: {code_span(value)}"]
    return [f"{key} ({_size(value)}):", "", *_block(value, field.language)]


def _block(text: str, language: str) -> list[str]:
    if len(text) <= MAX_SHOWN_CHARS:
        return [fence(text, language)]
    head, left = redacted_head(text, MAX_SHOWN_CHARS)  # never cut before redacted
    breaks = _count(text.count("\n") - head.count("\n"), "more line break")
    return [fence(head, language), "",
            f"… and {_count(left, 'more character')} ({breaks}) not shown here."]


def always_allow_name(updates: Iterable[Any]) -> str | None:
    """The name of the "Always allow" option for `updates` (the permission updates it
    applies): every rule it adds, revealed and redacted, on one line; None when it applies
    nothing."""
    parts: list[str] = []
    for update in updates:
        rules = [label(redact_text(str(rule))) for rule in getattr(update, "rules", None) or []]
        kind, behavior = getattr(update, "type", ""), getattr(update, "behavior", None)
        if kind == "addRules" and (behavior or "allow") == "allow":
            parts += rules
        else:  # the engine offers none today; named as what it is, never left out
            what = rules or [str(getattr(update, "mode", None) or
                                 getattr(update, "directories", None) or "")]
            parts.append(label(redact_text(f"{kind} ({behavior or '-'}): {', '.join(what)}")))
    return f"Always allow {'; '.join(parts)}" if parts else None
