"""Issue 35 in a real kernel: what leaves it is redacted in every field a person sees or a
notebook keeps (finding 13: a display's metadata, a result's, an update's; the execute
reply's traceback, a help page, an inspection, an input prompt), and a secret split
across the pieces of a stream never shows in part (the class: kernel streams, fd output
of a process left running, the live view's text and a running call's output so far).

The split secrets are the shared corpus (`tests/sessions/split_secrets.py`).
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import pytest

from fuxi_notebook._internal.sessions.redact import StreamRedactor, redact_text
from fuxi_notebook.testing import Fault, Turn, text, tool_use

from ..sessions.split_secrets import CORPUS, ENV, leaks
from .kernel_harness import loaded_kernel, wait_until

SECRET = "s3cr3t-For-the-output-fields-77"
BY_NAME = {case.name: case for case in CORPUS}
#: what the kernel's redaction knows: secret-named environment values and shapes (it is
#: given no explicit secrets)
KERNEL_CASES = [case for case in CORPUS if not case.explicit]


@pytest.fixture(scope="module")
def kernel(api, tmp_path_factory):
    harness = loaded_kernel(api, tmp_path_factory.mktemp("output-redaction"),
                            FUXI_TEST_SERVICE_TOKEN=SECRET, **ENV)
    harness.run("import os, sys, json, pathlib, time\n"
                "from IPython.display import display\n"
                "S = os.environ['FUXI_TEST_SERVICE_TOKEN']")
    yield harness
    harness.close()


@pytest.fixture(autouse=True)
def _secret_environment():
    """The corpus's secret environment value, here too (to compute what is expected)."""
    with mock.patch.dict(os.environ, ENV):
        yield


def _sent(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, default=str)


# -- finding 13: every field that shows --------------------------------------------------

SHOWN = {
    "a display's metadata": "display({'text/plain': 'shown'}, raw=True,\n"
    "        metadata={'k': S, 'deep': [{'v': 'token=' + S}]})",
    "an update's metadata": "h = display({'text/plain': 'a'}, raw=True, display_id=True)\n"
    "h.update({'text/plain': 'b'}, raw=True, metadata={'k': S})",
    "a result's metadata": "class R:\n"
    "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
    "        return {'text/plain': 'ok'}, {'text/plain': {'k': S}}\n"
    "R()",
    "a display's data": "display({'text/plain': S, 'application/json': {'k': [S]}}, raw=True)",
    "an error": "raise RuntimeError('failed with ' + S)",
    "a help page": "S?",
}


@pytest.mark.parametrize("how", sorted(SHOWN))
def test_a_secret_leaves_the_kernel_in_no_field(fresh, how):
    result = fresh.run(SHOWN[how])
    sent = _sent([*result.messages, result.reply])
    assert SECRET not in sent
    assert "[REDACTED]" in sent  # it was there, and was replaced


def test_a_secret_in_metadata_is_replaced_where_it_was(fresh):
    result = fresh.run(SHOWN["an update's metadata"] + "\n" + SHOWN["a result's metadata"])
    [update] = result.updates
    [shown] = [d for d in result.displays if d["data"] == {"text/plain": "ok"}]
    assert update["metadata"] == {"k": "[REDACTED]"}
    assert shown["metadata"] == {"text/plain": {"k": "[REDACTED]"}}


def test_ids_are_left_as_they_are(fresh):
    """A display id (transient: neither shown nor saved) is how an update finds its
    display, even one that reads like a secret; message ids and parents are the
    protocol's."""
    result = fresh.run("h = display({'text/plain': 'a'}, raw=True, display_id='password=d7')\n"
                       "h.update({'text/plain': 'b'}, raw=True)")
    [first] = [d for d in result.displays if d["data"] == {"text/plain": "a"}]
    [update] = result.updates
    assert first["transient"] == update["transient"] == {"display_id": "password=d7"}
    ids = [m["header"]["msg_id"] for m in result.messages]
    assert len(set(ids)) == len(ids) and all(ids)


def test_an_inspection_shows_no_secret(fresh):
    msg_id = fresh.kc.inspect("S", 1)
    reply = fresh.wait(msg_id).reply
    assert reply["content"]["found"]
    shown = _sent([reply])
    assert SECRET not in shown and "[REDACTED]" in shown


def test_an_input_prompt_shows_no_secret(fresh):
    msg_id = fresh.kc.execute("typed = input('the key is ' + S + ': ')", allow_stdin=True)
    request = fresh.kc.get_stdin_msg(timeout=30)
    fresh.kc.input("fine")
    assert fresh.wait(msg_id).status == "ok"
    assert request["content"]["prompt"] == "the key is [REDACTED]: "
    assert fresh.run("print(typed)").stdout == "fine\n"  # nothing the user typed is lost


