"""Issue 35 (what an approver is shown): the notebook's approval card shows the call's whole
input, every field, as the consent card, the terminal's question and an ACP ask do: a
field the tool's own detail (its code, its diff) does not show follows it, revealed."""

from __future__ import annotations

import html
import re

import pytest

from fuxi_notebook._internal.notebook.display.call_detail import describe_call


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Bash", {"command": "ls", "description": "list\u202efiles", "timeout": 5000}),
    ("Python", {"code": "x = 1", "timeout": 30}),
    ("InsertCell", {"code": "x = 1", "after": "c7"}),
    ("Edit", {"file_path": "/srv/a.py", "old_string": "a", "new_string": "b",
              "mode": "regex"}),
    ("Write", {"file_path": "/srv/new.md", "content": "hi", "append": True}),
])
def test_every_field_the_detail_does_not_show_follows_it(tool, tool_input):
    shown = describe_call(tool, tool_input)
    text = _text(shown)
    detailed = {"command", "code", "file_path", "old_string", "new_string", "content"}
    for key, value in tool_input.items():
        if key not in detailed:
            assert f'"{key}"' in text, (key, text)
            written = value if isinstance(value, str) else str(value).lower()
            assert written.replace("\u202e", "\\u202e") in text, (value, text)
    assert "\u202e" not in text
    assert "⚠ This input contains" in text or "\u202e" not in str(tool_input)


def test_a_call_whose_detail_shows_every_field_lists_nothing_more():
    assert "other fields" not in describe_call("Bash", {"command": "ls"})
    assert "other fields" not in describe_call("Inspect", {"name": "df"})  # JSON: all
