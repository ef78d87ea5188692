"""Issue 35, the split-secret class where a text is cut, over ACP (a real `fuxi-acp` over
stdio): a command's output capped by the tool with a secret of the shared corpus
(`tests/sessions/split_secrets.py`) right where the cap cuts it; a file read whole whose
result is longer than a client is sent, cut inside a secret; a command whose secret
straddles the end of the title. No update or permission ask shows any part of it."""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import pytest

from fuxi_notebook._internal.acp.updates import MAX_RESULT_CHARS
from fuxi_notebook._internal.tools.shell import MAX_OUTPUT_CHARS
from fuxi_notebook.testing import Turn, text, tool_use

from ..sessions.split_secrets import CORPUS, ENV, SplitCase, leaks
from .acp_client import RecordingClient, acp_agent, new_session
from .test_acp_agent import _prompt

pytestmark = pytest.mark.timeout(180)

#: what the agent's redaction knows: secret-named environment values and shapes
CASES = [case for case in CORPUS if not case.explicit]
HALF = MAX_OUTPUT_CHARS // 2
TITLE_CHARS = 120


def _filler(size: int) -> str:
    lines, left = [], size
    while left > 0:
        width = min(100, left)
        lines.append("." * (width - 1) + "\n")
        left -= width
    return "".join(lines)


def _middle(case: SplitCase) -> int:
    hidden = case.hidden[0]
    return case.text.index(hidden) + len(hidden) // 2


def _sent(client: RecordingClient) -> str:
    shown = [u.model_dump(mode="json") for u in client.updates]
    shown += [ask.model_dump(mode="json") for ask in client.asks]
    return json.dumps(shown)


async def _run(fake_api: Any, tmp_path: Any, calls: list[Any]) -> RecordingClient:
    fake_api.add(Turn([text("Working."), *calls]), Turn([text("All done.")]))
    client = RecordingClient()  # allows each ask
    async with acp_agent(client, fake_api, tmp_path, **ENV) as (conn, _):
        sid = await new_session(conn, tmp_path)
        await conn.prompt(session_id=sid, prompt=_prompt("go"))
    assert "All done." in client.text()
    return client


async def test_a_capped_command_output_shows_no_part_of_a_secret_the_cap_cut(fake_api,
                                                                             tmp_path):
    calls = []
    for number, case in enumerate(CASES):
        head = _filler(HALF - _middle(case)) + case.text + "," * (HALF + 500)
        tail = _filler(HALF + 500) + case.text + "," * (HALF - (len(case.text) - _middle(case)))
        for how, output in (("head", head), ("tail", tail)):
            (tmp_path / f"out-{number}-{how}.txt").write_text(output)
            calls.append(tool_use("Bash", {"command": f"cat out-{number}-{how}.txt"}))
    client = await _run(fake_api, tmp_path, calls)
    sent = _sent(client)
    assert sent.count("characters truncated") >= len(calls)  # each output was capped
    with mock.patch.dict(os.environ, ENV):
        assert [case.name for case in CASES if leaks(case, sent)] == []


def _read_layout(case: SplitCase) -> str:
    """A file whose Read result (`cat -n` lines: 7 characters before each, a line break
    after) is cut, to be sent to a client, inside the case's secret."""
    before = MAX_RESULT_CHARS - 7 - _middle(case)  # where the case's line must start
    lines, rest = divmod(before, 100)
    if rest < 8:
        lines, rest = lines - 1, rest + 100
    return "".join(["." * 92 + "\n"] * lines) + "." * (rest - 8) + "\n" + case.text + (
        _filler(5_000))


@pytest.mark.parametrize("case", [c for c in CASES if "\n" not in c.text.rstrip("\n")],
                         ids=lambda case: case.name)
async def test_a_result_longer_than_a_client_is_sent_shows_no_part_of_a_secret_it_cut(
        fake_api, tmp_path, case):
    path = tmp_path / "long.txt"
    path.write_text(_read_layout(case))
    client = await _run(fake_api, tmp_path, [tool_use("Read", {"file_path": str(path)})])
    given = fake_api.requests[1]["messages"][-1]["content"][0]["content"]
    given = given if isinstance(given, str) else given[0]["text"]
    assert case.hidden[0] in given[MAX_RESULT_CHARS - len(case.hidden[0]):
                                   MAX_RESULT_CHARS + len(case.hidden[0])]  # cut inside it
    sent = _sent(client)
    assert "more characters went to the model" in sent
    with mock.patch.dict(os.environ, ENV):
        assert not leaks(case, sent)


async def test_a_title_shows_no_part_of_a_secret_its_cut_splits(fake_api, tmp_path):
    calls = []
    for case in (c for c in CASES if "\n" not in c.text.rstrip("\n")):
        pad = TITLE_CHARS - 2 - _middle(case) - len(": ")
        calls.append(tool_use("Bash", {"command": ": " + "." * pad + " " + case.text.rstrip()}))
    client = await _run(fake_api, tmp_path, calls)
    assert len(client.asks) == len(calls)
    sent = _sent(client)
    with mock.patch.dict(os.environ, ENV):
        assert [case.name for case in CASES if leaks(case, sent)] == []
