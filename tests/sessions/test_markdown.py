"""Issue 9, item 1: dollar amounts in model text must not become LaTeX."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.sessions.text.markdown import (
    _code_spans,
    code_span,
    escape_math,
    fence,
)

E = "\\\\$"  # the escape that JupyterLab shows as a literal dollar (see the module)


@pytest.mark.parametrize(("text", "expected"), [
    ("North (≈ $94k), then South ($83k)", f"North (≈ {E}94k), then South ({E}83k)"),
    ("$$x^2$$ and $y$", f"{E}{E}x^2{E}{E} and {E}y{E}"),
    ("in code `$HOME` stays", "in code `$HOME` stays"),
    ("``a ` $b`` but $c", f"``a ` $b`` but {E}c"),
    ("```bash\necho $PATH\n```\ncosts $5", f"```bash\necho $PATH\n```\ncosts {E}5"),
    ("~~~\n$x\n~~~", "~~~\n$x\n~~~"),
    ("**bold** and [a link](http://x.org) stay", "**bold** and [a link](http://x.org) stay"),
])
def test_escapes_math_outside_code(text, expected):
    assert escape_math(text) == expected


def _outside_code(text: str) -> str:
    """The parts of `text` a renderer could read as math (not in fences or code spans)."""
    kept, fenced = [], False
    for line in text.split("\n"):
        if re.match(r" {0,3}(`{3,}|~{3,})", line):
            fenced = not fenced
            continue
        if not fenced:
            spans = _code_spans(line)
            cut = 0
            for start, end in spans:
                kept.append(line[cut:start])
                cut = end
            kept.append(line[cut:])
    return "\n".join(kept)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="$`\\ab \n~()[]", max_size=40))
@example("`$`$")
@example("```\n$\n")
def test_every_dollar_outside_code_is_escaped_and_nothing_else_changes(text):
    escaped = escape_math(text)
    assert not re.search(r"(?<!\\\\)\$", _outside_code(escaped))
    assert escaped.replace(E, "$") == text  # only escapes were added


def test_code_helpers_survive_backticks():
    assert code_span("a`b") == "``a`b``"
    assert fence("```\nx\n```").startswith("````\n")
