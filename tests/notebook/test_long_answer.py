"""Issue 36, point 1: a long answer costs what it adds, not what is already on screen.

The live view's model keeps a streaming block in items of at most about `SPLIT_CHARS`
(cut where a paragraph, a line or a word ends; a code block cut in two closed and
reopened); the live renderer ends a display once `FREEZE_CHARS` of it settled and never
draws it again. So each draw (and each message the kernel sends, every one redacted)
holds what is still live. Checked on the model (pure Python), on the renderer with a
publisher that records what it is given, and in a real kernel that runs a long answer as
JupyterLab does (every iopub message counted). No timing is asserted: what is checked is
what is sent.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.notebook.display import render
from fuxi_notebook._internal.notebook.display.render import FREEZE_CHARS, LiveRenderer
from fuxi_notebook._internal.notebook.display.view import SPLIT_CHARS, LiveView, split_text
from fuxi_notebook._internal.sessions.text.markdown import open_fence
from fuxi_notebook.testing import Turn, text
from fuxi_notebook.types import (
    AssistantMessage,
    StreamEvent,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from .publisher import RecordingPublisher

WORDS = ["the", "model", "data", "frame", "column", "value", "region", "sales", "quarter",
         "mean", "trend"]
#: the most one draw of the live view may hold: the settled part before it freezes, the
#: growing item, a card, the status line (markdown; the plain text is smaller)
LIVE_BOUND = FREEZE_CHARS + 2 * SPLIT_CHARS + 4_000


def _answer(size: int, seed: int = 1) -> str:
    """Model-like markdown: paragraphs, lists, code blocks with blank lines in them."""
    rng = random.Random(seed)
    parts, total = [], 0
    while total < size:
        roll = rng.random()
        if roll < 0.15:
            body = "\n".join(f"x_{n} = df['{rng.choice(WORDS)}'].mean()" + ("\n" if n % 5 == 4
                                                                             else "")
                             for n in range(40))
            part = f"```python\n{body}\n```"
        elif roll < 0.25:
            part = "\n".join(f"- {' '.join(rng.choices(WORDS, k=8))}" for _ in range(6))
        else:
            part = " ".join(rng.choices(WORDS, k=rng.randint(5, 400))).capitalize() + "."
        parts.append(part)
        total += len(part) + 2
    return "\n\n".join(parts)[:size]


def _event(event: dict[str, Any]) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="s", event=event)


def _stream(view_or_renderer: Any, answer: str, chunk: int = 16, every: Any = None) -> None:
    """`answer` streamed as one text block, `every(n)` called after each delta."""
    apply = getattr(view_or_renderer, "on_message", None) or view_or_renderer.apply
    apply(_event({"type": "message_start", "message": {}}))
    apply(_event({"type": "content_block_start", "index": 0,
                  "content_block": {"type": "text", "text": ""}}))
    for n, start in enumerate(range(0, len(answer), chunk)):
        apply(_event({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": answer[start:start + chunk]}}))
        if every is not None:
            every(n)
    apply(_event({"type": "content_block_stop", "index": 0}))
    apply(AssistantMessage(content=[TextBlock(answer)], model="m"))


def _words(text: str) -> str:
    return "".join(text.split())


def _unfenced(text: str) -> str:
    """`text` without its fence lines (a cut code block is closed and reopened)."""
    return re.sub(r"(?m)^(```|~~~)\w*$", "", text)


# -- the view's model ----------------------------------------------------------------------

def test_split_text_cuts_where_a_paragraph_then_a_line_then_a_word_ends():
    paragraph = "a" * 900 + "\n\n" + "b" * 400 + "\n" + "c" * 900
    assert split_text(paragraph, 2_000) == ("a" * 900 + "\n\n" + "b" * 400, "c" * 900)
    assert split_text("x" * 1_200 + "\n\n" + "y" * 1_000, 2_000) == ("x" * 1_200, "y" * 1_000)
    assert split_text("x" * 1_200 + "\n" + "y" * 1_000, 2_000) == ("x" * 1_200, "y" * 1_000)
    assert split_text("x" * 1_200 + " " + "y" * 1_000, 2_000) == ("x" * 1_200, "y" * 1_000)
    assert split_text("z" * 2_500, 2_000) == ("z" * 2_000, "z" * 500)  # no word ends


def test_a_code_block_cut_in_two_is_closed_and_reopened():
    code = "```python\n" + "\n".join(f"row_{n} = {n}" for n in range(300)) + "\n```\n"
    head, rest = split_text(code, 2_000)
    assert open_fence(head) is None and head.endswith("\n```")
    assert rest.startswith("```python\n") and open_fence(rest) is None
    tilde = "~~~~\n" + "x = 1\n" * 400 + "~~~~"
    head, rest = split_text(tilde, 2_000)
    assert head.endswith("\n~~~~") and rest.startswith("~~~~\n")


@settings(max_examples=60, derandomize=True, deadline=None)
@given(size=st.integers(0, 30_000), seed=st.integers(0, 10_000),
       chunk=st.sampled_from([1, 7, 16, 300, 5_000]))
@example(size=25_000, seed=3, chunk=16)
@example(size=9_000, seed=0, chunk=5_000)
def test_a_streamed_block_is_kept_in_bounded_self_contained_items(size, seed, chunk):
    answer = _answer(size, seed)
    view = LiveView()
    _stream(view, answer, chunk)
    texts = [value for kind, value in view.items if kind == "text"]
    assert all(len(t) <= SPLIT_CHARS + 40 for t in texts), max(map(len, texts))
    assert all(open_fence(t) is None for t in texts[:-1])  # each renders on its own
    assert len(texts) == 1 or len(texts) >= size // SPLIT_CHARS
    # nothing lost or moved: only where it was cut changed (and fences added there)
    assert _words(_unfenced("\n".join(texts))) == _words(_unfenced(answer))
    assert all(view.settled(i) for i in range(len(view.items)))


def test_while_it_streams_only_the_growing_item_is_unsettled():
    view = LiveView()
    seen: list[list[bool]] = []
    _stream(view, _answer(12_000), every=lambda n: seen.append(
        [view.settled(i) for i in range(len(view.items))]))
    assert all(states[:-1] == [True] * (len(states) - 1) and not states[-1]
               for states in seen if states)


def test_a_long_thinking_block_continues_under_its_own_heading():
    view = LiveView()
    view.apply(_event({"type": "message_start", "message": {}}))
    view.apply(_event({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "thinking", "thinking": ""}}))
    thought = _answer(6_000, 5)
    view.apply(_event({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "thinking_delta", "thinking": thought}}))
    view.apply(_event({"type": "content_block_stop", "index": 0}))
    kinds = [kind for kind, _ in view.items]
    assert kinds[0] == "thinking" and set(kinds[1:]) == {"more-thinking"}
    markdown = view.markdown(status=False)
    assert markdown.count("<summary>Thinking</summary>") == 1
    assert markdown.count("<summary>Thinking (continued)</summary>") == len(kinds) - 1
    assert view.text(status=False).count("(thinking)") == 1


# -- the renderer ----------------------------------------------------------------------------


def test_the_renderer_draws_what_is_live_and_each_finished_display_once(monkeypatch):
    monkeypatch.setattr(render, "Coalescer", _NoCoalescing)
    renderer = LiveRenderer()
    publisher = renderer._publisher = RecordingPublisher()
    show = renderer._show
    redrawn = []

    def watched(shown: Any) -> None:
        if shown.final:
            redrawn.append(shown)
        show(shown)

    renderer._show = watched  # type: ignore[method-assign]
    answer = _answer(200_000, 7)
    _stream(renderer, answer, every=lambda n: renderer._draw() if n % 50 == 0 else None)
    renderer._draw()
    sizes = [len(call["data"]["text/markdown"]) for call in publisher.calls]
    assert max(sizes) <= LIVE_BOUND, max(sizes)
    assert len(renderer.displays) >= len(answer) // (FREEZE_CHARS + 2 * SPLIT_CHARS)
    last_drawn: dict[str, str] = {}
    for call in publisher.calls:
        last_drawn[call["id"]] = call["data"]["text/markdown"]
    finals = [d for d in renderer.displays if d.final]
    assert len(finals) == len(renderer.displays) - 1  # the last holds the status line
    assert not redrawn  # a display is drawn a last time as it ends, then never again
    draws = [sum(call["id"] == shown.handle for call in publisher.calls) for shown in finals]
    assert max(draws) <= (FREEZE_CHARS + SPLIT_CHARS) // (16 * 50) + 2, draws
    whole = "\n\n".join(last_drawn[d.handle] for d in renderer.displays)
    assert _words(whole).startswith(_words(answer)[:1_000])
    assert all(line in whole for line in answer.splitlines()[-5:] if line)
    # what reached the frontend grows with the answer, not with the answer times the draws
    assert sum(sizes) <= 6 * len(answer), sum(sizes) / len(answer)


class _NoCoalescing:
    """The renderer's coalescer without a loop: the test draws when it chooses."""

    def __init__(self, flush: Any, interval: float = 0.0) -> None:
        self.flushes = 0

    def poke(self) -> None:
        pass

    def close(self) -> None:
        pass


