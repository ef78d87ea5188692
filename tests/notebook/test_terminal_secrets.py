"""Issue 35 in terminal IPython's renderer (`TextRenderer`), which prints straight to the
terminal (no kernel redacts on the way):

- the model's answer streams as deltas cut at every position of every secret of the
  shared corpus (`tests/sessions/split_secrets.py`): nothing printed shows any part of a
  secret, and what is printed, joined, is what redacting the whole answer gives;
- a call's result, summary and every line are printed redacted;
- the approval question shows the call's whole input, every field (a Bash call's
  `description` and `timeout` too), what the call does beyond its input (`shown`: the
  source a RunCell runs), hidden characters escaped with a warning, secrets redacted.

In a real terminal IPython too (`test_terminal_prints_no_part_of_a_secret`).
"""

from __future__ import annotations

import os
from unittest import mock

import pytest

from fuxi_notebook._internal.notebook.display.render import TextRenderer
from fuxi_notebook._internal.sessions.redact import REDACTED, redact_text
from fuxi_notebook.options import PermissionUpdate, ToolPermissionContext
from fuxi_notebook.testing import Turn, text, tool_use
from fuxi_notebook.types import (
    AssistantMessage,
    StreamEvent,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from ..sessions.split_secrets import CORPUS, ENV, every_cut, leaks

CASES = [case for case in CORPUS if not case.explicit]  # the renderer knows no explicit ones
BY_NAME = {case.name: case for case in CORPUS}


@pytest.fixture(autouse=True)
def _secret_environment():
    with mock.patch.dict(os.environ, ENV):
        yield


def _event(event: dict) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="s", event=event)


def _stream(renderer: TextRenderer, pieces: list[str], printed: list[str], case) -> None:
    renderer.on_message(_event({"type": "message_start", "message": {}}))
    renderer.on_message(_event({"type": "content_block_start", "index": 0,
                                "content_block": {"type": "text", "text": ""}}))
    for piece in pieces:
        renderer.on_message(_event({"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": piece}}))
        assert not leaks(case, "".join(printed)), (pieces, printed)
    renderer.on_message(_event({"type": "content_block_stop", "index": 0}))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_streamed_answer_never_prints_part_of_a_secret(case):
    whole = redact_text(case.text)
    for pieces in [*every_cut(case), list(case.text)]:
        printed: list[str] = []
        renderer = TextRenderer(write=printed.append)
        _stream(renderer, pieces, printed, case)
        assert "".join(printed) == whole, pieces  # once the block ended: all of it
        renderer.on_message(AssistantMessage(content=[TextBlock(case.text)], model="m"))
        assert "".join(printed) == whole  # the whole message prints nothing again


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_line_printed_mid_block_never_lets_the_rest_of_a_secret_follow(case):
    """A line (a call, a note) comes while the block holds the start of a secret: what
    it held is printed as it stands; the rest of the secret, arriving after, is not."""
    for cut in range(1, len(case.text)):
        printed: list[str] = []
        renderer = TextRenderer(write=printed.append)
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
        renderer.on_message(_event({**delta, "delta": {**delta["delta"],
                                                       "text": case.text[:cut]}}))
        renderer._line("a note")
        renderer.on_message(_event({**delta, "delta": {**delta["delta"],
                                                       "text": case.text[cut:]}}))
        renderer.on_message(AssistantMessage(content=[TextBlock(case.text)], model="m"))
        assert not leaks(case, "".join(printed), received_from=cut), (cut, printed)


def test_a_calls_summary_and_result_print_redacted():
    case = BY_NAME["password pair"]
    printed: list[str] = []
    renderer = TextRenderer(write=printed.append)
    call = ToolUseBlock(id="t1", name="Bash", input={"command": f"echo {case.text.strip()}"})
    renderer.on_message(AssistantMessage(content=[call], model="m"))
    renderer.on_message(UserMessage(content=[ToolResultBlock(tool_use_id="t1",
                                                             content=case.text)]))
    shown = "".join(printed)
    assert "Bash" in shown and "password=[REDACTED]" in shown
    assert not leaks(case, shown)


def _asked(tool_name: str, tool_input: dict, context: ToolPermissionContext) -> str:
    printed: list[str] = []
    renderer = TextRenderer(write=printed.append, read=lambda prompt: "n")
    answer = renderer._ask(tool_name, tool_input, context)
    assert answer[0] == "deny"
    return "".join(printed)


def test_the_approval_question_shows_every_field_and_what_runs_beyond_the_input():
    key = BY_NAME["anthropic key"]
    tool_input = {"command": "true\nbash -c 'touch PWNED'", "description": "list\u202e",
                  "timeout": 5000, "env_note": key.text.strip()}
    context = ToolPermissionContext(
        tool_use_id="t1", decision_reason="asks: Bash", shown={"source": "rm -rf data\n"},
        suggestions=[PermissionUpdate(type="addRules", rules=["Bash(true)"],
                                      behavior="allow")])
    shown = _asked("Bash", tool_input, context)
    assert "bash -c 'touch PWNED'" in shown  # the second line of the command
    assert "description: list\\u202e" in shown and "\u202e" not in shown
    assert "! this input contains" in shown  # the warning names what was escaped
    assert "timeout: 5000" in shown
    assert "source, as it is now" in shown and "rm -rf data" in shown
    assert f"env_note: the key {REDACTED} works" in shown and not leaks(key, shown)
    assert "[a]lways adds Bash(true)" in shown and "asks: Bash" in shown


def test_the_approval_question_of_a_call_without_input_says_so():
    shown = _asked("Ping", {}, ToolPermissionContext(tool_use_id="t1"))
    assert "? Allow Ping:" in shown and "(no input)" in shown


# -- in a real terminal IPython -------------------------------------------------------------

@pytest.mark.timeout(120)
def test_terminal_prints_no_part_of_a_secret(tmp_path, fake_api):
    """The answer streams in pieces of 24 characters (each secret of the corpus split);
    the approval question shows every field of the call; nothing the terminal printed
    shows any part of a secret."""
    import io

    pytest.importorskip("pexpect")
    from .test_terminal import _cell, _ipython

    answer = "".join(case.text for case in CASES)
    key = BY_NAME["github token"]
    call = {"command": "touch asked", "description": "check " + key.text.strip(), "timeout": 5000}
    fake_api.add(Turn([text(answer), tool_use("Bash", call)]), Turn([text("Understood.")]))
    child = _ipython(tmp_path, fake_api)  # its environment holds the secret value (ENV)
    child.logfile_read = shown = io.StringIO()
    try:
        _cell(child, "%%fuxi", "tell me everything")
        child.expect(r"\[n\]o: ")
        child.sendline("n")
        child.expect("reason")
        child.sendline("")
        child.expect("Understood.")
        child.expect(r"In \[\d+\]: ")
    finally:
        child.sendline("exit")
        child.close(force=True)
    printed = shown.getvalue().replace("\r\n", "\n")
    assert [case.name for case in CASES if leaks(case, printed)] == []
    assert "description: check gh [REDACTED] ok" in printed and "timeout: 5000" in printed
