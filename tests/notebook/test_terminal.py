"""`%%fuxi` in terminal IPython: plain-text rendering and y/n approval at the prompt."""

from __future__ import annotations

import os
import sys

import pytest

from fuxi_notebook.testing import Turn, text, tool_use

pexpect = pytest.importorskip("pexpect")


def _ipython(tmp_path, api):
    env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
           "FUXI_BLOCK_REAL_API": "1", "FUXI_MODEL": "claude-sonnet-5-5", "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "IPython", "--simple-prompt", "--no-banner",
                                           "--colors=NoColor"], cwd=str(tmp_path), env=env,
                          encoding="utf-8", timeout=60)
    child.expect(r"In \[1\]: ")
    child.sendline("%load_ext fuxi_notebook")
    child.expect(r"In \[2\]: ")
    return child


def _cell(child, *lines):
    for line in lines:
        child.sendline(line)
    child.sendline("")  # blank lines end a cell magic in the simple prompt
    child.sendline("")


@pytest.mark.timeout(120)
def test_terminal_run_streams_text_and_asks_yes_no(tmp_path, fake_api):
    fake_api.add(Turn([text("Creating the file now."),
                       tool_use("Bash", {"command": "touch from-terminal"})]),
                 Turn([text("Done: the file exists.")]))
    child = _ipython(tmp_path, fake_api)
    try:
        _cell(child, "%%fuxi", "create a file", "(a second prompt line)")
        child.expect("Creating the file now.")
        child.expect(r"Allow Bash")
        child.expect(r"\[y\]es / \[a\]lways / \[n\]o: ")
        child.sendline("y")
        child.expect("Done: the file exists.")
        child.expect(r"In \[\d+\]: ")
        assert (tmp_path / "from-terminal").exists()
        child.sendline("print(_fuxi.result.subtype)")
        child.expect("success")
        prompt = fake_api.requests[0]["messages"][0]["content"][-1]["text"]
        assert prompt == "create a file\n(a second prompt line)"
    finally:
        child.sendline("exit")
        child.close(force=True)


@pytest.mark.timeout(120)
def test_terminal_deny_with_reason(tmp_path, fake_api):
    fake_api.add(Turn([tool_use("Bash", {"command": "touch nope"})]), Turn([text("Understood.")]))
    child = _ipython(tmp_path, fake_api)
    try:
        _cell(child, "%%fuxi", "make a file")
        child.expect(r"\[y\]es / \[a\]lways / \[n\]o: ")
        child.sendline("n")
        child.expect("reason")
        child.sendline("not today")
        child.expect("Understood.")
        child.expect(r"In \[\d+\]: ")
    finally:
        child.sendline("exit")
        child.close(force=True)
    assert not (tmp_path / "nope").exists()
    denial = fake_api.requests[1]["messages"][-1]["content"][0]
    assert denial["is_error"]
    assert denial["content"] == "The user denied this Bash call. Their reason: not today"


@pytest.mark.timeout(120)
def test_terminal_ask_user_question(tmp_path, fake_api):
    question = {"questions": [{"question": "Which format?", "header": "Format",
                               "multiSelect": False,
                               "options": [{"label": "CSV", "description": "plain"},
                                           {"label": "Parquet", "description": "columnar"}]}]}
    fake_api.add(Turn([tool_use("AskUserQuestion", question)]), Turn([text("Parquet then.")]))
    child = _ipython(tmp_path, fake_api)
    try:
        _cell(child, "%%fuxi", "save it")
        child.expect("2. Parquet")
        child.expect("your choice: ")
        child.sendline("2")
        child.expect("Parquet then.")
        child.expect(r"In \[\d+\]: ")
    finally:
        child.sendline("exit")
        child.close(force=True)
    answer = fake_api.requests[1]["messages"][-1]["content"][0]
    assert '"Which format?" = "Parquet"' in answer["content"]
