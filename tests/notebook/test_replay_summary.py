"""How the replay mode is chosen, and the terminal's prompt before a replay (what the
consent card says is in test_replay_plan.py)."""

from __future__ import annotations

import pytest

from fuxi_notebook._internal.common import switches
from fuxi_notebook._internal.notebook.replay.consent import ReplayConsent
from fuxi_notebook._internal.notebook.replay.decide import replay_mode


@pytest.mark.parametrize(("cell", "default", "env", "key", "expected"), [
    ("strict", "off", "lenient", "", ("strict", True)),
    (None, "off", "lenient", "", ("off", True)),
    (None, None, "lenient", "k", ("lenient", True)),
    (None, None, "1", "", ("lenient", True)),
    (None, None, "", "", ("lenient", False)),  # no key: recorded cells replay
    (None, None, "", "k", ("off", False)),  # a key: cells call the model
])
def test_replay_mode_precedence(monkeypatch, cell, default, env, key, expected):
    monkeypatch.setitem(switches.VALUES, "FUXI_REPLAY", env)  # as the kernel had it at load
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    chosen = replay_mode(cell, default)
    assert (chosen.mode, chosen.explicit) == expected


def test_an_unusable_fuxi_replay_is_named(monkeypatch):
    monkeypatch.setitem(switches.VALUES, "FUXI_REPLAY", "sometimes")
    with pytest.raises(ValueError, match="FUXI_REPLAY='sometimes'"):
        replay_mode(None, None)


async def test_terminal_ipython_asks_yes_or_no_before_a_replay():
    from fuxi_notebook._internal.notebook.display.render import TextRenderer

    consent = ReplayConsent(markdown="**Replay?** `x`", text="Replay the recorded agent "
                            "runs? 1 call\n  1. cell c1 · Bash (execute)\n     command: x",
                            calls=1)
    for reply, expected in (("y", True), ("", False), ("no", False)):
        written: list[str] = []
        renderer = TextRenderer(write=written.append, read=lambda prompt, r=reply: r)
        assert await renderer.confirm_replay(consent) is expected
        assert consent.text in "".join(written) and "**" not in "".join(written)


def test_fuxi_replay_set_after_load_changes_nothing(monkeypatch):
    """Code the model runs can set os.environ; a headless run must not start replaying
    records (re-executing their calls without consent) because of it."""
    monkeypatch.setitem(switches.VALUES, "FUXI_REPLAY", None)
    monkeypatch.setenv("FUXI_REPLAY", "lenient")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert replay_mode(None, None).explicit is False
