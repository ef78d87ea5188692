"""What a `%%fuxi` cell shows, in a real kernel: its cards' widgets leave no output that
refers to a closed widget, and the cell's last line says how the cell ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook

ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
QUESTION = {"questions": [{"question": "Which format?", "header": "Format",
                           "multiSelect": False,
                           "options": [{"label": "CSV", "description": "plain"},
                                       {"label": "Parquet", "description": "columnar"}]}]}


@pytest.fixture
def server():
    """A fake Messages API of the test's own (`api` is the module's, for `fresh`)."""
    with FakeMessagesServer() as api:
        yield api


def _env(api: FakeMessagesServer, path: Path, **extra: str) -> dict[str, str]:
    env = {"FUXI_NOTEBOOK": str(path), "ANTHROPIC_BASE_URL": api.url,
           "ANTHROPIC_API_KEY": "sk-ant-test-key-for-the-kernel-0003", "FUXI_BLOCK_REAL_API": "1",
           "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT), "FUXI_REPLAY": ""}
    env.update(extra)
    return env




class _Logged:
    """Every iopub message a frontend reads, in order."""

    def __init__(self, frontend: NotebookFrontend) -> None:
        self.messages: list[dict[str, Any]] = []
        real = frontend.kc.get_iopub_msg

        def get(*args: Any, **kwargs: Any) -> dict[str, Any]:
            message = real(*args, **kwargs)
            self.messages.append(message)
            return message

        frontend.kc.get_iopub_msg = get


def _dangling(messages: list[dict[str, Any]]) -> list[str]:
    """Each moment an output of the cell refers to a widget whose comm is closed: the
    outputs are followed as a frontend keeps them (updates, clears, `wait=True` clears
    on the next output), checked after every message."""
    outputs: list[dict[str, Any]] = []
    by_id: dict[str, list[int]] = {}
    clear_next = False
    closed: set[str] = set()
    problems: list[str] = []
    for message in messages:
        kind, body = message["header"]["msg_type"], message["content"]
        if kind == "comm_close":
            closed.add(body["comm_id"])
        elif kind == "clear_output":
            if body.get("wait"):
                clear_next = True
            else:
                outputs, by_id, clear_next = [], {}, False
        elif kind == "update_display_data":
            for index in by_id.get((body.get("transient") or {}).get("display_id", ""), []):
                outputs[index] = body.get("data") or {}
        elif kind in ("display_data", "execute_result", "stream", "error"):
            if clear_next:
                outputs, by_id, clear_next = [], {}, False
            display_id = (body.get("transient") or {}).get("display_id")
            if display_id:
                by_id.setdefault(display_id, []).append(len(outputs))
            outputs.append(body.get("data") or {})
        for data in outputs:
            model = (data.get(WIDGET_VIEW) or {}).get("model_id")
            if model in closed:
                problems.append(f"{kind}: an output shows the closed widget {model}")
    return problems


def _widget_views(cell: Any) -> list[Any]:
    return [o for o in cell.outputs if WIDGET_VIEW in (o.get("data") or {})]


def _left_open(messages: list[dict[str, Any]]) -> list[str]:
    """The widgets opened and never closed (their model names)."""
    opened = {m["content"]["comm_id"]: m["content"]["data"]["state"]["_model_name"]
              for m in messages if m["header"]["msg_type"] == "comm_open"
              and m["content"].get("target_name") == "jupyter.widget"}
    assert opened, "the cards were widgets"
    closed = {m["content"]["comm_id"] for m in messages
              if m["header"]["msg_type"] == "comm_close"}
    return sorted(name for comm, name in opened.items() if comm not in closed)


def _decide(card: Any) -> tuple[str, str | None] | None:
    for label, reply in (("Replay", None), ("Deny", "not now"), ("Parquet", None),
                         ("Allow", None)):
        if label in card.buttons:
            return label, reply
    return None


def test_cards_leave_no_output_that_refers_to_a_closed_widget(tmp_path, server):
    """Finding 7: `Error: widget model not found` after a second Run All: an output
    referred to a card's widget after its comm was closed. Live cards (allow, deny, a
    question), then the replay card and a replay, in the same kernel."""
    server.add(Turn([tool_use("Bash", {"command": "echo one > one.txt"})]), Turn([text("one")]),
            Turn([tool_use("Bash", {"command": "echo two > two.txt"})]), Turn([text("no")]),
            Turn([tool_use("AskUserQuestion", QUESTION)]), Turn([text("Parquet it is")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi --new\nmake one", "%%fuxi --new\nmake two",
                         "%%fuxi --new\nask me")
    decisions = iter([("Allow", None), ("Deny", "not now"), ("Parquet", None)])
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        log = _Logged(frontend)
        statuses = [frontend.execute(cell, decide=lambda card: next(decisions))
                    for cell in nb.cells]
    assert statuses == ["ok"] * 4, [c.outputs for c in nb.cells]
    nbformat.write(nb, path)
    assert _dangling(log.messages) == []
    assert [_widget_views(cell) for cell in nb.cells] == [[]] * 4
    assert _left_open(log.messages) == [], "a decided card leaves no widget open"

    (tmp_path / "one.txt").unlink()
    again = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path, ANTHROPIC_API_KEY="")
                          ) as frontend:
        log = _Logged(frontend)
        for _ in range(2):  # Run All twice
            statuses = [frontend.execute(cell, decide=_decide) for cell in again.cells]
            assert statuses == ["ok"] * 4, [c.outputs for c in again.cells]
            assert [_widget_views(cell) for cell in again.cells] == [[]] * 4
    assert _dangling(log.messages) == []
    assert _left_open(log.messages) == []


def test_an_interrupt_while_a_card_waits_leaves_no_widget_behind(tmp_path, server):
    server.add(Turn([tool_use("Bash", {"command": "touch never"})]), Turn([text("ok")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi --new\nmake it")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        log = _Logged(frontend)
        assert frontend.execute(nb.cells[0]) == "ok"

        def interrupt(card: Any) -> None:
            frontend.km.interrupt_kernel()

        assert frontend.execute(nb.cells[1], decide=interrupt) == "error"
    assert not (tmp_path / "never").exists()
    assert _dangling(log.messages) == []
    assert _widget_views(nb.cells[1]) == []
    assert _left_open(log.messages) == []


# -- unit: the live view and the cards -------------------------------------------------------

def _view(*calls: tuple[str, str, dict], kind_of: Any = None) -> Any:
    from fuxi_notebook._internal.notebook.display.view import LiveView
    from fuxi_notebook.types import AssistantMessage, ToolUseBlock

    view = LiveView(kind_of=kind_of)
    view.apply(AssistantMessage(content=[ToolUseBlock(id=i, name=n, input=inp)
                                         for i, n, inp in calls], model="m"))
    return view


def _result(view: Any, tool_use_id: str, content: str, is_error: bool = True) -> None:
    from fuxi_notebook.types import ToolResultBlock, UserMessage

    view.apply(UserMessage(content=[ToolResultBlock(tool_use_id=tool_use_id, content=content,
                                                    is_error=is_error)]))


def _end(view: Any, **fields: Any) -> None:
    from fuxi_notebook.types import ResultMessage

    view.apply(ResultMessage(subtype="error_during_execution", duration_ms=1,
                             duration_api_ms=1, is_error=True, num_turns=1, session_id="s",
                             **fields))


def test_a_card_the_user_denied_reads_denied_not_failed():
    """Finding 1: the card of a denied call said "✗ failed · 0.0 s"."""
    view = _view(("t1", "Bash", {"command": "rm -rf out"}))
    view.mark_asking("t1", True)
    view.mark_decided("t1", "deny")
    view.mark_asking("t1", False)
    _result(view, "t1", "The user denied this Bash call.")
    card = view.cards["t1"]
    assert card.status == "✗ denied"
    assert "✗ denied</summary>" in card.markdown() or "✗ denied" in card.markdown()
    assert "(✗ denied)" in view.text(status=False) and "failed" not in view.text()


def test_a_policy_denial_and_an_interrupt_read_as_such_once_the_run_ends():
    view = _view(("t1", "Bash", {"command": "rm x"}), ("t2", "Bash", {"command": "sleep 9"}),
                 ("t3", "Bash", {"command": "false"}))
    _result(view, "t1", "Permission to use Bash was denied: a rule.")
    _result(view, "t3", "Exit code 1")
    _end(view, terminal_reason="aborted", errors=["Interrupted by the user."],
         permission_denials=[{"tool_use_id": "t1", "tool_name": "Bash", "tool_input": {}}])
    assert view.cards["t1"].status == "✗ denied"
    assert view.cards["t2"].status == "✗ interrupted"  # it never got a result
    assert view.cards["t3"].status.startswith("✗ failed · ")
    interrupted = _view(("t4", "Bash", {"command": "sleep 9"}))
    _result(interrupted, "t4", "Interrupted by the user after 2.0 s. The call had started, "
            "so its effects may be partial")
    assert interrupted.cards["t4"].status.startswith("✗ interrupted · ")


def test_a_question_waits_for_an_answer_by_its_declared_kind():
    """Finding 2: AskUserQuestion's card said "waiting for approval"; the kind decides,
    not the name (a kernel tool declaring `ask` is a question too)."""
    kinds = {"Survey": "ask", "Bash": "execute"}
    view = _view(("q1", "AskUserQuestion", QUESTION), ("q2", "Survey", QUESTION),
                 ("b1", "Bash", {"command": "ls"}), kind_of=kinds.get)
    for card in view.cards.values():
        view.mark_asking(card.id, True)
    assert view.cards["q1"].status == "waiting for your answer…"
    assert view.cards["q2"].status == "waiting for your answer…"
    assert view.cards["b1"].status == "waiting for approval…"
    assert "<code>Which format?</code>" in view.cards["q2"].markdown()
    view.mark_decided("q1", "deny")
    _result(view, "q1", "The user skipped the question.")
    assert view.cards["q1"].status == "✗ skipped"


def test_decided_lines_of_a_question_speak_of_an_answer():
    from fuxi_notebook._internal.notebook.display.approval_widgets import (
        _decided_text,
        _interrupted_text,
    )

    answered = _decided_text("Survey", QUESTION, (
        "allow", None, {**QUESTION, "answers": {"Which format?": "CSV"}}), "ask")
    assert answered == "? Answered: Which format? → CSV"
    assert _decided_text("Survey", QUESTION, ("deny", "skipped", None), "ask") == \
        "✗ Skipped: Survey `Which format?`"
    assert _decided_text("Bash", {"command": "ls"}, ("deny", "no", None), "execute") == \
        "✗ Denied: Bash `ls` — no"
    assert "waiting for your answer" in _interrupted_text("Survey", "ask")
    assert "waiting to approve" in _interrupted_text("Bash", "execute")


def test_a_note_of_several_lines_is_one_blockquote_with_every_line_marked():
    from fuxi_notebook._internal.notebook.display.view import LiveView

    view = LiveView()
    view.items.append(["note", "fuxi: first\nsecond"])
    assert view.markdown(status=False) == "> fuxi: first\n> second"


def test_a_saved_output_is_shown_again_as_strings():
    """Finding 4: the saved transcript, shown again with a corrupted record's error, came
    from the notebook file, where text is a list of lines: the browser joined it with
    commas (one blockquote with ", ," in it)."""
    from fuxi_notebook._internal.notebook.cell.outputs import saved_bundle

    saved = {"text/markdown": ["> first line\n", ">\n", "> second line"],
             "text/plain": ["a\n", "b"], "application/json": ["kept", "as data"],
             "application/vnd.fuxi.session.v1+json": {"messages": "x"}}
    shown = saved_bundle(saved)
    assert shown["text/markdown"] == "> first line\n>\n> second line"
    assert shown["text/plain"] == "a\nb"
    assert shown["application/json"] == ["kept", "as data"]
    assert shown["application/vnd.fuxi.session.v1+json"] == {"messages": "x"}


def test_the_end_line_follows_the_outputs_own_metadata():
    """Finding 5: replayed or not is read from the output's metadata, so a replay of a
    saved output writes that output again (nbval compares them)."""
    from fuxi_notebook._internal.notebook.cell.outputs import record_outputs
    from fuxi_notebook._internal.sessions.record import build_record

    from ..sessions.helpers import build_kwargs

    record = build_record(**build_kwargs())
    volatile = {"usage": {"input_tokens": 13_229, "output_tokens": 82}, "cell_cost_usd": 0.0139}
    (live,) = record_outputs(record, volatile)
    (headless,) = record_outputs(record, {**volatile, "replayed": "strict"})
    (replayed,) = record_outputs(record, {**volatile, "replayed": "lenient",
                                          "end_line": "replayed"})
    assert headless[0] == live[0]  # a headless replay writes what was saved
    assert live[0]["text/plain"].splitlines()[-1] == (
        "Done · 4 turns · 13,229 in / 82 out tokens · $0.0139 (estimate)")
    assert replayed[0]["text/plain"].splitlines()[-1] == (
        "Replayed · 0 requests · recorded: 4 turns · 13,229 in / 82 out tokens · "
        "$0.0139 (estimate)")
    assert replayed[1]["fuxi"]["end_line"] == "replayed"  # what the next replay reads
    again = record_outputs(record, replayed[1]["fuxi"])
    assert again[0][0] == replayed[0]


# -- kernel: what a live cell shows --------------------------------------------------------

def _shown(messages: list[dict[str, Any]]) -> str:
    """Everything the cell displayed or updated, as one string."""
    import json

    return json.dumps([m["content"].get("data") for m in messages
                       if m["msg_type"] in ("display_data", "update_display_data")],
                      ensure_ascii=False)


def _final_text(result: Any) -> str:
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    return result.final(RECORD_MIME)["data"]["text/plain"]


def test_live_cards_say_denied_and_a_question_waits_for_an_answer(fresh, api):
    """Findings 1 and 2 where they were seen: the live view of a question and of a denied
    call (drawn again when the next card asks), then the saved transcript."""
    from .kernel_harness import wait_until

    api.add(Turn([tool_use("AskUserQuestion", QUESTION)]),
            Turn([tool_use("Bash", {"command": "touch denied-file"})]),
            Turn([tool_use("Bash", {"command": "touch allowed-file"})]), Turn([text("ok")]))
    mark = fresh.iopub_count()
    msg_id = fresh.send("%%fuxi --new\nsave the data", cell_id="cell-findings-12")
    skip = fresh.button("Skip", after=mark)
    wait_until(lambda: "waiting for your answer" in _shown(fresh.messages(msg_id)))
    fresh.click(skip)
    deny = fresh.button("Deny", after=mark)
    wait_until(lambda: "waiting for approval" in _shown(fresh.messages(msg_id)))
    before_next = fresh.iopub_count()  # the next card's widgets open after the click
    fresh.click(deny)
    fresh.click(fresh.button("Allow", after=before_next))
    result = fresh.wait(msg_id, timeout=30)
    assert result.status == "ok", result.messages
    shown = _shown(result.messages)
    assert "✗ skipped" in shown and "✗ Skipped" in shown  # the card, the decided line
    assert "✗ denied" in shown and "✗ Denied" in shown
    assert "failed" not in shown and "waiting for approval" in shown
    saved = _final_text(result)
    assert "AskUserQuestion: Which format? (skipped by you" in saved
    assert "Bash: touch denied-file (denied by you)" in saved and "failed" not in saved


def test_an_interrupted_call_reads_interrupted_and_the_reason_is_said_once(fresh, api):
    """Findings 1 and 3: the call an interrupt stopped said "✗ failed" in the final
    transcript, and the interrupt's reason was a bullet above the error line saying it."""
    from .kernel_harness import wait_until

    api.add(Turn([tool_use("Bash", {"command": "touch started-run; sleep 30"})]),
            Turn([text("after")]))
    msg_id = fresh.send("%%fuxi --new --allowed-tools 'Bash(touch *)'\nwait",
                        cell_id="cell-findings-13")
    wait_until(lambda: (fresh.work / "started-run").exists())
    fresh.interrupt()
    result = fresh.wait(msg_id, timeout=15)
    assert result.status == "error"
    [error] = [m["content"] for m in result.messages if m["msg_type"] == "error"]
    assert error["traceback"][0].startswith("Stopped: interrupted by the user")
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    final = result.final(RECORD_MIME)["data"]
    for saved in (final["text/plain"], final["text/markdown"]):
        assert "✗ interrupted" in saved and "failed" not in saved
        assert "Interrupted by the user." not in saved  # the error line below says it
    assert final["text/plain"].splitlines()[-1].startswith("Stopped · ")


