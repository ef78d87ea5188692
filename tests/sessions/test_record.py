"""The session record: building, storing as an output, loading back, size limits."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuxi_notebook._internal.sessions.record import (
    MAX_TOOL_RESULT_CHARS,
    RECORD_MIME,
    ApprovalRecord,
    SessionRecord,
    build_record,
    load_record,
    record_content,
    record_to_output,
)
from fuxi_notebook.errors import ConfigurationError

from .helpers import build_kwargs, result_message

VOLATILE = {"total_cost_usd": 0.0123, "duration_ms": 1234, "usage": {"input_tokens": 100}}


def test_round_trip_through_the_output_bundle():
    record = build_record(**build_kwargs())
    data, metadata = record_to_output(record, volatile=VOLATILE)

    assert set(data) == {RECORD_MIME, "text/plain"}
    assert metadata == {"fuxi": VOLATILE}
    # what nbformat would write and read back
    saved = json.loads(json.dumps(data))
    assert load_record(saved) == record
    assert load_record(saved[RECORD_MIME]) == record
    assert load_record(json.dumps(saved[RECORD_MIME])) == record


def test_record_holds_only_deterministic_fields():
    record = build_record(**build_kwargs())
    stored = json.dumps(record.model_dump(mode="json"))

    assert record.result.model_dump() == {
        "subtype": "success", "is_error": False, "num_turns": 4, "stop_reason": "end_turn",
        "result": "All tests pass.", "errors": None}
    for volatile in ("0.0123", "1234", "duration", "cost", "usage"):
        assert volatile not in stored
    assert record.approvals[1] == ApprovalRecord(
        tool_use_id="t2", tool_name="Edit", decision="always_allow", source="user",
        rule="Edit(src/**)")
    assert record.messages[0] == {"role": "user", "content": "Fix the failing test"}


def test_same_input_gives_byte_identical_json():
    first = record_to_output(build_record(**build_kwargs()), volatile={"t": 1})[0]
    second = record_to_output(build_record(**build_kwargs()), volatile={"t": 2})[0]
    assert json.dumps(first) == json.dumps(second)


def test_text_plain_is_one_deterministic_line():
    data, _ = record_to_output(build_record(**build_kwargs()), volatile={})
    assert data["text/plain"] == "fuxi session 3f2a1b9c… · cell c1 · 4 turns · success"
    one = build_record(**build_kwargs(result=result_message(num_turns=1)))
    assert record_to_output(one, volatile={})[0]["text/plain"].endswith("· 1 turn · success")


def test_options_become_json_safe_and_stable():
    def can_use_tool() -> None: ...

    options = {"cwd": Path("/work/project"), "can_use_tool": can_use_tool,
               "disallowed": {"Write", "Bash"}, "add_dirs": (Path("a"),), "obj": object()}
    record = build_record(**build_kwargs(options=options))

    assert record.options == {
        "cwd": "/work/project",
        "can_use_tool": "<function test_options_become_json_safe_and_stable.<locals>"
                        ".can_use_tool>",
        "disallowed": ["Bash", "Write"], "add_dirs": ["a"], "obj": "<object>"}


def test_record_is_frozen():
    record = build_record(**build_kwargs())
    with pytest.raises(ValueError, match="frozen"):
        record.cell_id = "other"


@pytest.mark.parametrize("version", [2, 0, None, "1"])
def test_unknown_version_is_rejected(version):
    data = build_record(**build_kwargs()).model_dump(mode="json")
    data["version"] = version
    with pytest.raises(ConfigurationError, match="unsupported fuxi session record version"):
        load_record(data)


def test_extra_fields_are_rejected():
    data = build_record(**build_kwargs()).model_dump(mode="json")
    data["total_cost_usd"] = 0.5
    with pytest.raises(ConfigurationError, match="total_cost_usd: Extra inputs"):
        load_record(data)
    data = build_record(**build_kwargs()).model_dump(mode="json")
    data["approvals"][0]["when"] = "now"
    with pytest.raises(ConfigurationError, match=r"approvals\.0\.when"):
        load_record(data)


@pytest.mark.parametrize("bad", [
    [],
    "{not json",
    {"version": 1},
    {**build_record(**build_kwargs()).model_dump(mode="json"),
     "messages": [{"role": "system", "content": "x"}]},
    {**build_record(**build_kwargs()).model_dump(mode="json"),
     "messages": [{"role": "user", "content": 3}]},
])
def test_invalid_shapes_are_rejected(bad):
    with pytest.raises(ConfigurationError, match="fuxi session record"):
        load_record(bad)


def test_invalid_approval_fails_clearly():
    approvals = [{"tool_use_id": "t1", "tool_name": "Bash", "decision": "maybe",
                  "source": "user"}]
    with pytest.raises(ConfigurationError, match=r"approvals\.0\.decision"):
        build_record(**build_kwargs(approvals=approvals))


def test_long_tool_result_is_truncated_with_head_and_tail():
    long = "HEAD" + "x" * 50_000 + "TAIL"
    messages = [{"role": "user", "content": "go"},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": long},
                    {"type": "tool_result", "tool_use_id": "t2",
                     "content": [{"type": "text", "text": long}]}]}]
    record = build_record(**build_kwargs(messages=messages))
    first, second = record.messages[1]["content"]

    for text in (first["content"], second["content"][0]["text"]):
        assert text.startswith("HEAD") and text.endswith("TAIL")
        assert "[… 30008 characters omitted from the fuxi session record …]" in text
        assert len(text) < MAX_TOOL_RESULT_CHARS + 100


def test_short_tool_result_and_prompt_are_kept_whole():
    prompt_text = "p" * 30_000
    messages = [{"role": "user", "content": prompt_text},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "y" * 20_000}]}]
    record = build_record(**build_kwargs(messages=messages, prompt=prompt_text))
    assert record.messages[1]["content"][0]["content"] == "y" * 20_000
    assert record.messages[0]["content"] == prompt_text


def _image(size: int) -> dict:
    data = base64.b64encode(b"\x89PNG" + b"\0" * (size - 4)).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": data}}


def test_big_images_become_placeholders_small_ones_stay():
    small, big = _image(10 * 1024), _image(300 * 1024)
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}, big]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": [small, big]}]}]
    record = build_record(**build_kwargs(messages=messages))

    assert record.messages[0]["content"][1] == {"type": "text",
                                                "text": "[image omitted: 300 KB]"}
    inner = record.messages[1]["content"][0]["content"]
    assert inner[0] == small
    assert inner[1] == {"type": "text", "text": "[image omitted: 300 KB]"}


def test_record_content_matches_what_the_record_stores():
    long = "sk-ant-api03-" + "a" * 30 + " " + "z" * 30_000
    stored = build_record(**build_kwargs(messages=[{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": long}]}]))
    assert record_content(long) == stored.messages[0]["content"][0]["content"]
    assert record_content(None) is None


def test_parent_links_cells_without_copying_them():
    first = build_record(**build_kwargs())
    second = build_record(**build_kwargs(
        cell_id="c2", parent="c1",
        messages=[{"role": "user", "content": "and now the docs"},
                  {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]))
    assert second.parent == "c1"
    assert len(second.messages) == 2
    assert isinstance(load_record(second.model_dump(mode="json")), SessionRecord)
    assert first.parent is None


def test_import_does_not_load_ipython_or_anthropic():
    code = ("import sys; "
            "from fuxi_notebook._internal.sessions.text.transcript import render_transcript; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('IPython', 'ipywidgets', 'anthropic', 'ipykernel')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
