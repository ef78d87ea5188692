"""Issue 35, the split-secret class where a text is cut, where a run is kept and shown: the
loop names a call the model asked for again after a denial by a one-line summary of its
input (in the denial the model reads, kept in the session store, and in the error that
stops the run); a subagent's calls are listed the same way in its call's output so far.
A secret of the shared corpus (`split_secrets.py`) straddling the end of that line shows
in no part, in the store, the result, or the card that shows the output so far."""

from __future__ import annotations

import json
import os
from unittest import mock

import pytest

from fuxi_notebook import FuxiAgentOptions, PermissionResultDeny, ScriptedModel
from fuxi_notebook._internal.agent.subagents.run import _Watch
from fuxi_notebook._internal.models.script import text, tool_use
from fuxi_notebook._internal.notebook.display.view import ToolCard
from fuxi_notebook._internal.sessions.redact import redact_text
from fuxi_notebook._internal.sessions.store import (
    InMemorySessionStore,
    project_key_for_directory,
)
from fuxi_notebook.types import AssistantMessage, ToolUseBlock

from ..agent.helpers import collect
from .split_secrets import CORPUS, ENV, SplitCase, leaks

#: one-line cases the loop's redaction knows (environment values and shapes)
CASES = [case for case in CORPUS if not case.explicit and "\n" not in case.text.rstrip("\n")]
#: the characters of an input a call's name in a message shows
LOOP_SUMMARY = 80
SESSION = "5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"


def _middle(case: SplitCase) -> int:
    hidden = case.hidden[0]
    return case.text.index(hidden) + len(hidden) // 2


def _command(case: SplitCase, chars: int, at: int | None = None) -> str:
    """A command whose one-line summary, cut to `chars`, ends `at` characters into the
    case (its secret's middle by default)."""
    cut = _middle(case) if at is None else at
    return ": " + "." * (chars - 1 - len(": ") - 1 - cut) + " " + case.text.rstrip("\n")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_a_call_denied_again_is_named_with_no_part_of_a_secret(tmp_path, case):
    call = {"command": _command(case, LOOP_SUMMARY)}
    store = InMemorySessionStore()
    model = ScriptedModel([[tool_use("Bash", call)] for _ in range(3)] + [[text("ok")]])

    async def deny(name, tool_input, context):
        return PermissionResultDeny(message="not this")

    options = FuxiAgentOptions(model=model, cwd=tmp_path, session_store=store,
                               session_id=SESSION, can_use_tool=deny)
    with mock.patch.dict(os.environ, ENV):
        messages, _ = await collect("run it", options)
        key = {"project_key": project_key_for_directory(tmp_path), "session_id": SESSION}
        stored = json.dumps(await store.load(key))
        errors = [line for m in messages for line in getattr(m, "errors", None) or []]
        kept = redact_text("\n".join(errors))  # as a cell's record keeps them, and shows
        assert "already denied" in stored  # the model was told, and the store keeps it
        assert "requested the same denied call" in kept  # the run stopped, and says why
        assert not leaks(case, stored), stored
        assert not leaks(case, kept), kept


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_subagents_calls_in_its_output_so_far_show_no_part_of_a_secret(case):
    reported: list[str] = []
    watch = _Watch(None, forward=False)
    call = ToolUseBlock(id="t1", name="Bash", input={"command": _command(case, LOOP_SUMMARY)})
    with mock.patch("fuxi_notebook._internal.agent.subagents.run.report_output",
                    reported.append), mock.patch.dict(os.environ, ENV):
        watch._note(AssistantMessage(content=[call], model="m", message_id="m1"))
        card = ToolCard("agent", "Agent", {"prompt": "look"}, progress=reported[-1])
        shown = card.markdown()
        assert "Bash: " in shown
        assert not leaks(case, shown), shown