# -- the class: a secret split across the pieces of a stream -----------------------------

def _writes(pieces_of: str) -> str:
    """Code that writes the texts of `pieces_of` (a JSON list of lists), piece by piece,
    each piece flushed (a message of its own)."""
    return ("for pieces in json.loads(" + repr(pieces_of) + "):\n"
            "    for piece in pieces:\n"
            "        sys.stdout.write(piece); sys.stdout.flush()")


def test_every_secret_split_anywhere_reaches_the_cell_whole_and_redacted(fresh):
    streams = [[case.text[:cut], case.text[cut:]]
               for case in KERNEL_CASES for cut in range(1, len(case.text))]
    result = fresh.run(_writes(json.dumps(streams)), timeout=120)
    expected = "".join(redact_text(case.text) * (len(case.text) - 1) for case in KERNEL_CASES)
    assert result.stdout == expected
    pieces = [m["content"]["text"] for m in result.messages if m["msg_type"] == "stream"]
    assert len(pieces) > len(KERNEL_CASES)  # it did come in pieces
    assert not [case.name for case in KERNEL_CASES if leaks(case, result.stdout)]


#: (case, where its first write ends): each first write holds a start that cannot be
#: told yet, or a secret that its next write goes on
WAITING = [("password pair", len("password=Hw7Q")),
           ("anthropic key", len("the key sk-ant-api03-Xy7Gq2Lw9Pz4Km8Rt1Vb")),
           ("secret environment value", len("env value Vq8Lm2X")),
           ("private key", len("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKC"))]


@pytest.mark.parametrize(("name", "cut"), WAITING, ids=[name for name, _ in WAITING])
def test_what_waited_is_sent_in_time_and_the_rest_of_its_secret_never(fresh, name, cut):
    """The first write waits for the next; the next does not come (the code waits for a
    file): what waited is sent all the same, before the cell ends; the rest of the
    secret, when it comes, does not show."""
    case = BY_NAME[name]
    first, rest = case.text[:cut], case.text[cut:]
    redactor = StreamRedactor()
    shown_first = redactor.feed(first) + redactor.flush()
    go = fresh.work / "go-on"
    go.unlink(missing_ok=True)
    msg_id = fresh.send(f"sys.stdout.write({first!r}); sys.stdout.flush()\n"
                        "while not pathlib.Path('go-on').exists(): time.sleep(0.01)\n"
                        f"sys.stdout.write({rest!r}); sys.stdout.flush()")
    try:
        wait_until(lambda: _stdout(fresh, msg_id) == shown_first)
    finally:
        go.write_text("")
    result = fresh.wait(msg_id)
    assert result.stdout.startswith(shown_first)
    assert not leaks(case, result.stdout, received_from=cut), result.stdout
    assert result.stdout.endswith(case.text[case.text.rfind(case.hidden[-1])
                                            + len(case.hidden[-1]):])


def test_a_stream_that_never_pauses_is_not_held_for_ever(fresh):
    """A word that keeps growing (it could always still become a key) is sent all the
    same, while the code still writes."""
    msg_id = fresh.send("while not pathlib.Path('stop-now').exists():\n"
                        "    sys.stdout.write('x'); sys.stdout.flush(); time.sleep(0.05)")
    try:
        wait_until(lambda: _stdout(fresh, msg_id).startswith("xxx"))
    finally:
        (fresh.work / "stop-now").write_text("")
    fresh.wait(msg_id)
    (fresh.work / "stop-now").unlink()


def test_held_text_keeps_its_place_before_what_follows_it(fresh):
    result = fresh.run("sys.stdout.write('the password'); sys.stdout.flush()\n"
                       "display({'text/plain': 'then a display'}, raw=True)\n"
                       "print(' and more')")
    shown: list[str] = []  # consecutive stream messages joined, as a notebook keeps them
    for message in result.messages:
        if message["msg_type"] == "stream" and shown and shown[-1].startswith("stream:"):
            shown[-1] += message["content"]["text"]
        elif message["msg_type"] == "stream":
            shown.append("stream:" + message["content"]["text"])
        elif message["msg_type"] == "display_data":
            shown.append(message["content"]["data"]["text/plain"])
    assert shown == ["stream:the password", "then a display", "stream: and more\n"]


