"""Issue 35, the split-secret class where a text is cut rather than streamed: a cap that
cuts a text before it is redacted can drop the start that makes a secret recognisable and
let its rest through. Every cut of the shared corpus (`split_secrets.py`), at every
position of every secret, by each cap a tool uses (`tools/truncate.py`: head and tail, a
buffer that dropped its middle, one long line) and by each cut made above the tools (a
summary, a capped detail, `redact.redacted_head`): what leaves, redacted, shows no part
of the secret. (Where a user sees it: `tests/notebook/test_kernel_cut_secrets.py`,
`tests/acp/test_acp_cut_secrets.py`, `tests/notebook/test_terminal_secrets.py`.)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.sessions.redact import REDACTED, redact, redact_text, redacted_head
from fuxi_notebook._internal.sessions.text.transcript import input_summary
from fuxi_notebook._internal.tools.truncate import HeadTailBuffer, cap_head_tail, cap_line

from .split_secrets import CORPUS, ENV, SplitCase, leaks

LIMIT = 200
HALF = LIMIT // 2
#: the characters of an input's first line a call's one-line summary shows
SUMMARY = 120
#: cases on one line that a channel given no explicit secrets knows (the live view, a
#: terminal, an ACP client)
ONE_LINE = [case for case in CORPUS if not case.explicit and "\n" not in case.text.rstrip("\n")]


@pytest.fixture(autouse=True)
def _secret_environment():
    with mock.patch.dict(os.environ, ENV):
        yield


def _filler(size: int, char: str = ".") -> str:
    """`size` characters of output that hold no secret, ending a line."""
    return "" if size <= 0 else char * (size - 1) + "\n"


def _positions(case: SplitCase) -> Iterator[int]:
    """Every position inside the case's text (a cut there splits it)."""
    yield from range(1, len(case.text))


def _head_cut_at(case: SplitCase, at: int) -> str:
    """A text whose head (the first `HALF` characters) ends `at` characters into the case."""
    return _filler(HALF - at) + case.text + _filler(LIMIT + 50, ",")


def _tail_cut_at(case: SplitCase, at: int) -> str:
    """A text whose tail (the last `HALF` characters) starts `at` characters into the case."""
    return _filler(LIMIT + 50) + case.text + _filler(HALF - (len(case.text) - at), ",")


def _shown(case: SplitCase, capped: str) -> str:
    return redact_text(capped, secrets=case.secrets)


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.name)
def test_a_head_and_tail_cap_cut_anywhere_in_a_secret_shows_no_part_of_it(case):
    for at in _positions(case):
        for text in (_head_cut_at(case, at), _tail_cut_at(case, at)):
            capped = cap_head_tail(text, LIMIT)
            assert capped != text
            shown = _shown(case, capped)
            assert not leaks(case, shown), (at, shown)
            assert _shown(case, shown) == shown  # redacting again changes nothing


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.name)
def test_a_buffer_that_dropped_its_middle_shows_no_part_of_a_secret_it_cut(case):
    """The bytes kept of a command's output: the head buffer ends, or the tail buffer
    starts, inside the secret (and the middle between them is gone)."""
    for at in _positions(case):
        head = HeadTailBuffer(HALF, HALF)
        head.feed((_filler(HALF - at) + case.text + _filler(3 * LIMIT, ",")).encode())
        tail = HeadTailBuffer(HALF, HALF)
        tail.feed((_filler(3 * LIMIT) + case.text + _filler(HALF - (len(case.text) - at), ","))
                  .encode())
        for buffer in (head, tail):
            assert buffer.dropped
            shown = _shown(case, buffer.text(LIMIT))
            assert not leaks(case, shown), (at, shown)


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.name)
def test_a_capped_line_shows_no_part_of_a_secret_it_cut(case):
    line = case.text.replace("\n", " ")
    one_line = SplitCase(case.name, line, case.hidden if "\n" not in case.hidden[0] else (),
                         case.secrets, case.env)
    for at in _positions(one_line):
        shown = _shown(one_line, cap_line(line, at) + "\n12\tnext line")
        assert not leaks(one_line, shown), (at, shown)
        assert shown.endswith("\n12\tnext line")  # what follows the cut line is kept


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.name)
def test_redacted_head_is_redacted_whole_then_cut(case):
    whole = redact_text(case.text, secrets=case.secrets)
    for at in _positions(case):
        head, more = redacted_head(case.text, at, secrets=case.secrets)
        assert not leaks(case, head), (at, head)
        assert head == whole[:at] and more == max(0, len(whole) - at)


@pytest.mark.parametrize("case", ONE_LINE, ids=lambda case: case.name)
def test_a_calls_one_line_summary_shows_no_part_of_a_secret_its_cut_splits(case):
    """What the live view's card and the terminal print of a call before anything else
    redacts it: the telling field's first line, or the input as JSON, cut to one line."""
    line = case.text.rstrip("\n")
    for at in _positions(case):
        command = "." * (SUMMARY - at - 1) + " " + line
        for tool_input in ({"command": command}, {"command": command + "\nls"},
                           {"other": command}):
            shown = redact_text(input_summary("Bash", tool_input))
            assert not leaks(case, shown), (at, shown)


def test_a_cut_leaves_what_holds_no_secret_as_it_was():
    text = "building wheel\nstep 1 done\n" * 20 + "all fine\n"
    capped = cap_head_tail(text, LIMIT)
    shown = redact_text(capped)
    assert REDACTED not in shown
    head, tail = capped.split(" truncated] ...\n\n")
    # at most the open end of the head and the first line of the tail are not shown
    assert shown.startswith(head[:HALF - len("step 1 done\n")])
    assert shown.endswith(tail[tail.index("\n"):])
    assert redact({"content": [{"type": "text", "text": capped}]}) == {
        "content": [{"type": "text", "text": shown}]}


#: pieces of text that redaction cares about, to build texts from
_PIECES = ("password", "api_key", "token", "=", ": ", " ", "\n", '"', "'", "sk-ant-api03-",
           "Bearer ", "https://u:", "@h", "Xy7Gq2Lw9Pz4Km8Rt1Vb6Nc3",
           "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "[REDACTED]", "x",
           "{", "}")


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join),
       st.integers(min_value=1, max_value=120))
@example('{"api_key": "Lq8Wz3Tm7Kv2Xn"}\n' * 4, 40)
@example("Authorization: Bearer\nZq7Wm2Tk9Lx4Rv1Np6 next\n" * 3, 44)
@example("x\n\n... [5 characters truncated] ...\n\ny", 3)
@settings(max_examples=400, deadline=None)
def test_redacting_a_cut_text_again_changes_nothing(text, limit):
    for capped in (cap_head_tail(text, limit), cap_line(text, limit)):
        once = redact_text(capped)
        assert redact_text(once) == once