# -- kernel: a replay's last line, and nbval on what each run saved --------------------------

def _nbval(path: Path) -> Any:
    """nbval on a saved notebook, as the test suite runs the shipped ones (strict replay,
    no key): the completed process."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "FUXI_NOTEBOOK",
                        "FUXI_REPLAY", "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS")}
    env.update({"FUXI_BLOCK_REAL_API": "1", "MPLBACKEND": "Agg"})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--nbval", "--nbval-current-env", str(path)], cwd=str(path.parent),
                          env=env, capture_output=True, text=True, timeout=300)


def _end_lines(cell: Any) -> tuple[str, str]:
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    [data] = [o["data"] for o in cell.outputs if RECORD_MIME in o.get("data", {})]
    return data["text/plain"].splitlines()[-1], data["text/markdown"].splitlines()[-1]


def test_a_watched_replay_says_it_replayed_and_nbval_passes_before_and_after(tmp_path, server):
    """Finding 5: a replayed cell ended like a paid live run ("Done · … (estimate)"). A
    replay someone watches now says `Replayed · 0 requests · recorded: …`, and nbval (a
    strict headless replay) passes on the notebook saved after the live run and on the one
    saved after that replay: each output is what the next replay writes again."""
    server.add(Turn([text("Making it."), tool_use("Bash", {"command": "echo made > made.txt"})]),
               Turn([text("Made.")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi --new --allowed-tools Bash\nmake a file")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
    nbformat.write(nb, path)
    plain, markdown = _end_lines(nb.cells[1])
    assert plain.startswith("Done · 2 turns · ") and "(estimate)" in plain
    assert markdown.startswith("**Done** · 2 turns · ")
    checked = _nbval(path)
    assert checked.returncode == 0, checked.stdout[-3000:]

    server.reset()
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path, ANTHROPIC_API_KEY="")
                          ) as frontend:
        statuses = [frontend.execute(cell, decide=_decide) for cell in nb.cells]
    assert statuses == ["ok", "ok"], nb.cells[1].outputs
    assert server.requests == []
    replayed_plain, replayed_markdown = _end_lines(nb.cells[1])
    recorded = plain.removeprefix("Done · ")
    assert replayed_plain == f"Replayed · 0 requests · recorded: {recorded}"
    assert replayed_markdown.startswith("**Replayed** · 0 requests · recorded: 2 turns · ")
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    [metadata] = [o["metadata"]["fuxi"] for o in nb.cells[1].outputs
                  if RECORD_MIME in o.get("data", {})]
    assert (metadata["replayed"], metadata["end_line"]) == ("lenient", "replayed")
    nbformat.write(nb, path)
    checked = _nbval(path)
    assert checked.returncode == 0, checked.stdout[-3000:]


# -- kernel: a corrupted record's cell shows its saved transcript as text --------------------

def test_a_corrupted_record_shows_the_saved_transcript_as_text(tmp_path, server):
    """Finding 4: with a corrupted record (its `messages` a string) the cell says so, and
    the saved transcript shown above rendered with ", ," in one blockquote (Notebook 7
    joins a list it is sent with commas)."""
    from fuxi_notebook._internal.sessions.record import RECORD_MIME

    server.add(Turn([text("line one\n\nline two")]))
    path, nb = loaded_notebook(tmp_path, "%%fuxi --new\nfirst line\n\nsecond line")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok", "ok"]
    for output in nb.cells[1].outputs:
        if RECORD_MIME in output.get("data", {}):
            output["data"][RECORD_MIME]["messages"] = "corrupted"
    held = (nb.cells[1].metadata.get("fuxi") or {}).get("record")
    if isinstance(held, dict):  # the copy a frontend extension keeps in the metadata
        held["messages"] = "corrupted"
    nbformat.write(nb, path)
    again = nbformat.read(path, as_version=4)
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path, ANTHROPIC_API_KEY="")
                          ) as frontend:
        log = _Logged(frontend)
        assert frontend.execute(again.cells[0]) == "ok"
        assert frontend.execute(again.cells[1]) == "error"
    said = "".join(o.get("text", "") for o in again.cells[1].outputs)
    assert "record cannot be read" in said and "messages" in said
    shown = [m["content"]["data"] for m in log.messages if m["header"]["msg_type"] ==
             "display_data" and RECORD_MIME in m["content"].get("data", {})]
    assert shown, "the saved transcript is shown again"
    for data in shown:
        assert isinstance(data["text/markdown"], str), data["text/markdown"][:3]
        assert isinstance(data["text/plain"], str)


# -- kernel: `%fuxi sessions` --------------------------------------------------------------

def _uuid_notebook(tmp_path: Path, *sources: str) -> tuple[Path, Any]:
    """A notebook as JupyterLab makes it: 36-character cell ids."""
    import uuid

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s, id=str(uuid.uuid4()))
                for s in ("%load_ext fuxi_notebook", *sources)]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path, nb


def _table(cell: Any) -> str:
    return "".join(o["data"]["text/plain"] for o in cell.outputs if "data" in o)


def test_fuxi_sessions_shows_short_cell_ids_and_no_fork_after_a_cell_is_lost(tmp_path,
                                                                             server):
    """Finding 6: `%fuxi sessions` showed 36-character cell ids, and after a cell's record
    was gone it called the session of the cell below it a fork."""
    server.add(Turn([text("one")]), Turn([text("two")]))
    path, nb = _uuid_notebook(tmp_path, "%%fuxi --new\none", "%%fuxi\ntwo", "%fuxi sessions")
    first, second = nb.cells[1].id, nb.cells[2].id
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok"] * 4
        table = _table(nb.cells[3])
        assert f"| {first[:8]}, {second[:8]} |" in table, table
        assert first not in table and second not in table
        del nb.cells[1]  # the first cell is deleted, the notebook saved, the kernel restarted
        nbformat.write(nb, path)
        frontend.restart()
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[2]) == "ok"
    table = _table(nb.cells[2])
    assert f"| {second[:8]} (continues cell {first[:8]}, no longer in the notebook) |" in \
        table, table
    assert "fork" not in table


def test_resume_takes_the_short_cell_id_fuxi_sessions_shows(tmp_path, server):
    server.add(Turn([text("one")]), Turn([text("two")]), Turn([text("three")]))
    path, nb = _uuid_notebook(tmp_path, "%%fuxi --new\none", "%%fuxi --new\ntwo")
    with NotebookFrontend(cwd=str(tmp_path), env=_env(server, path)) as frontend:
        assert [frontend.execute(cell) for cell in nb.cells] == ["ok"] * 3
        nbformat.write(nb, path)
        resumed = nbformat.v4.new_code_cell(f"%%fuxi --resume {nb.cells[1].id[:8]}\nthree")
        assert frontend.execute(resumed) == "ok", resumed.outputs
    sent = server.requests[-1]["messages"]
    assert "one" in str(sent) and "two" not in str(sent[:-1])
