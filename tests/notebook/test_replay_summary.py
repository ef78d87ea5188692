"""What the consent card says before a replay, and how the replay mode is chosen."""

from __future__ import annotations

import pytest

from fuxi_notebook.notebook.replay_cell import replay_mode, replay_summary
from fuxi_notebook.sessions.record import build_record
from tests.sessions.helpers import build_kwargs, result_message

#: what the tools declare (a live cell's record keeps each called tool's kind)
KINDS = {"Read": "read", "TaskCreate": "read", "Bash": "execute", "Python": "execute"}


def _record(calls, *, kinds=True):
    messages = [{"role": "user", "content": "go"}]
    for number, (name, tool_input) in enumerate(calls):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{number}", "name": name, "input": tool_input}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{number}", "content": "ok"}]})
    messages.append({"role": "assistant", "content": "done"})
    declared = {name: KINDS[name] for name, _ in calls} if kinds else {}
    return build_record(**build_kwargs(messages=messages, approvals=[],
                                       result=result_message(), kinds=declared))


def test_the_card_counts_every_call_and_shows_what_changes_something_in_full():
    code = "import shutil\nshutil.rmtree('build')\nprint('```nested fence```')"
    total, text = replay_summary([_record([("Read", {"file_path": "a.py"}),
                                           ("Bash", {"command": "rm -rf build"}),
                                           ("Python", {"code": code})])])
    assert total == 3 and "Read 1" in text and "Bash 1" in text and "Python 1" in text
    assert "`rm -rf build`" in text and "a.py" not in text  # read-only calls are counted
    assert "shutil.rmtree('build')" in text and "````" in text  # the fence survives ```
    assert "and 1 more" in text


def test_the_card_lists_by_the_tools_declared_kind_not_by_name():
    calls = [("TaskCreate", {"subject": "Plot"}), ("Bash", {"command": "make"})]
    _, text = replay_summary([_record(calls)])
    assert "**Bash**" in text and "**TaskCreate**" not in text  # a `read` tool
    _, text = replay_summary([_record(calls, kinds=False)])  # kinds unknown: listed
    assert "**TaskCreate**" in text


@pytest.mark.parametrize(("cell", "default", "env", "key", "expected"), [
    ("strict", "off", "lenient", "", ("strict", True)),
    (None, "off", "lenient", "", ("off", True)),
    (None, None, "lenient", "k", ("lenient", True)),
    (None, None, "1", "", ("lenient", True)),
    (None, None, "", "", ("lenient", False)),  # no key: recorded cells replay
    (None, None, "", "k", ("off", False)),  # a key: cells call the model
])
def test_replay_mode_precedence(monkeypatch, cell, default, env, key, expected):
    monkeypatch.setenv("FUXI_REPLAY", env)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    chosen = replay_mode(cell, default)
    assert (chosen.mode, chosen.explicit) == expected


def test_an_unusable_fuxi_replay_is_named(monkeypatch):
    monkeypatch.setenv("FUXI_REPLAY", "sometimes")
    with pytest.raises(ValueError, match="FUXI_REPLAY='sometimes'"):
        replay_mode(None, None)


async def test_terminal_ipython_asks_yes_or_no_before_a_replay():
    from fuxi_notebook.notebook.render import TextRenderer

    for reply, expected in (("y", True), ("", False), ("no", False)):
        written: list[str] = []
        renderer = TextRenderer(write=written.append, read=lambda prompt, r=reply: r)
        assert await renderer.confirm_replay("**Replay the recorded agent runs?** `x`") is expected
        assert "Replay the recorded agent runs? x" in "".join(written)
