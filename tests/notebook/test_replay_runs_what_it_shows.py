"""Issue 35, finding 1, as it was seen: a recorded `RunCell` with a recorded allow, in a
notebook opened where the extension changes cells (hello says `edits: 1`), no key,
**Replay**. The consent card must be drawn from the very tools the replay runs with, and
a RunCell that will run shows the code it will run (the target cell's source now), as a
live approval card does; what runs is exactly what was shown."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use
from fuxi_notebook.testing.frontend import Card, NotebookFrontend

from .kernel_harness import loaded_notebook
from .test_kernel_sessions import _env, _errors

UTIL = "open('RAN', 'a').write('util ran\\n')"


@pytest.fixture
def api():
    with FakeMessagesServer() as server:
        yield server


def _no_key(api, path: Path) -> dict[str, str]:
    env = _env(api, path)
    env.pop("FUXI_REPLAY")
    env["ANTHROPIC_API_KEY"] = ""
    return env


def _recorded(tmp_path: Path, api) -> tuple[Path, list[str]]:
    """A notebook whose agent cell (c2) ran the ordinary cell c1 with the user's Allow
    (a forged record holds exactly this); returns its path and the live card's text."""
    path, nb = loaded_notebook(tmp_path, UTIL, "%%fuxi\nrun the util cell")
    api.add(Turn([tool_use("RunCell", {"cell_id": "c1"})]), Turn([text("Ran it.")]))
    cards: list[str] = []

    def allow(card: Card) -> tuple[str, None] | None:
        cards.append(card.html)
        return ("Allow", None) if "Allow" in card.buttons else None

    with NotebookFrontend(cwd=str(tmp_path), env=_env(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[2], decide=allow) == "ok", _errors(nb.cells[2])
    nbformat.write(nb, path)
    (tmp_path / "RAN").unlink()
    return path, cards


def _unescaped(shown: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", shown))


def test_the_live_card_of_a_run_cell_shows_the_code_it_runs(tmp_path, api):
    _, cards = _recorded(tmp_path, api)
    assert len(cards) == 1
    assert UTIL in _unescaped(cards[0])  # not only {"cell_id": "c1"}


def test_a_replayed_run_cell_is_on_the_card_with_the_code_it_runs(tmp_path, api):
    path, _ = _recorded(tmp_path, api)
    nb = nbformat.read(path, as_version=4)
    shown: list[str] = []

    def replay(card: Card) -> tuple[str, None] | None:
        shown.append(card.text)
        return ("Replay", None) if "Replay" in card.buttons else None

    requests = len(api.requests)
    with NotebookFrontend(cwd=str(tmp_path), env=_no_key(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"
        assert frontend.execute(nb.cells[2], decide=replay) == "ok", _errors(nb.cells[2])
    card = "\n".join(shown)
    assert "every call is read-only" not in card
    assert "Answered from the record" not in card
    assert "RunCell" in card and UTIL in card  # what runs, as the cell is now
    assert (tmp_path / "RAN").read_text() == "util ran\n"  # consented to: it ran once
    assert len(api.requests) == requests


def test_a_cell_changed_after_the_card_showed_it_is_not_run(tmp_path, api):
    """The card showed the cell's code; the user changes the cell before clicking
    Replay: the replay does not run code nobody was shown."""
    path, _ = _recorded(tmp_path, api)
    nb = nbformat.read(path, as_version=4)

    def change_then_replay(card: Card) -> tuple[str, None] | None:
        if "Replay" not in card.buttons:
            return None
        nb.cells[1].source = "open('UNSHOWN', 'w').write('x')"  # the live document
        return "Replay", None

    with NotebookFrontend(cwd=str(tmp_path), env=_no_key(api, path)) as frontend:
        frontend.open(nb, str(path))
        assert frontend.execute(nb.cells[0]) == "ok"
        frontend.execute(nb.cells[2], decide=change_then_replay)
    assert not (tmp_path / "UNSHOWN").exists() and not (tmp_path / "RAN").exists()
    assert "changed after it was shown" in _errors(nb.cells[2]) + str(nb.cells[2].outputs)
