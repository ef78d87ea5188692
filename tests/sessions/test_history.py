"""Rebuilding a conversation from cell records: joining, figure references, validity."""

from __future__ import annotations

import base64

import pytest

from fuxi_notebook._internal.sessions.history import (
    check_history,
    extend_history,
    images_in_outputs,
    join_records,
)
from fuxi_notebook._internal.sessions.record import OUTPUT_REF, build_record, image_digest
from fuxi_notebook.errors import ConfigurationError

from .helpers import build_kwargs, result_message

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()


def _record(cell_id: str, parent: str | None, messages: list[dict], **kw):
    return build_record(**build_kwargs(cell_id=cell_id, parent=parent, messages=messages,
                                       approvals=[], **kw))


def _call(tool_id: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}


def _result(tool_id: str, text: str = "a.py") -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text}


def test_records_join_into_the_conversation_in_order():
    first = _record("c1", None, [{"role": "user", "content": "one"},
                                 {"role": "assistant", "content": [_call("t1")]},
                                 {"role": "user", "content": [_result("t1")]},
                                 {"role": "assistant", "content": "done one"}])
    second = _record("c2", "c1", [{"role": "user", "content": "two"},
                                  {"role": "assistant", "content": "done two"}])
    history, pending = join_records([first, second])
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "user",
                                           "assistant"]
    assert history[-2]["content"] == "two" and pending == []


def test_results_owed_at_the_end_of_a_cell_are_carried_once():
    # cell 1 stopped at max turns: its record ends with the owed results; cell 2's
    # prompt message carried them again together with its prompt
    first = _record("c1", None, [{"role": "user", "content": "one"},
                                 {"role": "assistant", "content": [_call("t1")]},
                                 {"role": "user", "content": [_result("t1", "Not executed")]}])
    second = _record("c2", "c1", [{"role": "user", "content": [_result("t1", "Not executed"),
                                                               {"type": "text",
                                                                "text": "two"}]},
                                  {"role": "assistant", "content": "ok"}])
    history, pending = join_records([first])
    assert pending == [_result("t1", "Not executed")] and history[-1]["role"] == "assistant"
    history, pending = join_records([first, second])
    assert check_history(history) is None and pending == []
    assert sum(1 for m in history for b in m["content"] if isinstance(b, dict)
               and b.get("type") == "tool_result") == 1


def test_a_tampered_chain_is_a_clear_error_not_an_invalid_request():
    broken = _record("c1", None, [{"role": "user", "content": "one"},
                                  {"role": "assistant", "content": [_call("t1")]},
                                  {"role": "user", "content": [_result("t9")]},
                                  {"role": "assistant", "content": "x"}])
    with pytest.raises(ConfigurationError, match="without `tool_result`"):
        join_records([broken])
    assert "roles must alternate" in check_history(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
         {"role": "assistant", "content": "c"}])
    assert "first message must use the 'user' role" in check_history(
        [{"role": "assistant", "content": "b"}])
    # a call without an id, and one owed a result that never came
    assert "without `tool_result`" in check_history(
        [{"role": "user", "content": "a"},
         {"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": {}}]}])


def test_a_shown_figure_is_stored_once_and_restored_from_the_outputs():
    messages = [{"role": "user", "content": "plot"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                   "name": "Python", "input": {"code": "p"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": [{"type": "text", "text": "ok"},
                                                          {"type": "image", "source": {
                                                              "type": "base64",
                                                              "media_type": "image/png",
                                                              "data": PNG}}]}]},
                {"role": "assistant", "content": "a line going up"}]
    record = _record("c1", None, messages, shown_images={image_digest(PNG)})
    stored = record.messages[2]["content"][0]["content"][1]
    assert stored["source"] == {"type": OUTPUT_REF, "sha256": image_digest(PNG),
                                "media_type": "image/png"}
    assert PNG not in record.model_dump_json()
    outputs = {"c1": [{"output_type": "display_data",
                       "data": {"image/png": PNG[:40] + "\n" + PNG[40:]}}]}
    history, _ = join_records([record], outputs)
    assert history[2]["content"][0]["content"][1]["source"]["data"] == PNG
    history, _ = join_records([record], {})  # the output is gone: a note, still valid
    assert "no longer saved" in history[2]["content"][0]["content"][1]["text"]
    kept = _record("c1", None, messages)  # not shown as an output: stored in the record
    assert kept.messages[2]["content"][0]["content"][1]["source"]["data"] == PNG


def test_extend_history_does_not_change_its_inputs():
    history = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "1"}]
    record = _record("c2", "c1", [{"role": "user", "content": "two"},
                                  {"role": "assistant", "content": "2"}],
                     result=result_message(num_turns=1))
    joined, pending = extend_history(history, [], record)
    assert len(history) == 2 and len(joined) == 4 and pending == []
    assert images_in_outputs([{"data": {"image/jpeg": ["ab", "cd"]}}]) == {
        image_digest("abcd"): ("image/jpeg", "abcd")}
