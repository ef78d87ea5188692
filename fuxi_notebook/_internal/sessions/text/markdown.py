"""Model text shown as markdown, without it turning into math.

JupyterLab and Notebook 7 read `$...$` in markdown output as LaTeX, so "North (≈ $94k),
then South ($83k)" renders as italic math. Text we did not write (the model's, a tool's,
a user's reason) is escaped before it becomes markdown, outside code spans and fenced
code blocks (where nothing is typeset and a backslash would show).

The escape is `\\\\$` (two backslashes), measured in JupyterLab 4.6 in a real browser:
the markdown parser turns `\\$` into a bare `$` before MathJax scans the page, so a
single backslash still pairs up as math; `\\\\$` reaches MathJax as `\\$`, which it shows as
a literal dollar. HTML entities and `<span>$</span>` are typeset as math too. Everything
else, real markdown included, is left as it is.
"""

from __future__ import annotations

import re

__all__ = ["code_span", "escape_math", "fence", "open_fence", "quote"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def escape_math(text: str) -> str:
    """`text` with whatever a markdown renderer would read as math made literal."""
    if "$" not in text:
        return text
    lines = text.split("\n")
    for index in _outside_fences(lines)[0]:
        lines[index] = _escape_line(lines[index])
    return "\n".join(lines)


def open_fence(text: str) -> str | None:
    """The line that opened the fenced code block `text` ends inside (None: it ends
    outside any), read as `escape_math` reads fences: a text cut there can close the block
    and the rest reopen it."""
    if "`" not in text and "~" not in text:
        return None
    return _outside_fences(text.split("\n"))[1]


def _outside_fences(lines: list[str]) -> tuple[list[int], str | None]:
    """The indexes of the lines outside fenced code blocks (fence lines left out), and the
    line that opened the block the lines end inside (None: they end outside any)."""
    outside: list[int] = []
    opener: str | None = None
    mark = ""
    for index, line in enumerate(lines):
        opened = _FENCE.match(line)
        if opener is not None:
            if opened and opened.group(1)[0] == mark[0] and len(opened.group(1)) >= len(
                    mark) and not line.strip()[len(opened.group(1)):].strip():
                opener = None
        elif opened:
            opener, mark = line.strip(), opened.group(1)
        else:
            outside.append(index)
    return outside, opener


def _escape_line(line: str) -> str:
    """Escape outside inline code spans (a run of N backticks up to the next run of N)."""
    parts: list[str] = []
    position = 0
    for span in _code_spans(line):
        parts.append(_escape_plain(line[position:span[0]]))
        parts.append(line[span[0]:span[1]])
        position = span[1]
    parts.append(_escape_plain(line[position:]))
    return "".join(parts)


def _code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each code span: a run of N backticks up to the next run of exactly
    N; a run without a partner is literal backticks (CommonMark's rule)."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", line)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        partner = next((j for j in range(index + 1, len(runs))
                        if runs[j][1] - runs[j][0] == end - start), None)
        if partner is None:
            index += 1
            continue
        spans.append((start, runs[partner][1]))
        index = partner + 1
    return spans


def _escape_plain(text: str) -> str:
    return text.replace("$", "\\\\$")


def quote(text: str) -> str:
    """A blockquote of `text`: every line starts with `>` (a line without it would be a
    lazy continuation, run into the line above)."""
    return "\n".join(f"> {line}" if line else ">" for line in text.strip().splitlines()) or ">"


def code_span(text: str) -> str:
    """Inline code that survives backticks inside `text`."""
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that survives fences inside `text`."""
    ticks = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for c in text:
        run = run + 1 if c == char else 0
        longest = max(longest, run)
    return longest
