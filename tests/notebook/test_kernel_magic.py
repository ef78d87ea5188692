"""`%%fuxi` in a real ipykernel, talking to the fake Messages API through ANTHROPIC_BASE_URL."""

from __future__ import annotations

import json
import time

import pytest

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import Fault, Turn, text, tool_use

from .kernel_harness import KernelHarness, record_of, wait_until

#: A question with two options (the buttons a person would click).
FORMAT_QUESTION = {"questions": [{"question": "Which format?", "header": "Format",
                                  "multiSelect": False,
                                  "options": [{"label": "CSV", "description": "plain"},
                                              {"label": "Parquet",
                                               "description": "columnar"}]}]}


def test_load_ext_is_fast_and_help_shows_usage(tmp_path):
    fresh_kernel = KernelHarness(cwd=str(tmp_path), env={"FUXI_BLOCK_REAL_API": "1"})
    try:
        timing = fresh_kernel.run(
            "import time, sys\nt = time.perf_counter()\n%load_ext fuxi_notebook\n"
            "print(time.perf_counter() - t)")
        assert timing.status == "ok", timing.messages
        # PRODUCT.md budget: the agent (and anthropic, ~1.5 s) load in the background
        assert float(timing.stdout.split()[0]) < 0.3
        helped = fresh_kernel.run("%%fuxi?\n")
        text_out = json.dumps(helped.reply["content"].get("payload"))  # help goes to the pager
        assert "--max-budget-usd" in text_out and "Examples" in text_out
    finally:
        fresh_kernel.close()


@pytest.mark.parametrize(("line", "needle"), [
    ("--max-turns 0", "positive integer"),
    ("--permission-mode yolo", "invalid choice"),
    ("--teleport", "unknown option"),
    ("--allowed-tools 'Bash(('", "unbalanced"),
    ("--allowed-tools 'Read(,'", "unbalanced"),
    ("--output-schema nothing_here", "is none of these"),
    ("--output-schema '{\"type\": \"object\"'", "invalid JSON"),
    ("--output-schema '" + "[" * 5000 + "'", "nested too deeply"),  # issue 18, finding 10
    ("--output-schema '" + '{"a":' * 5000 + "1" + "}" * 5000 + "'", "nested too deeply"),
    ("--output-schema " + "x" * 5000, "is none of these"),  # too long for a path
    ("--output-schema '{\"type\": \"nonsense\"}'", "not valid JSON Schema"),
])
def test_bad_options_are_usage_errors_without_traceback(fresh, line, needle):
    result = fresh.run(f"%%fuxi {line}\nhello")
    assert result.status == "error"
    assert result.reply["content"]["ename"] == "UsageError"
    assert needle in result.reply["content"]["evalue"]
    assert not any("Traceback" in "".join(m["content"].get("traceback", []))
                   for m in result.messages if m["msg_type"] == "error")


def test_empty_prompt_and_bad_config_value(fresh):
    empty = fresh.run("%%fuxi\n\n")
    assert empty.reply["content"]["ename"] == "UsageError"
    rule = fresh.run("%%fuxi --allowed-tools 'Agent(model:opus)'\nhi")
    assert rule.reply["content"]["ename"] == "UsageError"
    assert "does not take a specifier" in rule.reply["content"]["evalue"]


def test_headless_run_leaves_a_transcript_record_and_result(fresh, api):
    api.add(Turn([text("Hello from **Fuxi**.")]))
    result = fresh.run("%%fuxi\nSay hello")
    assert result.status == "ok", result.messages
    final = result.final(RECORD_MIME)
    assert "Hello from **Fuxi**." in final["data"]["text/markdown"]
    assert "Hello from" in final["data"]["text/plain"]
    record = final["data"][RECORD_MIME]
    assert record["version"] == 1 and record["prompt"] == "Say hello"
    assert record["result"]["subtype"] == "success"
    assert "cost_usd" in final["metadata"]["fuxi"]  # volatile values live in metadata
    assert not result.updates  # headless: only final outputs, no display updates
    assert fresh.run("print(_fuxi.result.result)").stdout.strip() == "Hello from **Fuxi**."
    # secrets never reach the notebook
    assert "sk-ant-test-key" not in json.dumps(result.messages, default=str)


