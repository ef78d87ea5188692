"""Compaction in real kernels: one line in the cell, the summary in the record, a replay
that compacts at the same place without asking the model, a restarted kernel that goes on
from the compacted conversation, and `%fuxi` saying how full the context is."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from fuxi_notebook._internal.context.compaction import SUMMARY_OPEN, asks_for_summary
from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import NotebookFrontend

from .kernel_harness import loaded_notebook as _notebook
from .test_kernel_sessions import _env, _errors, _headless, _record


@pytest.fixture
def api():
    """A fake API of this test's own (it counts every request the test caused)."""
    with FakeMessagesServer() as server:
        yield server


class _Agent:
    """`calls` tool calls for the first prompt, then answers; a summary whenever asked
    for one."""

    def __init__(self, calls: int) -> None:
        self.calls, self.served, self.summaries = calls, 0, 0

    def __call__(self, body: dict[str, Any]) -> Turn:
        if asks_for_summary(body["messages"]):
            self.summaries += 1
            return Turn([text(f"Summary {self.summaries}: listed numbers with seq.")])
        self.served += 1
        if self.served > self.calls:
            return Turn([text(f"answer {self.served}")])
        return Turn([tool_use("Bash", {"command": f"seq 1 150 # {self.served}"})])


def _markdown(cell) -> str:
    return "".join(str(o.get("data", {}).get("text/markdown", "")) for o in cell.outputs)


def test_a_compacted_cell_records_its_summary_and_replays_without_the_model(tmp_path, api):
    agent = _Agent(calls=12)
    api.add(*[agent] * 80)
    path, nb = _notebook(tmp_path, "%%fuxi --new --allowed-tools Bash\ncount",
                         "%%fuxi\n/compact keep the numbers", "%%fuxi\nwhat next?",
                         "%fuxi")
    env = _env(api, path, FUXI_CONTEXT_WINDOW="9000")
    with NotebookFrontend(cwd=str(tmp_path), env=env) as frontend:
        statuses = [frontend.execute(cell) for cell in nb.cells]
    assert statuses == ["ok"] * 5, [_errors(c) for c in nb.cells]
    first, manual, third = (_record(c) for c in nb.cells[1:4])
    assert first["compactions"] and first["compactions"][0]["trigger"] == "auto"
    assert manual["compactions"][0]["trigger"] == "manual" and manual["messages"] == []
    assert "Context compacted automatically" in _markdown(nb.cells[1])
    assert "Context compacted on request" in _markdown(nb.cells[2])
    assert "context:" in nb.cells[4].outputs[0]["data"]["text/plain"]
    last_live = [r for r in api.requests if not asks_for_summary(r["messages"])][-1]
    assert last_live["messages"][0]["content"][0]["text"].startswith(SUMMARY_OPEN)
    nbformat.write(nb, path)
    live_requests = len(api.requests)

    replayed, statuses = _headless(tmp_path, api, path, FUXI_REPLAY="strict",
                                   FUXI_CONTEXT_WINDOW="9000")
    assert statuses == ["ok"] * 5, [_errors(c) for c in replayed.cells]
    assert [_record(c) for c in replayed.cells[1:4]] == [first, manual, third]
    assert len(api.requests) == live_requests  # no summary (nor anything) asked again

    # a new kernel goes on from the compacted conversation saved in the notebook
    again = nbformat.read(path, as_version=4)
    again.cells.append(nbformat.v4.new_code_cell("%%fuxi\nand then?", id="c5"))
    nbformat.write(again, path)
    with NotebookFrontend(cwd=str(tmp_path), env=env) as frontend:
        assert frontend.execute(again.cells[0]) == "ok"
        assert frontend.execute(again.cells[-1]) == "ok", _errors(again.cells[-1])
    sent = _plain(api.requests[-1]["messages"])
    assert sent[0]["content"][0]["text"] == last_live["messages"][0]["content"][0]["text"]
    assert sent[:len(last_live["messages"]) - 1] == _plain(last_live["messages"][:-1])


def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without their cache breakpoints (which move from request to request)."""
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                              for b in m["content"]]} for m in messages]
