"""Where things sit in a `%%fuxi` cell, live and saved (issue 9, items 9, 10, 11, 12, 13).

A real ipykernel, a frontend that sends cell ids (so cards can be clicked), the fake
Messages API. The cell's outputs are rebuilt from the iopub messages the way a notebook
keeps them (display updates and clears applied), at the moment a card waits and at the end.
"""

from __future__ import annotations

import json

from fuxi_notebook._internal.sessions.record import RECORD_MIME
from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.testing.frontend import _Outputs

from .kernel_harness import record_of, wait_until

PLOT_SALES = ("import matplotlib.pyplot as plt\n"
              "plt.figure(); plt.plot([1, 3, 2]); plt.title('sales');")
PLOT_COSTS = "plt.figure(); plt.bar([1, 2], [3, 4]); plt.title('costs');"


def _outputs(messages, msg_id):
    """The cell's outputs as a saved notebook would keep them, from its iopub messages."""
    kept = _Outputs()
    for message in messages:
        if message["parent_header"].get("msg_id") == msg_id:
            kept.add_message(message)
    return kept.items


def _kind(output) -> str:
    """A short name for what an output shows."""
    data = output.get("data") or {}
    if "image/png" in data:
        return "figure"
    if "application/vnd.jupyter.widget-view+json" in data:
        return "card"
    if "application/javascript" in data:
        return "script"
    markdown = data.get("text/markdown", "")
    if markdown.startswith(("✓", "✗", "?")):
        return "decision"
    return "view" if markdown else f"other:{sorted(data)}"


def _waiting_for(kernel, mark, tool):
    """Wait until the card asking about `tool` is shown (its tab-title script follows it)."""
    kernel.wait_for(lambda m: kernel._iopub.index(m) >= mark
                    and m["msg_type"] == "display_data"
                    and f"use {tool}" in m["content"]["data"].get("application/javascript", ""))


def test_figures_and_decisions_sit_next_to_their_calls_live_and_saved(fresh, api):
    api.add(Turn([text("Sales first."), tool_use("Python", {"code": PLOT_SALES})]),
            Turn([text("Now costs."), tool_use("Python", {"code": PLOT_COSTS})]),
            Turn([tool_use("Bash", {"command": "touch saved.txt"})]),
            Turn([text("Two plots: sales and costs.")]))
    start = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi\nplot sales, then costs", cell_id="cell-plots")
    mark = start
    for tool in ("Python", "Bash"):
        allow = fresh.button("Allow", after=mark)
        mark = fresh.iopub_count()
        fresh.click(allow)
        _waiting_for(fresh, mark, tool)
    allow = fresh.button("Allow", after=mark)

    # live, while the Bash card waits: each figure right below its call, decisions in order
    live = _outputs(fresh.messages_since(start), msg_id)
    kinds = [_kind(o) for o in live if _kind(o) != "script"]
    assert kinds == ["view", "decision", "figure", "view", "decision", "figure", "view",
                     "card"], kinds
    views = [o["data"]["text/markdown"] for o in live if _kind(o) == "view"]
    assert "Sales first." in views[0] and "<b>Python</b>" in views[0]
    assert 'alt="Figure 1"' in views[0] and "data:image/png;base64," in views[0]  # thumbnail
    assert "Now costs." in views[1] and 'alt="Figure 2"' in views[1]
    assert "<b>Bash</b>" in views[2] and "waiting for approval" in views[2]
    assert all(o["data"].get("text/plain") or o["data"].get("text/markdown")
               or "image/png" in o["data"] or _kind(o) == "card" for o in live
               if _kind(o) != "script"), "an empty output in the live cell"

    fresh.click(allow)
    result = fresh.wait(msg_id, timeout=60)
    assert result.status == "ok", result.messages

    # saved: the same order without cards; each call folded; figures once, after their card
    saved = _outputs(result.messages, msg_id)
    assert [_kind(o) for o in saved] == ["view", "figure", "view", "figure", "view"]
    first, _, second, _, last = (o["data"] for o in saved)
    assert "Sales first." in first["text/markdown"]
    assert first["text/markdown"].rstrip().endswith("</details>")
    assert "Figure 1 below</summary>" in first["text/markdown"]
    assert "Figure 2 below</summary>" in second["text/markdown"]
    assert "data:image" not in json.dumps(saved)  # no second copy of a figure
    assert RECORD_MIME in last and RECORD_MIME not in first
    record = record_of(result)
    assert sorted(record["shown_outputs"].values()) == [1, 1]
    # the last line says what the run spent: turns, tokens, cost (an estimate) and time
    line = last["text/plain"].splitlines()[-1]
    assert line.startswith("Done · 4 turns · ") and " out tokens · $" in line
    assert "(estimate) · " in line and line.endswith(" s")


