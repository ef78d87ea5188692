"""Issue 9, item 8: approval cards show what is approved, formatted to read."""

from __future__ import annotations

import html
import re

import pytest

from fuxi_notebook._internal.notebook.display.call_detail import describe_call


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_insert_cell_shows_highlighted_code_not_json():
    shown = describe_call("InsertCell", {"code": "sales.plot(x='month')\nplt.show()"})
    assert "<span style=" in shown  # highlighted
    assert '"code"' not in _text(shown) and "{" not in _text(shown)
    assert _text(shown) == "sales.plot(x='month')\nplt.show()"  # all of it, exactly


def test_write_over_an_existing_file_is_a_diff_with_the_resolved_path(tmp_path):
    (tmp_path / "report.md").write_text("# Sales\nNorth leads\n")
    shown = describe_call("Write", {"file_path": "report.md",
                                    "content": "# Sales\nSouth leads\n"}, tmp_path)
    text = _text(shown)
    assert text.startswith(f"overwrite {tmp_path / 'report.md'}")
    assert "-North leads" in text and "+South leads" in text and " # Sales" in text


def test_write_of_a_new_file_says_so(tmp_path):
    text = _text(describe_call("Write", {"file_path": "new.md", "content": "hello"}, tmp_path))
    assert text == f"new file {tmp_path / 'new.md'}hello"


def test_edit_is_a_diff_and_other_tools_are_json(tmp_path):
    text = _text(describe_call("Edit", {"file_path": "/srv/a.py", "old_string": "x = 1",
                                        "new_string": "x = 2", "replace_all": True}))
    assert text.startswith("edit /srv/a.py (every occurrence)")
    assert "-x = 1" in text and "+x = 2" in text
    assert '"name": "df"' in _text(describe_call("Inspect", {"name": "df"}))


def test_bash_shows_the_whole_command():
    command = "touch a && echo 'a long command that must be shown whole' && echo end"
    assert _text(describe_call("Bash", {"command": command})) == command


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\u2066", "\x1b", "\u2028"])
def test_the_approval_card_shows_hidden_characters_escaped(tmp_path, char):
    """What the user approves is what runs: a character that does not show or that reorders
    text is written as \\uXXXX, with a warning, in code, diffs and paths alike."""
    cards = [describe_call("Bash", {"command": f"ls {char}-la"}),
             describe_call("Python", {"code": f"print('{char}')"}),
             describe_call("Edit", {"file_path": f"a{char}.py", "old_string": f"x{char}",
                                    "new_string": "y"}, tmp_path),
             describe_call("Write", {"file_path": "b.py", "content": f"z{char}"}, tmp_path)]
    for card in cards:
        text = _text(card)
        assert char not in text and f"\\u{ord(char):04x}" in text
    assert all("do not show or that reorder text" in card for card in cards[:2])