# -- a real kernel -----------------------------------------------------------------------------

SECRET = "sk-ant-api03-" + "Q7" * 40 + "AA"


def test_a_long_answer_in_a_kernel_sends_bounded_updates_and_hides_its_secret(fresh, api):
    """A 300,000-character answer streamed in 24-character deltas into a kernel as
    JupyterLab runs it (cell ids, the live view): no message to the frontend holds more than
    the live part of the view; the secret half way through never leaves; the saved cell
    holds the whole answer."""
    head = _answer(150_000, 11)
    answer = f"{head}\n\nThe key was {SECRET} in the config.\n\n{_answer(150_000, 12)}"
    api.add(Turn([text(answer)]))
    start = fresh.iopub_count()
    result = fresh.run("%%fuxi\nwrite a long report", cell_id="cell-long", timeout=300)
    assert result.status == "ok", result.reply
    messages = fresh.messages_since(start)
    assert not any(SECRET[:30] in json.dumps(m["content"]) for m in messages)
    live, cleared = [], False
    for message in messages:
        if message["msg_type"] == "clear_output":
            cleared = True
        elif message["msg_type"] == "update_display_data" and not cleared:
            live.append(len(message["content"]["data"]["text/markdown"]))
    assert live and max(live) <= LIVE_BOUND, max(live)
    end = [m["msg_type"] for m in messages].index("clear_output")
    saved = "".join(m["content"]["data"].get("text/markdown", "") for m in messages[end:]
                    if m["msg_type"] == "display_data")
    assert _words(head)[-2_000:] in _words(saved) and _words(answer)[-2_000:] in _words(saved)
    assert "[REDACTED]" in saved


def test_a_run_of_many_calls_draws_only_its_live_part(monkeypatch):
    """Agent cells with many tool cards grew the same view: 400 calls, each ended,
    leave finished displays behind; a draw holds the last few cards and the status."""
    monkeypatch.setattr(render, "Coalescer", _NoCoalescing)
    renderer = LiveRenderer()
    publisher = renderer._publisher = RecordingPublisher()
    for n in range(400):
        call = ToolUseBlock(id=f"toolu_{n}", name="Read", input={"file_path": f"data_{n}.csv"})
        renderer.on_message(AssistantMessage(content=[TextBlock(f"Reading part {n}."), call],
                                             model="m"))
        renderer._draw()
        result = ToolResultBlock(tool_use_id=f"toolu_{n}", content="a,b\n" * 400)
        renderer.on_message(UserMessage(content=[result]))
        renderer._draw()
    sizes = [len(call["data"]["text/markdown"]) for call in publisher.calls]
    assert max(sizes) <= LIVE_BOUND, max(sizes)
    assert len(renderer.displays) > 20 and all(d.final for d in renderer.displays[:-1])
    shown = "".join(call["data"]["text/markdown"] for call in publisher.calls)
    assert all(f"data_{n}.csv" in shown for n in range(400))
