"""Issue 35, the split-secret class where a text is cut, in a real kernel: a `%%fuxi` cell
whose tool outputs are longer than the tool's cap, each with a secret of the shared
corpus (`tests/sessions/split_secrets.py`) right where the cap cuts it (the head's end,
the tail's start); a running command's output so far, capped the same way; a command
whose secret straddles the end of the card's one-line summary. Nothing the kernel sends
(the live view, the final transcript, the record the notebook keeps) shows any part of a
secret.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import pytest

from fuxi_notebook._internal.notebook.kernel.capture import DISPLAY_TEXT_LIMIT
from fuxi_notebook._internal.tools.progress import PROGRESS_CHARS
from fuxi_notebook.testing import Turn, text, tool_use

from ..sessions.split_secrets import CORPUS, ENV, SplitCase, leaks
from .kernel_harness import loaded_kernel

#: what the kernel's redaction knows (it is given no explicit secrets)
CASES = [case for case in CORPUS if not case.explicit]
#: the head and the tail a display's text keeps for the model
DISPLAY_HALF = DISPLAY_TEXT_LIMIT // 2
#: the characters of a command's first line its one-line summary shows
SUMMARY_CHARS = 120


@pytest.fixture(scope="module")
def kernel(api, tmp_path_factory):
    harness = loaded_kernel(api, tmp_path_factory.mktemp("cut-secrets"), **ENV)
    yield harness
    harness.close()


@pytest.fixture
def fresh(kernel, api):
    api.reset()
    kernel.run("%fuxi reset")
    return kernel


def _filler(size: int, char: str = ".") -> str:
    """`size` characters of lines that hold no secret (each ends a line)."""
    lines, left = [], size
    while left > 0:
        width = min(100, left)
        lines.append(char * (width - 1) + "\n")
        left -= width
    return "".join(lines)


def _middle(case: SplitCase) -> int:
    """A position inside the case's (first) hidden part: a cut there splits the secret."""
    hidden = case.hidden[0]
    return case.text.index(hidden) + len(hidden) // 2


def _cut_at_head(case: SplitCase, half: int) -> str:
    """A text whose head, capped to `half` characters, ends inside the secret."""
    return _filler(half - _middle(case)) + case.text + "," * (half + 500)


def _cut_at_tail(case: SplitCase, half: int) -> str:
    """A text whose tail, capped to `half` characters, starts inside the secret."""
    return _filler(half + 500) + case.text + "," * (half - (len(case.text) - _middle(case)))


def _sent(messages: list[dict[str, Any]]) -> str:
    return json.dumps([m["content"] for m in messages], default=str)


def test_a_capped_display_shows_no_part_of_a_secret_the_cap_cut(fresh, api):
    """The Python tool caps each display's text for the model (head and tail): the call's
    result, kept in the record and shown in the transcript, holds both cuts."""
    calls = []
    for number, case in enumerate(CASES):
        for how, output in (("head", _cut_at_head(case, DISPLAY_HALF)),
                            ("tail", _cut_at_tail(case, DISPLAY_HALF))):
            name = f"out-{number}-{how}.txt"
            (fresh.work / name).write_text(output)  # the code holds no secret
            code = (f"from IPython.display import display\n"
                    f"display({{'text/plain': open({name!r}).read()}}, raw=True)")
            calls.append(tool_use("Python", {"code": code}))
    api.add(Turn([text("Showing the outputs."), *calls]), Turn([text("All shown.")]))
    result = fresh.run("%%fuxi --allowed-tools Python\nshow the outputs")
    assert result.status == "ok", result.messages
    sent = _sent(result.messages)
    assert "All shown." in sent
    assert sent.count("characters truncated") >= len(calls)  # each result was capped
    with mock.patch.dict(os.environ, ENV):
        assert [case.name for case in CASES if leaks(case, sent)] == []
    # what the model was given is the output as it was (the cap, not redaction, cut it)
    results = json.dumps(api.requests[1]["messages"][-1]["content"])
    assert any(leaks(case, results) for case in CASES)


def test_a_running_commands_output_so_far_shows_no_part_of_a_secret_its_cap_cut(fresh, api):
    """The card's "Output so far" while a command waits: its report is capped head and
    tail, and the card shows the last lines, where the tail starts inside a secret."""
    case = next(case for case in CASES if case.name == "anthropic key")
    output = _filler(PROGRESS_CHARS) + case.text + "," * (
        PROGRESS_CHARS // 2 - (len(case.text) - _middle(case)) - 1) + "\n"
    (fresh.work / "progress.txt").write_text(output)
    go = fresh.work / "go-progress"
    go.unlink(missing_ok=True)
    command = "cat progress.txt; while [ ! -e go-progress ]; do sleep 0.05; done"
    # the card shows the output so far, up to its last line, while the call waits
    result = _run_while_shown(fresh, api, command, go, "progress", ",,,,,,,,,,")
    with mock.patch.dict(os.environ, ENV):
        assert not leaks(case, _sent(result.messages))


def _run_while_shown(fresh, api, command: str, go, cell_id: str, marker: str):
    """Run a Bash call of `command` (it waits for the file `go`) and let it end once the
    cell's card shows `marker`; the cell's result."""
    api.add(Turn([tool_use("Bash", {"command": command})]), Turn([text("done")]))
    msg_id = fresh.send("%%fuxi --allowed-tools Bash\nrun it", cell_id=cell_id)
    try:
        fresh.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                       and m["msg_type"] in ("display_data", "update_display_data")
                       and marker in json.dumps(m["content"]["data"]))
    finally:
        go.write_text("")
    result = fresh.wait(msg_id)
    assert result.status == "ok"
    return result


def _summary_cut(case: SplitCase) -> str:
    """A one-line command (it waits for a file) whose comment holds the secret across the
    end of the summary."""
    start = "while [ ! -e go-summary ]; do sleep 0.05; done # "
    pad = SUMMARY_CHARS - len(start) - 1 - _middle(case)
    assert pad > 0
    return start + "." * pad + " " + case.text.rstrip("\n")


@pytest.mark.parametrize("case", [c for c in CASES if "\n" not in c.text.rstrip("\n")],
                         ids=lambda case: case.name)
def test_a_call_summary_shows_no_part_of_a_secret_its_cut_splits(fresh, api, case):
    """The card's one-line summary of the command, drawn while the call runs."""
    go = fresh.work / "go-summary"
    go.unlink(missing_ok=True)
    # the card is drawn while the call waits
    result = _run_while_shown(fresh, api, _summary_cut(case), go, f"summary-{case.name}",
                              "sleep 0.05")
    with mock.patch.dict(os.environ, ENV):
        assert not leaks(case, _sent(result.messages))