def test_consecutive_cells_continue_one_conversation_and_new_starts_fresh(fresh, api):
    api.add(Turn([text("first")]), Turn([text("second")]), Turn([text("third")]))
    first = record_of(fresh.run("%%fuxi\none"))
    second = record_of(fresh.run("%%fuxi\ntwo"))
    third = record_of(fresh.run("%%fuxi --new\nthree"))
    roles = [m["role"] for m in api.requests[1]["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert len(api.requests[2]["messages"]) == 1
    assert second["parent"] == first["cell_id"] and second["session_id"] == first["session_id"]
    assert third["parent"] is None and third["session_id"] != first["session_id"]
    # each cell stores only its own turns
    assert [m["role"] for m in second["messages"]] == ["user", "assistant"]
    summary = fresh.run("%fuxi").displays[0]["data"]["text/plain"]
    assert "model claude-sonnet-5-5" in summary and "$" in summary
    assert "1 cell run(s) · 1 turn(s)" in summary  # counted since --new


def test_headless_never_waits_and_explains_how_to_allow(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch made-by-agent"})]), Turn([text("ok")]))
    result = fresh.run("%%fuxi\nmake a file")
    assert result.status == "ok"
    denied = api.requests[1]["messages"][-1]["content"][0]
    assert denied["is_error"] and '--allowed-tools "Bash"' in denied["content"]
    assert "run the cell where someone can approve it" in denied["content"]
    assert not (fresh.work / "made-by-agent").exists()
    approvals = record_of(result)["approvals"]
    assert approvals[0]["source"] == "policy" and approvals[0]["decision"] == "deny"


def test_allowed_tools_option_lets_the_command_run(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch made-by-agent"})]), Turn([text("ok")]))
    result = fresh.run('%%fuxi --allowed-tools "Read,Bash(touch *)" --max-turns 3\nmake it')
    assert result.status == "ok"
    assert (fresh.work / "made-by-agent").exists()


def test_config_defaults_apply_to_later_cells(fresh, api):
    api.add(Turn([text("ok")]))
    shown = fresh.run("%fuxi config --model claude-haiku-5-5 --effort low")
    table = shown.displays[0]["data"]  # issue 9, item 12: a table, not a quoted dict
    assert "| `--model` | `claude-haiku-5-5` |" in table["text/markdown"]
    assert "  --effort: low" in table["text/plain"] and "{" not in table["text/plain"]
    fresh.run("%%fuxi\nhi")
    assert api.requests[0]["model"] == "claude-haiku-5-5"
    assert api.requests[0]["output_config"] == {"effort": "low"}
    fresh.run("%fuxi config --model claude-sonnet-5-5")
    bad = fresh.run("%fuxi config --new")
    assert bad.reply["content"]["ename"] == "UsageError"


def test_python_tool_works_in_the_live_namespace(fresh, api):
    fresh.run("import pandas as pd\nsales = pd.DataFrame({'month': [1, 2], 'total': [10, 32]})")
    api.add(Turn([tool_use("Variables", {}),
                  tool_use("Python", {"code": "grand = sales.total.sum()\ngrand"})]),
            Turn([text("The grand total is 42.")]))
    result = fresh.run("%%fuxi --allowed-tools Python\nWhat is the grand total of sales?")
    assert result.status == "ok", result.messages
    context = api.requests[0]["messages"][0]["content"][0]["text"]
    assert "Kernel context" in context and "sales" in context
    variables, python = api.requests[1]["messages"][-1]["content"]
    assert "sales" in variables["content"] and "DataFrame" in variables["content"]
    assert "42" in json.dumps(python["content"])
    assert fresh.run("print(grand)").stdout.strip() == "42"


def test_python_tool_is_denied_unless_allowed(fresh, api):
    api.add(Turn([tool_use("Python", {"code": "boom = 1"})]), Turn([text("ok")]))
    fresh.run("%%fuxi --allowed-tools 'Bash(*)'\ntry")
    assert fresh.run("print('boom' in globals())").stdout.strip() == "False"


def test_interrupt_during_a_stalled_stream_keeps_the_kernel_usable(fresh, api):
    api.add(Fault(stall_seconds=20, cut_after_events=2), Turn([text("after")]))
    msg_id = fresh.send("%%fuxi\nthis will stall")
    wait_until(lambda: len(api.requests) == 1)  # the stream is open and stalled
    time.sleep(0.3)
    started = time.monotonic()
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    assert time.monotonic() - started < 5
    assert result.status == "error"
    record = record_of(result)
    assert record["result"]["errors"] == ["Interrupted by the user."]
    after = fresh.run("print('still alive')")
    assert after.stdout.strip() == "still alive"


def test_interrupt_during_a_tool_kills_the_process_group(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch started; sleep 30; touch too-late"})]),
            Turn([text("after interrupt")]))
    msg_id = fresh.send("%%fuxi --allowed-tools 'Bash(sleep *),Bash(touch *)'\nwait")
    wait_until(lambda: (fresh.work / "started").exists())  # the command is running
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    assert result.status == "error"
    record = record_of(result)
    tool_results = [b for m in record["messages"] if m["role"] == "user"
                    for b in m["content"] if b.get("type") == "tool_result"]
    assert tool_results and "Interrupted by the user after" in json.dumps(tool_results[-1])
    follow = fresh.run("%%fuxi\ngo on")
    assert follow.status == "ok"
    sent = api.requests[-1]["messages"]
    assert sent[-1]["content"][0]["type"] == "tool_result"  # the open call was answered
    assert not (fresh.work / "too-late").exists()


def test_approval_buttons_in_a_frontend_that_can_click(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch clicked"})]), Turn([text("done")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nmake the file", cell_id="cell-abc")
    fresh.click(fresh.button("Allow", after=mark))
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok", result.messages
    assert (fresh.work / "clicked").exists()
    record = record_of(result)
    assert record["cell_id"] == "cell-abc"  # the frontend's cell id
    assert record["approvals"][0]["decision"] == "allow"
    assert record["approvals"][0]["source"] == "user"
    assert result.updates  # the live view was updated, then replaced by the final outputs


def test_deny_button_with_reason_never_runs_the_command(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch denied-file"})]), Turn([text("ok")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nmake it", cell_id="cell-def")
    fresh.click(fresh.button("Deny", after=mark))
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok"
    assert not (fresh.work / "denied-file").exists()
    answer = api.requests[1]["messages"][-1]["content"][0]
    assert answer["is_error"] and "denied" in answer["content"]


def test_ask_user_question_buttons(fresh, api):
    api.add(Turn([tool_use("AskUserQuestion", FORMAT_QUESTION)]), Turn([text("Parquet it is")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nsave the data", cell_id="cell-q")
    fresh.click(fresh.button("Parquet", after=mark))
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok"
    answer = api.requests[1]["messages"][-1]["content"][0]
    assert '"Which format?" = "Parquet"' in answer["content"]


def test_interrupt_while_waiting_for_a_click(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch never-approved"})]), Turn([text("ok")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nmake it", cell_id="cell-wait")
    fresh.button("Allow", after=mark)  # the card is waiting
    started = time.monotonic()
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    assert time.monotonic() - started < 5
    assert result.status == "error"
    assert not (fresh.work / "never-approved").exists()
    shown = json.dumps([c["data"] for c in result.updates], default=str)
    assert "Interrupted while waiting to approve" in shown  # the card became plain text
    assert fresh.run("print('next')").stdout.strip() == "next"


def test_the_kernel_stays_busy_while_a_card_waits_and_clicks_come_over_a_subshell(fresh,
                                                                                   api):
    """JupyterLab >= 4.4 sends widget messages over a subshell; each ends with an idle
    status, and the status bar shows the last status it saw."""
    api.add(Turn([tool_use("Bash", {"command": "touch clicked"})]), Turn([text("done")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nmake the file", cell_id="cell-busy")
    allow = fresh.button("Allow", after=mark)
    before = fresh.iopub_count()
    create = fresh.kc.session.msg("create_subshell_request", {})
    fresh.kc.control_channel.send(create)  # what JupyterLab does before its first click
    subshell = fresh.kc.get_control_msg(timeout=10)["content"]["subshell_id"]
    typed = fresh.kc.session.msg("comm_msg", {"comm_id": fresh.text_field(
        "Reason for denying (optional)", after=mark), "data": {
        "method": "update", "state": {"value": "x"}, "buffer_paths": []}})
    typed["header"]["subshell_id"] = subshell
    fresh.kc.shell_channel.send(typed)
    fresh.wait_for(lambda m: m["msg_type"] == "comm_msg"
                   and m["parent_header"].get("msg_id") == typed["header"]["msg_id"])
    idle = fresh.wait_for(lambda m: m["msg_type"] == "status"
                          and m["parent_header"].get("msg_id") == create["header"]["msg_id"]
                          and m["content"]["execution_state"] == "idle")
    fresh.wait_for(lambda m: fresh._iopub.index(m) > fresh._iopub.index(idle)
                   and m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id)
    statuses = [m for m in fresh.messages_since(before) if m["msg_type"] == "status"]
    assert statuses[-1]["parent_header"]["msg_id"] == msg_id  # what the status bar shows
    assert statuses[-1]["content"]["execution_state"] == "busy"
    fresh.click(allow)
    assert fresh.wait(msg_id, timeout=30).status == "ok"


def test_after_an_interrupted_cell_fuxi_holds_that_cells_partial_run(fresh, api):
    api.add(Turn([text("a first answer")]),
            Turn([tool_use("Bash", {"command": "touch never-approved"})]), Turn([text("ok")]))
    assert fresh.run("%%fuxi\nfirst", cell_id="cell-first").status == "ok"
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nsecond, interrupted", cell_id="cell-second")
    fresh.button("Allow", after=mark)
    fresh.interrupt()
    assert fresh.wait(msg_id, timeout=15).status == "error"
    held = fresh.run("print(_fuxi.cell_id, _fuxi.record.prompt, _fuxi.result.subtype)")
    assert held.stdout.split() == ["cell-second", "second,", "interrupted",
                                   "error_during_execution"]


def test_interrupt_stops_a_long_python_computation(fresh, api):
    code = ("import time, pathlib\npathlib.Path('spinning').touch()\n"
            "for _ in range(600):\n    time.sleep(0.05)\nfinished = True")
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("ok")]))
    msg_id = fresh.send("%%fuxi --allowed-tools Python\nspin")
    wait_until(lambda: (fresh.work / "spinning").exists())  # the loop is running
    started = time.monotonic()
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    assert time.monotonic() - started < 5
    assert result.status == "error"
    assert fresh.run("print('finished' in globals())").stdout.strip() == "False"
    follow = fresh.run("%%fuxi\nand now?")
    assert follow.status == "ok"


def test_always_allow_adds_a_rule_for_the_session(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "touch always-1"})]),
            Turn([tool_use("Bash", {"command": "touch always-1"})]), Turn([text("done")]),
            Turn([tool_use("Bash", {"command": "touch always-1"})]), Turn([text("again")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\ntouch twice", cell_id="cell-always")
    fresh.click(fresh.button("Always allow", after=mark))
    first = fresh.wait(msg_id, timeout=30)
    assert first.status == "ok"
    # the second identical call in the same run and the call in the next cell: no card
    mark = fresh.iopub_count()
    second = fresh.run("%%fuxi\nonce more", cell_id="cell-always-2", timeout=30)
    assert second.status == "ok"
    assert not any(m["msg_type"] == "comm_open" for m in fresh.messages(second.reply[
        "parent_header"]["msg_id"]))
    record = record_of(first)
    assert record["approvals"][0]["decision"] == "always_allow"
    assert record["approvals"][0]["rule"] == "Bash(touch always-1)"


def test_interrupt_aborts_queued_cells(fresh, api):
    api.add(Fault(stall_seconds=20, cut_after_events=2))
    running = fresh.send("%%fuxi\nstall")
    queued = fresh.send("print('should not run')")
    wait_until(lambda: len(api.requests) == 1)
    fresh.interrupt()
    assert fresh.wait(running, timeout=15).status == "error"
    aborted = fresh.wait(queued, timeout=15)
    assert aborted.status == "aborted" and "should not run" not in aborted.stdout


def test_old_ipykernel_is_refused_with_a_clear_message(monkeypatch):
    import ipykernel

    from fuxi_notebook._internal.notebook.cell import magic as extension

    class Shell:
        kernel = object()

    monkeypatch.setattr(ipykernel, "__version__", "7.3.2")
    with pytest.raises(Exception, match=r"ipykernel>=7.4 \(this kernel has 7.3.2\)"):
        extension.load_ipython_extension(Shell())


def test_a_secret_named_variable_never_reaches_the_saved_outputs(fresh, api):
    secret = "hunter2-correct-horse-battery"
    fresh.run(f"db_password = {secret!r}")
    api.add(Turn([tool_use("Variables", {}), tool_use("Inspect", {"name": "db_password"})]),
            Turn([text("I see a masked password.")]))
    result = fresh.run("%%fuxi\nwhat variables do I have?")
    assert result.status == "ok"
    assert secret not in json.dumps(result.messages, default=str)  # what the notebook stores
    assert secret not in json.dumps(api.requests)  # and what the model saw


def test_an_interrupt_is_one_plain_line_and_still_aborts_the_queue(fresh, api):
    """Issue 9, item 4: every interrupt printed a 20-line traceback through the rewritten
    cell source into the package, saved into the notebook."""
    api.add(Fault(stall_seconds=20, cut_after_events=2))
    running = fresh.send("%%fuxi\nstall")
    queued = fresh.send("print('should not run')")
    wait_until(lambda: len(api.requests) == 1)
    fresh.interrupt()
    stopped = fresh.wait(running, timeout=15)
    assert stopped.status == "error"
    [error] = [m["content"] for m in stopped.messages if m["msg_type"] == "error"]
    assert len(error["traceback"]) == 1, error["traceback"]
    assert error["traceback"][0].startswith("Stopped: interrupted by the user")
    assert "fuxi_notebook" not in json.dumps(error) and "__import__" not in json.dumps(error)
    assert fresh.wait(queued, timeout=15).status == "aborted"


def test_changing_the_model_continues_the_conversation_and_says_so(fresh, api):
    """Issue 9, item 5: --model silently started a new conversation (history, Always-allow
    rules and the cost total gone)."""
    api.add(Turn([text("first answer")]), Turn([text("second answer")]),
            Turn([text("third answer")]))
    first = fresh.run("%%fuxi\nremember the number 7")
    assert first.status == "ok"
    second = fresh.run("%%fuxi --model claude-opus-5-5\nwhich number?")
    assert second.status == "ok"
    assert api.requests[1]["model"] == "claude-opus-5-5"
    sent = json.dumps(api.requests[1]["messages"])
    assert "remember the number 7" in sent and "first answer" in sent  # the same history
    shown = json.dumps(second.messages, default=str)
    assert "continuing this conversation with claude-opus-5-5" in shown
    assert record_of(second)["parent"] == record_of(first)["cell_id"]
    summary = fresh.run("%fuxi").displays[-1]["data"]["text/plain"]
    assert "2 cell run(s)" in summary
    # only --new starts a fresh one
    fresh.run("%%fuxi --new --model claude-opus-5-5\nstart over")
    assert "remember the number 7" not in json.dumps(api.requests[2]["messages"])


def test_a_headless_model_repeating_a_denied_call_is_stopped(fresh, api):
    """Issue 9, item 7: the same denied call, asked again and again, ran 119 turns."""
    again = [Turn([tool_use("Bash", {"command": "touch nope"})]) for _ in range(10)]
    api.add(*again)
    result = fresh.run("%%fuxi\nmake the file")
    record = record_of(result)["result"]
    assert len(api.requests) == 3
    assert record["subtype"] == "error_during_execution"
    assert "same denied call 3 times" in record["errors"][0]
    second = api.requests[2]["messages"][-1]["content"][0]["content"]
    assert "already denied" in json.dumps(second)


def test_headless_runs_have_a_default_turn_cap(fresh, api):
    from fuxi_notebook._internal.notebook.cell.controller import HEADLESS_MAX_TURNS

    api.add(*[Turn([tool_use("Bash", {"command": f"echo {n}"})])
              for n in range(HEADLESS_MAX_TURNS + 5)])
    result = fresh.run("%%fuxi --allowed-tools 'Bash(echo *)'\ncount")
    record = record_of(result)["result"]
    assert record["subtype"] == "error_max_turns"
    assert len(api.requests) == HEADLESS_MAX_TURNS + 1
    api.reset()
    api.add(*[Turn([tool_use("Bash", {"command": f"echo {n}"})])
              for n in range(HEADLESS_MAX_TURNS + 2)], Turn([text("done")]))
    fine = fresh.run(f"%%fuxi --max-turns {HEADLESS_MAX_TURNS + 5} --allowed-tools "
                     "'Bash(echo *)'\ncount again")  # the cap is only a default
    assert record_of(fine)["result"]["subtype"] == "success"


def test_an_interrupted_python_call_says_it_ran_and_what_it_printed(fresh, api):
    """Issue 9, item 3: a Python call stopped after it had bound variables was recorded,
    to the user and to the model, as "Not executed"."""
    code = ("import time, pathlib\nhalf_done = 41\nprint('loaded 3 of 10 files')\n"
            "pathlib.Path('loading-files').touch()\nfor _ in range(600):\n    time.sleep(0.05)")
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("noted")]))
    msg_id = fresh.send("%%fuxi --allowed-tools Python\nload everything")
    wait_until(lambda: (fresh.work / "loading-files").exists())  # its own marker file
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    [answer] = [b for m in record_of(result)["messages"] if m["role"] == "user"
                for b in m["content"] if b.get("type") == "tool_result"]
    told = json.dumps(answer)
    assert "Not executed" not in told
    assert "Interrupted by the user after" in told and "effects may be partial" in told
    assert "loaded 3 of 10 files" in told  # the output it produced so far
    assert fresh.run("print(half_done)").stdout.strip() == "41"
    fresh.run("%%fuxi\nwhat happened?")
    assert "loaded 3 of 10 files" in json.dumps(api.requests[-1]["messages"])  # the model


def test_an_interrupt_mid_answer_keeps_the_text_shown(fresh, api):
    """Issue 9, item 2: after Stop, the streamed paragraph vanished ("Stopped · 0 turns")
    while the message claimed the partial run was shown."""
    answer = Turn([text("North sold the most this quarter, then South, then "
                        "the rest of the regions trail far behind.")])
    api.add(Fault(stall_seconds=30, cut_after_events=4, turn=answer), Turn([text("ok")]))
    msg_id = fresh.send("%%fuxi\nwhich region?", cell_id="cell-cut")  # a live view
    wait_until(lambda: len(api.requests) == 1)
    fresh.wait_for(lambda m: m["msg_type"] in ("display_data", "update_display_data")
                   and "North sold" in json.dumps(m["content"]["data"]))  # on screen
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    record = record_of(result)
    assert record["result"]["num_turns"] == 1
    kept = json.dumps(record["messages"])
    assert "North sold the most" in kept and "cut off" in kept
    assert "North sold the most" in result.final(RECORD_MIME)["data"]["text/markdown"]
    fresh.run("%%fuxi\ngo on")
    assert "North sold the most" in json.dumps(api.requests[-1]["messages"])


def test_ask_user_question_takes_a_free_text_answer(fresh, api):
    """Issue 9, item 15: the tool tells the model the user can answer in their own words."""
    api.add(Turn([tool_use("AskUserQuestion", FORMAT_QUESTION)]), Turn([text("Feather it is")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nsave the data", cell_id="cell-q-own")
    field = fresh.text_field("…or type your own answer", after=mark)
    fresh.type_into(field, "Feather, compressed")
    fresh.click(fresh.button("Send answer", after=mark))
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok"
    answer = api.requests[1]["messages"][-1]["content"][0]
    assert '"Which format?" = "Feather, compressed"' in answer["content"]
    assert record_of(result)["approvals"][0]["answers"] == {
        "Which format?": "Feather, compressed"}


def test_fuxi_shows_a_table_of_the_cells(fresh, api):
    """Issue 9, item 12: `%fuxi` was a quoted Python string; now totals and a row per cell."""
    api.add(Turn([text("one")]), Turn([text("two")]))
    first = record_of(fresh.run("%%fuxi\nfirst"))
    second = record_of(fresh.run("%%fuxi\nsecond"))
    shown = fresh.run("%fuxi").displays[0]["data"]
    table = shown["text/markdown"]
    assert "| cell | turns | tokens in / out | cost | time |" in table
    assert f"| `{first['cell_id']}` | 1 |" in table and f"| `{second['cell_id']}` | 1 |" in table
    assert "\\$" in table and "(estimate)" in table  # costs, escaped for markdown
    assert shown["text/plain"].startswith("fuxi session ")


def test_an_unknown_model_is_one_warning_line_and_its_refusal_one_line(tmp_path):
    from fuxi_notebook.testing import FakeMessagesServer

    from .kernel_harness import loaded_kernel

    with FakeMessagesServer(reject_unknown_models=True) as strict:
        harness = loaded_kernel(strict, tmp_path)
        try:
            result = harness.run("%%fuxi --model claude-unknown-9\nhello", cell_id="c-unknown")
        finally:
            harness.close()
    warnings = [line for line in result.stderr.splitlines() if "claude-unknown-9" in line]
    assert warnings and "is not a model this version knows" in warnings[0]
    shown = json.dumps([d["data"] for d in result.displays])
    assert "the API has no model claude-unknown-9" in shown
    assert "Traceback" not in result.stderr + shown
