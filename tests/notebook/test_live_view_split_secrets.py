"""Issue 35, the class "a secret split across the pieces of a stream", in the live view's
model (pure Python): the model's text, cut at every position of every secret of the
shared corpus, never shows a part of it between two deltas, and shows, once the block
ended, what redacting it whole gives. (The real kernel's displays:
`test_kernel_output_redaction.py`.)"""

from __future__ import annotations

import os
from unittest import mock

import pytest

from fuxi_notebook._internal.notebook.display.view import LiveView
from fuxi_notebook._internal.sessions.redact import redact_text
from fuxi_notebook._internal.sessions.text.markdown import escape_math
from fuxi_notebook.types import AssistantMessage, StreamEvent, TextBlock

from ..sessions.split_secrets import CORPUS, ENV, every_cut, leaks

CASES = [case for case in CORPUS if not case.explicit]


def _event(event: dict) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="s", event=event)


def _shown(view: LiveView) -> str:
    return view.markdown(status=False) + "\n" + view.text(status=False)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_live_views_text_never_shows_part_of_a_secret(case):
    with mock.patch.dict(os.environ, ENV):
        whole = redact_text(case.text)
        for pieces in [*every_cut(case), list(case.text)]:
            view = LiveView()
            view.apply(_event({"type": "message_start", "message": {}}))
            view.apply(_event({"type": "content_block_start", "index": 0,
                               "content_block": {"type": "text", "text": ""}}))
            for piece in pieces:
                view.apply(_event({"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": piece}}))
                assert not leaks(case, _shown(view)), (pieces, _shown(view))
                assert whole.startswith(view.text(status=False))
            view.apply(_event({"type": "content_block_stop", "index": 0}))
            view.apply(AssistantMessage(content=[TextBlock(case.text)], model="m"))
            assert view.text(status=False) == whole  # once, and whole
            assert view.markdown(status=False) == escape_math(whole)