def _stdout(fresh: Any, msg_id: str) -> str:
    return "".join(m["content"]["text"] for m in fresh.messages(msg_id)
                   if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")


def test_a_process_left_running_writes_a_split_secret_redacted(fresh, api):
    """After the Python call returned, a process it started goes on writing to fd 1 in
    pieces (`fd_capture.py` passes it on, then the kernel's stream)."""
    case = BY_NAME["password pair"]
    cut = len("password=Hw7Q")
    (fresh.work / "split-late.txt").write_text(case.text)  # the code holds no secret
    script = ("while [ ! -e go-late ]; do sleep 0.05; done; "
              f"head -c {cut} split-late.txt; sleep 0.05; tail -c +{cut + 1} split-late.txt")
    code = f"import subprocess\nsubprocess.Popen(['sh', '-c', {script!r}])"
    api.add(Turn([tool_use("Python", {"code": code})]), Turn([text("done")]))
    assert fresh.run("%%fuxi --allowed-tools Python\nstart it").status == "ok"
    mark = fresh.iopub_count()
    (fresh.work / "go-late").write_text("")
    try:
        wait_until(lambda: "rest" in _streamed_since(fresh, mark))
    finally:
        (fresh.work / "go-late").unlink()
    shown = _streamed_since(fresh, mark)
    assert "password=[REDACTED]" in shown and not leaks(case, shown)


def _streamed_since(fresh: Any, mark: int) -> str:
    return "".join(m["content"]["text"] for m in fresh.messages_since(mark)
                   if m["msg_type"] == "stream")


# -- the live view: a running call's output so far, the model's answer --------------------

def _views(result: Any) -> str:
    """Everything the cell's displays and their updates showed, joined."""
    return _sent([m["content"] for m in result.messages
                  if m["msg_type"] in ("display_data", "update_display_data")])


RUNNING = {  # the output, in two writes, of a file the test wrote (the code holds no secret)
    "Bash": lambda cut: {"command": (
        f"head -c {cut} split.txt; while [ ! -e go-call ]; do sleep 0.05; done; "
        f"tail -c +{cut + 1} split.txt")},
    "Python": lambda cut: {"code": (
        "import pathlib, time\nwritten = pathlib.Path('split.txt').read_text()\n"
        f"print(written[:{cut}], end='', flush=True)\n"
        "while not pathlib.Path('go-call').exists(): time.sleep(0.05)\n"
        f"print(written[{cut}:], end='')")},
}


@pytest.mark.parametrize("tool", sorted(RUNNING))
def test_a_running_calls_output_never_shows_part_of_a_secret(fresh, api, tool):
    case = BY_NAME["anthropic key"]
    cut = len("the key sk-ant-api03-Xy7Gq2Lw9P")  # too short yet to be told a key
    (fresh.work / "split.txt").write_text(case.text)
    api.add(Turn([tool_use(tool, RUNNING[tool](cut))]), Turn([text("done")]))
    go = fresh.work / "go-call"
    go.unlink(missing_ok=True)
    msg_id = fresh.send(f"%%fuxi --allowed-tools {tool}\nprint the key", cell_id="running")
    try:  # the card shows the output so far while the call waits
        fresh.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                       and m["msg_type"] in ("display_data", "update_display_data")
                       and "Output so far" in json.dumps(m["content"]["data"]))
    finally:
        go.write_text("")
    result = fresh.wait(msg_id)
    assert result.status == "ok"
    views = _views(result)
    assert "the key [REDACTED] works" in views  # the output, whole, once the call ended
    assert not leaks(case, views), views


def test_the_models_answer_never_shows_part_of_a_secret_while_it_streams(fresh, api):
    """The answer stops mid-secret (the stream stalls there, then is dropped and tried
    again): the live view, drawn meanwhile, shows the text before the secret only."""
    case = BY_NAME["anthropic key"]
    cut = len("the key sk-ant-api03-Xy7Gq2Lw9P")
    api.chunk = cut
    api.add(Fault(turn=Turn([text(case.text)]), cut_after_events=3, stall_seconds=2),
            Turn([text(case.text)]))
    try:
        msg_id = fresh.send("%%fuxi\nwhat is the key?", cell_id="answer")
        fresh.wait_for(lambda m: m["parent_header"].get("msg_id") == msg_id
                       and m["msg_type"] in ("display_data", "update_display_data")
                       and "the key" in json.dumps(m["content"]["data"]))
        result = fresh.wait(msg_id)
    finally:
        api.chunk = 24
    views = _views(result)
    assert "the key [REDACTED] works" in views  # the whole answer, in the end
    assert not leaks(case, views), views
