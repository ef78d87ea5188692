"""How a transcript says what happened to each call and how the cell ended, and how the
session listing names cells: denied reads as denied, interrupted as interrupted, a
question as a question (by the tool's declared kind), a replay as a replay."""

from __future__ import annotations

from fuxi_notebook._internal.agent.loop.tool_calls import interrupted_results, not_executed
from fuxi_notebook._internal.sessions.listing import format_sessions, short_ids, summarize
from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.sessions.text.markdown import quote
from fuxi_notebook._internal.sessions.text.transcript import (
    OUTCOME_MARKS,
    call_outcome,
    interrupted_result,
    render_transcript,
    render_transcript_text,
    transcript_segments,
)

from .helpers import build_kwargs, result_message

QUESTION = {"questions": [{"question": "Which format?", "header": "Format",
                           "multiSelect": False,
                           "options": [{"label": "CSV", "description": "plain"},
                                       {"label": "Parquet", "description": "columnar"}]}]}
INTERRUPTED = result_message(subtype="error_during_execution", is_error=True, num_turns=1,
                             result=None, errors=["Interrupted by the user."])


def _calls(*calls: tuple[str, str, dict, str, bool]) -> list[dict]:
    """A prompt, then one response with these calls (id, name, input) and their results."""
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp, _, _ in calls]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": out, "is_error": err}
            for i, _, _, out, err in calls]},
    ]


def _record(messages, approvals=(), **overrides):
    return build_record(**build_kwargs(messages=messages, approvals=list(approvals),
                                       **overrides))


# -- finding 1: denied, interrupted and failed calls say which they are ----------------------

def test_an_interrupted_call_reads_as_interrupted_not_failed():
    """Finding 1: a call stopped by an interrupt showed "✗ failed" in the transcript."""
    run_started = {"id": "t1", "name": "Bash", "input": {"command": "sleep 30"}}
    never_ran = {"id": "t2", "name": "Bash", "input": {"command": "echo after"}}
    started = interrupted_results(type("Run", (), {"calls_started": {"t1": (0.0, "tick")}})(),
                                  [run_started])[0]["content"]
    (waiting,) = not_executed([never_ran], "interrupted by the user")
    record = _record(_calls(("t1", "Bash", run_started["input"], started, True),
                            ("t2", "Bash", never_ran["input"], waiting["content"], True),
                            ("t3", "Bash", {"command": "false"}, "Exit code 1", True)),
                     result=INTERRUPTED)
    md, text = render_transcript(record), render_transcript_text(record)
    assert "<code>sleep 30</code> ✗ interrupted</summary>" in md
    assert "<code>echo after</code> ✗ interrupted</summary>" in md
    assert "<code>false</code> ✗ failed</summary>" in md  # a real failure stays one
    assert "Bash: sleep 30 ✗ interrupted\n" in text
    assert "Bash: echo after ✗ interrupted\n" in text and "Bash: false ✗ failed\n" in text


def test_a_denied_call_reads_as_denied_in_both_renderings():
    record = _record(_calls(("t1", "Bash", {"command": "rm -rf out"},
                             "The user denied this Bash call. Their reason: no", True)),
                     [{"tool_use_id": "t1", "tool_name": "Bash", "decision": "deny",
                       "source": "user", "reason": "no"}])
    md, text = render_transcript(record), render_transcript_text(record)
    assert "<code>rm -rf out</code> (denied by you: no)</summary>" in md
    assert "Bash: rm -rf out (denied by you: no)\n" in text
    assert "failed" not in md and "failed" not in text


def test_call_outcome_is_one_definition():
    assert call_outcome(is_error=False, result="ok") == "ok"
    assert call_outcome(is_error=True, result="Exit code 1") == "failed"
    assert call_outcome(is_error=True, result="denied", denied_by="policy") == "denied"
    assert call_outcome(is_error=True, result="skipped", denied_by="user", kind="ask") == \
        "skipped"
    assert call_outcome(is_error=True, result="Not executed: the run was interrupted.") == \
        "interrupted"
    assert interrupted_result("Interrupted by the user after 1.0 s. The call had started")
    assert not interrupted_result(None)
    assert set(OUTCOME_MARKS) == {"ok", "failed", "denied", "skipped", "interrupted"}


# -- finding 2: a question is a question, by the tool's declared kind ------------------------

def test_a_question_answered_or_skipped_reads_so():
    answered = {**QUESTION, "answers": {"Which format?": "Parquet"}}
    record = _record(_calls(("t1", "AskUserQuestion", answered, '"Which format?" = "Parquet"',
                             False)),
                     [{"tool_use_id": "t1", "tool_name": "AskUserQuestion", "decision": "allow",
                       "source": "user", "answers": {"Which format?": "Parquet"}}],
                     kinds={"AskUserQuestion": "ask"})
    assert "Which format? (answered by you)" in render_transcript_text(record)
    skipped = _record(_calls(("t1", "AskUserQuestion", QUESTION, "The user skipped it.", True)),
                      [{"tool_use_id": "t1", "tool_name": "AskUserQuestion", "decision": "deny",
                        "source": "user", "reason": "The user skipped the question."}],
                      kinds={"AskUserQuestion": "ask"})
    text = render_transcript_text(skipped)
    assert "(skipped by you: The user skipped the question.)" in text
    assert "denied" not in text.split("\n\n")[1]


