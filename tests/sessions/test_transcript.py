"""Transcripts of a recorded run, as markdown and as plain text."""

from __future__ import annotations

import json

from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.sessions.text.transcript import (
    render_transcript,
    render_transcript_text,
)

from .helpers import build_kwargs, result_message

MAX_TURNS = result_message(subtype="error_max_turns", is_error=True, num_turns=4, result=None,
                           errors=["Reached the maximum number of turns (3)"])


def _record(**overrides):
    if "messages" in overrides:
        overrides.setdefault("approvals", [])
    return build_record(**build_kwargs(**overrides))


def _one_call(name, tool_input, result="ok", **extra):
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": name, "input": tool_input}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": result, **extra}]},
    ]


def test_markdown_transcript_of_a_realistic_run():
    md = render_transcript(_record(result=MAX_TURNS))

    assert md.startswith("> Fix the failing test\n\n")
    assert "<details><summary>Thinking</summary>\n\nRun the tests first.\n\n</details>" in md
    assert "\n\nLet me run the tests.\n\n" in md
    # each call is one folded line; its input, diff and result are one click away
    assert ("<details><summary><b>Bash</b> <code>npm test</code> (allowed by you) ✗ failed"
            "</summary>\n\n```\n1 failing: add()\n```\n\n</details>") in md
    assert ("<summary><b>Edit</b> <code>src/add.js</code> (always allowed by you, rule "
            "<code>Edit(src/**)</code>)</summary>") in md
    assert ("```diff\n--- a/src/add.js\n+++ b/src/add.js\n@@ -1 +1 @@\n"
            "-return a - b;\n+return a + b;\n```") in md
    assert ("<summary><b>Bash</b> <code>rm -rf node_modules</code> (denied by policy: "
            "deleting dependencies)</summary>" in md)
    assert md.count("<details>") == md.count("</details>") == 4  # thinking + 3 calls
    assert "**Bash**" not in md  # `<summary>` does not render markdown
    assert md.endswith("**Stopped** · the turn limit was reached · 3 turns\n"
                       "- Reached the maximum number of turns (3)")
    # the final text appears once; no costs or timings
    assert md.count("All tests pass.") == 1
    assert "0.0123" not in md and "1234" not in md


def test_successful_run_ends_with_done():
    assert render_transcript(_record()).endswith("\n\n**Done** · 4 turns")


def test_plain_text_transcript_says_the_same_without_markdown():
    text = render_transcript_text(_record(result=MAX_TURNS))

    assert "**Bash**" not in text and "```" not in text and "<details>" not in text
    assert text.startswith("> Fix the failing test\n\nThinking:\n  Run the tests first.")
    assert "Bash: npm test (allowed by you) ✗ failed\n  ⎿ 1 failing: add()" in text
    assert ("Edit: src/add.js (always allowed by you, rule Edit(src/**))\n"
            "    --- a/src/add.js\n    +++ b/src/add.js\n    @@ -1 +1 @@\n"
            "    -return a - b;\n    +return a + b;\n  ⎿ Edited src/add.js") in text
    assert "Bash: rm -rf node_modules (denied by policy: deleting dependencies)" in text
    assert text.endswith("Stopped · the turn limit was reached · 3 turns\n"
                         "- Reached the maximum number of turns (3)")


def test_transcript_is_deterministic():
    assert render_transcript(_record()) == render_transcript(_record())
    assert render_transcript_text(_record()) == render_transcript_text(_record())


def test_long_results_are_capped():
    record = _record(messages=_one_call("Bash", {"command": "seq 1000"}, result="x" * 5000))
    md = render_transcript(record, max_result_chars=100)
    assert f"```\n{'x' * 100}\n… (4900 more characters)\n```" in md
    assert "… (4900 more characters)" in render_transcript_text(record, max_result_chars=100)


def test_most_telling_input_field_per_tool():
    cases = {
        ("Read", '{"file_path": "a.py", "limit": 5}'): "<b>Read</b> <code>a.py</code>",
        ("Grep", '{"pattern": "def main", "path": "src"}'): "<b>Grep</b> <code>def main</code>",
        ("Python", '{"code": "import os\\nprint(os.getcwd())"}'):
            "<b>Python</b> <code>import os …</code>",
        ("Skill", '{"name": "pdf"}'): "<b>Skill</b> <code>pdf</code>",
        ("Custom", '{"n": 3, "flag": true}'):
            '<b>Custom</b> <code>{&quot;n&quot;:3,&quot;flag&quot;:true}</code>',
    }
    for (name, tool_input), header in cases.items():
        md = render_transcript(_record(messages=_one_call(name, json.loads(tool_input))))
        assert header in md, (name, md)


def test_multi_line_code_is_shown_in_full():
    record = _record(messages=_one_call("Python", {"code": "x = 1\nprint(x)"}, result="1"))
    md = render_transcript(record)
    assert ("<b>Python</b> <code>x = 1 …</code></summary>\n\n```python\nx = 1\nprint(x)\n```"
            "\n\n```\n1\n```\n\n</details>") in md