def test_a_replay_puts_figures_where_the_live_run_did(fresh, api, tmp_path):
    api.add(Turn([text("Sales first."), tool_use("Python", {"code": PLOT_SALES})]),
            Turn([text("Done plotting.")]))
    live = fresh.run("%%fuxi --new --allowed-tools Python\nplot sales", cell_id="cell-replayed")
    assert live.status == "ok", live.messages
    saved = _outputs(live.messages, live.reply["parent_header"]["msg_id"])
    assert [_kind(o) for o in saved] == ["view", "figure", "view"], json.dumps(saved)[:3000]

    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi --new --allowed-tools Python --replay\nplot sales",
                        cell_id="cell-replayed")
    fresh.click(fresh.button("Replay", after=mark))  # the first replay asks once
    replayed = fresh.wait(msg_id, timeout=60)
    assert replayed.status == "ok", replayed.messages
    again = _outputs(replayed.messages, replayed.reply["parent_header"]["msg_id"])
    assert [_kind(o) for o in again] == ["view", "figure", "view"], json.dumps(again)[:3000]
    # text and record equal (the figure is drawn again); the spend line is the recorded
    # one, and says the cell was replayed (someone watched: see notebook/outputs.py)
    for before, after in zip(saved, again, strict=True):
        if _kind(before) == "view":
            shown, was = after["data"]["text/plain"], before["data"]["text/plain"]
            if RECORD_MIME in before["data"]:
                head, line = was.rsplit("\n", 1)
                was = f"{head}\n{line.replace('Done · ', 'Replayed · 0 requests · recorded: ')}"
            assert shown == was
            assert after["data"].get(RECORD_MIME) == before["data"].get(RECORD_MIME)
    assert len(api.requests) == 2  # the replay called no model