def test_a_question_is_known_by_its_declared_kind_not_its_name():
    """A tool of the kernel's that declares `ask` is shown as a question too; a tool
    called AskUserQuestion that declares something else is not."""
    record = _record(_calls(("t1", "Survey", QUESTION, "CSV", False)),
                     [{"tool_use_id": "t1", "tool_name": "Survey", "decision": "allow",
                       "source": "user"}], kinds={"Survey": "ask"})
    text = render_transcript_text(record)
    assert "Survey: Which format? (answered by you)" in text
    assert "Which format? [CSV / Parquet]" in text  # its question and options
    other = _record(_calls(("t1", "AskUserQuestion", QUESTION, "ran", False)),
                    kinds={"AskUserQuestion": "execute"})
    assert "AskUserQuestion: {" in render_transcript_text(other)


# -- finding 3: an interrupt's reason is said once in the cell -------------------------------

def test_the_cells_own_interrupt_line_is_not_repeated_at_the_end():
    record = _record(_calls(("t1", "Bash", {"command": "ls"}, "a", False)), result=INTERRUPTED)
    (whole,) = transcript_segments(record)
    assert whole.text.endswith("Stopped · 1 turn\n- Interrupted by the user.")  # elsewhere
    (told,) = transcript_segments(record, told=["Interrupted by the user."])
    assert told.text.endswith("Stopped · 1 turn") and "Interrupted by the user" not in told.text
    assert told.markdown.endswith("**Stopped** · 1 turn")


# -- finding 4: a blockquote quotes every line -----------------------------------------------

def test_a_quote_marks_every_line():
    assert quote("one\n\ntwo\nthree") == "> one\n>\n> two\n> three"
    record = _record(_calls(("t1", "Bash", {"command": "ls"}, "a", False)),
                     prompt="first line\n\nsecond line")
    assert render_transcript(record).startswith("> first line\n>\n> second line\n\n")


# -- finding 5: a replay's end line says it was replayed -------------------------------------

def test_a_replayed_end_line_says_so_with_the_recorded_numbers():
    record = _record(_calls(("t1", "Bash", {"command": "ls"}, "a", False)))
    note = "13,229 in / 82 out tokens · $0.0139 (estimate)"
    (live,) = transcript_segments(record, end_note=note)
    (replayed,) = transcript_segments(record, end_note=note, replayed=True)
    assert live.text.endswith(f"Done · 4 turns · {note}")
    assert replayed.text.endswith(f"Replayed · 0 requests · recorded: 4 turns · {note}")
    assert replayed.markdown.endswith("**Replayed** · 0 requests · recorded: 4 turns · "
                                      "13,229 in / 82 out tokens · \\\\$0.0139 (estimate)")
    stopped = _record(_calls(("t1", "Bash", {"command": "ls"}, "a", False)),
                      result=result_message(subtype="error_max_turns", is_error=True,
                                            num_turns=4, errors=["Reached the limit (3)"]))
    (again,) = transcript_segments(stopped, replayed=True)
    assert again.text.endswith("Replayed · 0 requests · recorded: stopped · the turn limit "
                               "was reached · 3 turns\n- Reached the limit (3)")


# -- finding 6: `%fuxi sessions` names cells briefly, and a fork only when it is one ---------

def _session(session_id, *cells, parent=None):
    records = []
    for index, cell in enumerate(cells):
        records.append(build_record(**build_kwargs(
            cell_id=cell, session_id=session_id,
            parent=parent if index == 0 else cells[index - 1])))
    return session_id, records


def test_long_cell_ids_are_shown_as_short_unique_prefixes():
    first = "4e8b1c2d-0f3a-4b5c-9d6e-7f8091a2b3c4"
    second = "4e8b1c2d-9999-4b5c-9d6e-7f8091a2b3c4"  # the same first 8 characters
    third = "a1b2c3d4-1111-4222-8333-944455556666"
    table = format_sessions(summarize([_session("3f2a1b9c-s1", first, second, third)], {}))
    row = table.splitlines()[2]
    assert "| 4e8b1c2d-0, 4e8b1c2d-9, a1b2c3d4 |" in row
    assert first not in table
    assert short_ids(["cell-fork", "s-07"]) == {"cell-fork": "cell-fork", "s-07": "s-07"}
    assert short_ids(["abcdefgh", "abcdefgh-1234-5678-90ab-cdef"]) == {
        "abcdefgh": "abcdefgh", "abcdefgh-1234-5678-90ab-cdef": "abcdefgh-"}


def test_a_session_continuing_a_lost_cell_is_not_called_a_fork():
    """After a cell was deleted, the session of the cell below it was "(fork of …)"."""
    lost = "0c0c0c0c-dead-4bee-8000-000000000001"
    continuing = _session("3f2a1b9c-s1", "c2", "c3", parent=lost)  # its parent is gone
    fork = _session("7a7a7a7a-s2", "c4", parent="c2")  # another session's cell: a fork
    table = format_sessions(summarize([continuing, fork], {}))
    lines = table.splitlines()
    assert "| c2, c3 (continues cell 0c0c0c0c, no longer in the notebook) |" in lines[2]
    assert "fork" not in lines[2]
    assert "| c4 (fork of c2) |" in lines[3]
    (summary, _) = summarize([continuing, fork], {})
    assert summary.forked_from is None and summary.continues_missing == lost
