"""What an approval card shows of a call: everything that is approved, formatted to read.

Code (Python, shell commands, a cell InsertCell would add) is highlighted; Edit is a diff of
the change; Write says whether it creates a file or overwrites one, with the resolved path
and a diff against the file as it is now; anything else is its input as indented JSON.
Any other field of the input follows as JSON (a Bash call's `description`, `timeout`), so
every field is shown. What the call's tool shows it would do beyond its input
(`Declaration.shown`: RunCell's cell source, which is what runs) follows, whole.
Characters that do not show or that reorder text are shown escaped (`visible.reveal`).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from ...common.visible import reveal
from ...sessions.text.cell_calls import line_diff

__all__ = ["describe_call"]

_PRE = "<pre style='white-space:pre-wrap;max-height:24em;overflow:auto;margin:0.3em 0'>"
_MAX_COMPARED_BYTES = 1_000_000


def describe_call(tool_name: str, tool_input: dict[str, Any], cwd: Path | None = None,
                  shown: dict[str, str] | None = None) -> str:
    """The full detail of a call as HTML (`cwd` resolves relative paths), with what it
    would do beyond its input (`shown`, see the module docstring)."""
    beyond = "".join(f"<div>{html.escape(reveal(key).text)}, as it is now (this is what "
                     f"runs):</div>{_code(text, _SHOWN_LANGUAGES.get(key, 'text'))}"
                     for key, text in (shown or {}).items())
    return _input_detail(tool_name, tool_input, cwd) + _other_fields(tool_name, tool_input) \
        + beyond


#: the fields a tool's own detail shows (a diff, highlighted code); any other field of its
#: input follows as JSON (a tool without an entry shows its whole input as JSON)
_DETAILED = {"Bash": frozenset({"command"}), "Python": frozenset({"code"}),
             "InsertCell": frozenset({"code"}),
             "Edit": frozenset({"file_path", "old_string", "new_string", "replace_all"}),
             "EditCell": frozenset({"cell_id", "old_string", "new_string"}),
             "Write": frozenset({"file_path", "content"})}


def _other_fields(tool_name: str, tool_input: dict[str, Any]) -> str:
    """The fields the tool's detail does not show (a Bash call's `description` and
    `timeout`...), so the card shows the whole input, every field."""
    detailed = _DETAILED.get(tool_name)
    rest = {k: v for k, v in tool_input.items() if detailed is not None and k not in detailed}
    if not rest:
        return ""
    return ("<div>Its other fields:</div>"
            + _code(json.dumps(rest, indent=2, ensure_ascii=False, default=str), "json"))


#: how a `shown` value is highlighted, by its label
_SHOWN_LANGUAGES = {"source": "python"}


def _input_detail(tool_name: str, tool_input: dict[str, Any], cwd: Path | None) -> str:
    if tool_name == "Bash":
        return _code(str(tool_input.get("command", "")), "bash")
    if tool_name in ("Python", "InsertCell"):
        return _code(str(tool_input.get("code", "")), "python")
    if tool_name == "Edit":
        return _edit(tool_input, cwd)
    if tool_name == "EditCell":
        return _edit_cell(tool_input)
    if tool_name == "Write":
        return _write(tool_input, cwd)
    return _code(json.dumps(tool_input, indent=2, ensure_ascii=False), "json")


def _code(text: str, language: str) -> str:
    """Highlighted with inline styles (the card is a widget: no page stylesheet); text
    that hides or reorders characters is shown escaped, with a warning above it."""
    revealed = reveal(text)
    text = revealed.text
    warning = (f"<div><b>⚠ This input {html.escape(revealed.warning())}.</b></div>"
               if revealed.found else "")
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        body = highlight(text, get_lexer_by_name(language),
                         HtmlFormatter(nowrap=True, noclasses=True)).rstrip("\n")
    except Exception:  # no pygments, or a lexer missing: plain text is still complete
        body = html.escape(text)
    return f"{warning}{_PRE}{body}</pre>"


def _resolved(path: object, cwd: Path | None) -> Path | None:
    if not isinstance(path, str) or not path:
        return None
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else (cwd or Path.cwd()) / candidate


def _edit(tool_input: dict[str, Any], cwd: Path | None) -> str:
    target = _resolved(tool_input.get("file_path"), cwd)
    old = str(tool_input.get("old_string", ""))
    new = str(tool_input.get("new_string", ""))
    every = " (every occurrence)" if tool_input.get("replace_all") else ""
    return (f"<div>edit <code>{html.escape(reveal(str(target)).text)}</code>{every}</div>"
            + _code(_diff(old, new), "diff"))


def _edit_cell(tool_input: dict[str, Any]) -> str:
    cell = html.escape(reveal(str(tool_input.get("cell_id", ""))).text)
    old = str(tool_input.get("old_string", ""))
    new = str(tool_input.get("new_string", ""))
    what = "replace the source of" if not old else "edit"
    return f"<div>{what} cell <code>{cell}</code></div>" + _code(_diff(old, new), "diff")


def _write(tool_input: dict[str, Any], cwd: Path | None) -> str:
    target = _resolved(tool_input.get("file_path"), cwd)
    content = str(tool_input.get("content", ""))
    current = _current_text(target)
    if target is None or not target.exists():
        head, shown = "new file", _code(content, "text")
    elif current is None:
        head, shown = "overwrite (the current file is binary or too large to compare)", \
            _code(content, "text")
    else:
        head, shown = "overwrite", _code(_diff(current, content) or "(no change)", "diff")
    return (f"<div><b>{head}</b> <code>{html.escape(reveal(str(target)).text)}</code></div>"
            f"{shown}")


def _current_text(target: Path | None) -> str | None:
    try:
        if target is None or not target.is_file() or (
                target.stat().st_size > _MAX_COMPARED_BYTES):
            return None
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _diff(old: str, new: str) -> str:
    """Line by line on `\n` only, hidden characters revealed first: `str.splitlines` would
    also break at `\r`, U+2028 and others, and a break the card draws must be a real one."""
    return line_diff(reveal(old).text, reveal(new).text)
