"""Issue 35, the class "a secret split across the pieces of a stream", where a run is
kept: the session store, the local transcript, a cell's record and its transcript. The
model's answer and thinking hold every secret of the shared corpus and stream in pieces;
what is stored is the whole text, redacted whole (no part of a secret, and exactly what
redacting the answer at once gives)."""

from __future__ import annotations

import json
import os
from unittest import mock

from fuxi_notebook import FuxiAgentOptions, ScriptedModel
from fuxi_notebook._internal.models.script import text, thinking
from fuxi_notebook._internal.sessions.entries import chain
from fuxi_notebook._internal.sessions.record import build_record
from fuxi_notebook._internal.sessions.redact import redact_text
from fuxi_notebook._internal.sessions.store import (
    FileSessionStore,
    InMemorySessionStore,
    project_key_for_directory,
)
from fuxi_notebook._internal.sessions.text.transcript import (
    render_transcript,
    render_transcript_text,
)
from fuxi_notebook.types import StreamEvent

from ..agent.helpers import collect
from .helpers import result_message
from .split_secrets import CORPUS, ENV, leaks

#: a run's redaction knows environment values and shapes; a record also its explicit ones
RUN_CASES = [case for case in CORPUS if not case.explicit]
ANSWER = "".join(case.text for case in RUN_CASES)
SESSION = "7c6b5a49-3828-4716-a5f4-e3d2c1b0a998"


def _leaked(cases: list, stored: str) -> list[str]:
    return [case.name for case in cases if leaks(case, stored)]


async def test_the_store_and_the_local_transcript_keep_the_answer_redacted_whole(tmp_path):
    store = InMemorySessionStore()
    options = FuxiAgentOptions(model=ScriptedModel([[thinking(ANSWER), text(ANSWER)]]),
                               cwd=tmp_path, session_store=store, session_id=SESSION,
                               include_partial_messages=True)
    with mock.patch.dict(os.environ, ENV):
        messages, error = await collect("tell me everything", options)
        whole = redact_text(ANSWER)
    assert error is None
    assert sum(isinstance(m, StreamEvent) for m in messages) > len(RUN_CASES)  # in pieces
    key = {"project_key": project_key_for_directory(tmp_path), "session_id": SESSION}
    for entries in (await store.load(key), FileSessionStore().read(key)):
        assert entries is not None
        assert not _leaked(RUN_CASES, json.dumps(entries))
        [answer] = [e["message"]["content"] for e in chain(entries)
                    if e["message"]["role"] == "assistant"]
        assert [block.get("thinking", block.get("text")) for block in answer] == [whole, whole]


def test_a_record_and_its_transcript_keep_the_answer_redacted_whole():
    secrets = tuple(secret for case in CORPUS for secret in case.secrets)
    answer = "".join(case.text for case in CORPUS)
    with mock.patch.dict(os.environ, ENV):
        record = build_record(
            cell_id="c1", session_id=SESSION, parent=None, model="claude-sonnet-5-5",
            prompt="tell me everything", options={},
            messages=[{"role": "user", "content": "tell me everything"},
                      {"role": "assistant", "content": [
                          {"type": "thinking", "thinking": answer, "signature": "c2ln"},
                          {"type": "text", "text": answer}]}],
            approvals=[], result=result_message(result=answer), secrets=secrets)
        whole = redact_text(answer, secrets=secrets)
    stored = record.model_dump(mode="json")
    assert [b.get("thinking", b.get("text")) for b in stored["messages"][1]["content"]] == [
        whole, whole]
    for shown in (json.dumps(stored), render_transcript(record), render_transcript_text(record)):
        assert not _leaked(list(CORPUS), shown)