def test_a_long_bash_call_shows_elapsed_time_and_output_so_far(fresh, api):
    go = fresh.work / "go"
    command = f"echo first line; while [ ! -e {go} ]; do sleep 0.05; done; echo second line"
    api.add(Turn([tool_use("Bash", {"command": command})]), Turn([text("finished")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi --allowed-tools Bash\nrun it", cell_id="cell-progress")

    def shown(needle):
        return any(needle in json.dumps(m["content"].get("data", {}), ensure_ascii=False)
                   for m in fresh.messages_since(mark)
                   if m["parent_header"].get("msg_id") == msg_id)

    wait_until(lambda: shown("Output so far") and shown("first line"), timeout=30)
    wait_until(lambda: shown("running · 1 s") or shown("running · 2 s"), timeout=30)
    go.touch()
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok"
    assert "second line" in json.dumps(result.final(RECORD_MIME)["data"][RECORD_MIME])


def test_max_turns_one_reports_one_turn(fresh, api):
    api.add(Turn([tool_use("Bash", {"command": "ls"})]),
            Turn([text("And once more."), tool_use("Bash", {"command": "ls -a"})]))
    result = fresh.run("%%fuxi --max-turns 1 --allowed-tools Bash\nlook around")
    assert result.status == "ok", result.messages
    last = result.final(RECORD_MIME)["data"]["text/plain"].splitlines()
    line = next(line for line in last if line.startswith("Stopped"))
    assert line.startswith("Stopped · the turn limit was reached · 1 turn · "), line
    assert record_of(result)["result"]["num_turns"] == 2  # the SDK's count: responses
    table = fresh.run("%fuxi").displays[-1]["data"]["text/plain"]
    assert "1 turn(s)" in table and " · 1 · " in table, table  # counted as the line does


def test_a_write_card_shows_the_file_under_the_cells_working_directory(fresh, api):
    """A relative path is resolved as the tool resolves it: against `--cwd`, not against
    the kernel's own directory (where a file of the same name said "overwrite")."""
    sub = fresh.work / "project"
    sub.mkdir(exist_ok=True)
    (sub / "notes.md").write_text("# Notes\nNorth leads\n")
    (fresh.work / "notes.md").unlink(missing_ok=True)
    api.add(Turn([tool_use("Read", {"file_path": "notes.md"})]),  # else refused unasked
            Turn([tool_use("Write", {"file_path": "notes.md", "content": "# Notes\nSouth\n"})]),
            Turn([text("ok")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send(f"%%fuxi --cwd {sub}\nupdate the notes", cell_id="cell-cwd")
    card = fresh.wait_for(lambda m: fresh._iopub.index(m) >= mark and m["msg_type"] == "comm_open"
                          and "Allow Write?" in str(m["content"]["data"]["state"].get("value")))
    shown = card["content"]["data"]["state"]["value"]
    assert "overwrite" in shown and str(sub / "notes.md") in shown and "North leads" in shown
    fresh.click(fresh.button("Deny", after=mark))
    assert fresh.wait(msg_id, timeout=30).status == "ok"


def test_a_long_python_call_shows_what_it_printed_while_it_runs(fresh, api):
    """User code holds the event loop (a synchronous wait): the view is drawn from the
    tool's progress thread, and reaches this cell."""
    go = fresh.work / "go-python"
    go.unlink(missing_ok=True)
    code = ("import os, time\nprint('loaded 48 rows', flush=True)\n"
            f"while not os.path.exists({str(go)!r}):\n    time.sleep(0.02)\nprint('do' + 'ne!')")
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("finished")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi --allowed-tools Python\nload it", cell_id="cell-py-progress")

    def live_shows(needle):
        return any(needle in m["content"].get("data", {}).get("text/markdown", "")
                   for m in fresh.messages_since(mark)
                   if m["parent_header"].get("msg_id") == msg_id
                   and m["msg_type"] == "update_display_data")

    wait_until(lambda: live_shows("Output so far") and live_shows("loaded 48 rows"), timeout=30)
    assert not live_shows("done!")  # what it prints after the wait is not there yet
    go.touch()
    assert fresh.wait(msg_id, timeout=30).status == "ok"


def test_the_live_view_is_redacted_paragraph_by_paragraph_as_a_whole_would_be():
    from fuxi_notebook._internal.notebook.display.render import LiveRenderer
    from fuxi_notebook._internal.sessions.redact import redact_text

    text = ("Keys: sk-ant-api03-" + "a" * 40 + "\n\npassword = hunter2\n\n"
            "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n\nplain words")
    renderer = LiveRenderer()
    assert renderer._redact(text) == redact_text(text)
    assert renderer._redact(text + " more") == redact_text(text + " more")  # remembered
    assert "hunter2" not in renderer._redact(text) and "abc" not in renderer._redact(text)


def test_a_silent_python_call_still_shows_its_elapsed_time(fresh, api):
    """No output to report and the loop held by synchronous code: the elapsed time moves."""
    go = fresh.work / "go-silent"
    go.unlink(missing_ok=True)
    code = f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.02)"
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("finished")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi --allowed-tools Python\nwait", cell_id="cell-py-silent")

    def seconds_shown():
        return {s for s in ("running · 2 s", "running · 3 s", "running · 4 s")
                for m in fresh.messages_since(mark)
                if m["parent_header"].get("msg_id") == msg_id
                and s in m["content"].get("data", {}).get("text/markdown", "")}

    wait_until(lambda: len(seconds_shown()) >= 2, timeout=30)  # it keeps moving
    go.touch()
    assert fresh.wait(msg_id, timeout=30).status == "ok"

    def watching():  # the thread ends with the run (checked from inside the kernel)
        names = fresh.run("import threading; print([t.name for t in threading.enumerate()])")
        return "fuxi-elapsed" in names.stdout

    wait_until(lambda: not watching(), timeout=10)


async def test_closing_a_live_renderer_ends_its_ticker_and_thread():
    import asyncio
    import contextlib
    import threading

    from fuxi_notebook._internal.notebook.display import render

    renderer = render.LiveRenderer()
    renderer.start("prompt", [])  # no shell here: IPython's display, which prints
    assert any(t.name == "fuxi-elapsed" for t in threading.enumerate())
    renderer.close()
    assert renderer._ticker is not None
    with contextlib.suppress(asyncio.CancelledError):
        await renderer._ticker  # it ends: the ticker was cancelled
    assert renderer._ticker.cancelled()
    wait_until(lambda: not any(t.name == "fuxi-elapsed" for t in threading.enumerate()))


def test_output_schema_gives_the_answer_as_data(fresh, api):
    """L12 in the notebook: `--output-schema` with a pydantic model class from the kernel;
    an invalid answer is corrected; `_fuxi.structured_output` holds the data."""
    fresh.run("from pydantic import BaseModel\nclass Best(BaseModel):\n    region: str\n"
              "    total: float")
    api.add(Turn([tool_use("StructuredOutput", {"region": "North"})]),
            Turn([text("North."), tool_use("StructuredOutput",
                                           {"region": "North", "total": 94000})]))
    result = fresh.run("%%fuxi --new --output-schema Best\nwhich region sold most?")
    assert result.status == "ok", result.messages
    shown = fresh.run("print(_fuxi.structured_output)").stdout
    assert shown.strip() == "{'region': 'North', 'total': 94000}"
    assert "total" in str(api.requests[1]["messages"][-1]["content"])  # the errors went back