def test_write_shows_the_new_content_as_a_diff():
    record = _record(messages=_one_call("Write", {"file_path": "/tmp/n.txt",
                                                  "content": "one\ntwo\n"}))
    md = render_transcript(record)
    assert "```diff\n--- a/tmp/n.txt\n+++ b/tmp/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n```" in md


def test_backticks_in_inputs_and_results_do_not_break_markdown():
    record = _record(messages=_one_call("Bash", {"command": "echo `date`"},
                                        result="```\ninside\n```"))
    md = render_transcript(record)
    assert "<b>Bash</b> <code>echo `date`</code>" in md  # HTML: backticks are plain text
    assert "````\n```\ninside\n```\n````" in md


def test_call_without_result_and_rule_decisions():
    messages = _one_call("Bash", {"command": "sleep 100"})[:2]
    approvals = [{"tool_use_id": "t1", "tool_name": "Bash", "decision": "allow",
                  "source": "rule", "rule": "Bash(sleep:*)"},
                 {"tool_use_id": "gone", "tool_name": "Write", "decision": "deny",
                  "source": "replay", "reason": "recorded"}]
    record = _record(messages=messages, approvals=approvals)
    md = render_transcript(record)
    assert ("<b>Bash</b> <code>sleep 100</code> (allowed by rule <code>Bash(sleep:*)</code>)"
            "</summary>\n\n*(no result recorded)*") in md
    assert "> Write call not recorded: denied on replay: recorded" in md
    assert "Bash: sleep 100 (allowed by rule Bash(sleep:*))\n  ⎿ (no result recorded)" in (
        render_transcript_text(record))


def test_images_and_later_user_text_and_reminders():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nx\n"
                                                              "</system-reminder>"},
                                     {"type": "text", "text": "plot it"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Python", "input": {"code": "plot()"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "text", "text": "Figure"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "iVBORw0KGgo="}}]},
            {"type": "text", "text": "<system-reminder>\nhook\n</system-reminder>"},
            {"type": "text", "text": "[Request interrupted by user]"}]},
    ]
    md = render_transcript(_record(messages=messages, prompt="plot it"))
    assert "```\nFigure\n[PNG image, seen by the model]\n```" in md
    assert "> [Request interrupted by user]" in md
    assert "hook" not in md and "system-reminder" not in md


def test_hand_edited_records_still_render():
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
                    {"type": "tool_use", "id": "t2", "name": "Bash", "input": "ls"},
                    {"type": "server_tool_use", "id": "s1", "name": "web_search"},
                    "stray string",
                    {"type": "text", "text": "still here"}]}]
    md = render_transcript(_record(messages=messages))
    assert "still here" in md and "<b>Bash</b>" not in md


def _plots():
    """Two Python calls: the first drew two figures (shown as outputs), the second none."""
    ref = {"type": "image", "source": {"type": "fuxi_output", "sha256": "ab",
                                       "media_type": "image/png"}}
    return [
        {"role": "user", "content": "plot sales and costs"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Python", "input": {"code": "plot()"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "done"}, ref, ref]}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Python", "input": {"code": "x = 1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                      "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Both plotted."}]},
    ]


def test_segments_end_after_each_call_that_showed_outputs():
    from fuxi_notebook._internal.sessions.text.transcript import transcript_segments

    record = _record(messages=_plots(), shown_outputs={"t1": 3})
    first, last = transcript_segments(record)

    assert first.outputs_of == "t1" and last.outputs_of is None
    assert first.markdown.endswith("</details>") and "<code>plot()</code>" in first.markdown
    assert "Figures 1 and 2 and 1 more output below" in first.markdown
    assert "[Figure 1 (PNG), shown below]\n[Figure 2 (PNG), shown below]" in first.markdown
    assert "<code>x = 1</code>" in last.markdown and "Both plotted." in last.markdown
    # together the segments are the whole transcript
    assert f"{first.markdown}\n\n{last.markdown}" == render_transcript(record)
    assert f"{first.text}\n\n{last.text}" == render_transcript_text(record)


def test_without_outputs_there_is_one_segment_and_the_end_note_joins_the_last_line():
    from fuxi_notebook._internal.sessions.text.transcript import transcript_segments

    record = _record(messages=_plots())
    (only,) = transcript_segments(record, end_note="10 in / 5 out tokens · $0.0100 (estimate)")
    assert only.outputs_of is None and "below</summary>" not in only.markdown
    assert only.markdown.endswith("**Done** · 4 turns · 10 in / 5 out tokens · "
                                  "\\\\$0.0100 (estimate)")  # a dollar is not math
    assert only.text.endswith("Done · 4 turns · 10 in / 5 out tokens · $0.0100 (estimate)")
