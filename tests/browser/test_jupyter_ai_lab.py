"""fuxi in jupyter-ai's chat, in a real JupyterLab: with the jupyter-ai extra installed
(scripts/test.sh puts it in .venv-jupyter-ai: jupyter-ai's chat and this checkout), the
persona manager finds the Fuxi persona through its entry point, a new chat offers it with
its model and modes, it answers, and a Write asks with the diff and the ACP options."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from ..missing import missing_part
from ..notebook.kernel_harness import wait_until
from .lab import JupyterLab

ROOT = Path(__file__).resolve().parents[2]
JUPYTER = ROOT / ".venv-jupyter-ai" / "bin" / "jupyter"
MS = 1000

pytestmark = [] if JUPYTER.exists() else missing_part(
    "no .venv-jupyter-ai (bash scripts/test.sh installs jupyter-ai's chat and this "
    "checkout there)")


class JupyterAiLab(JupyterLab):
    """The same isolated JupyterLab, run from the environment that has jupyter-ai."""

    def _command(self) -> list[str]:
        return [str(JUPYTER), *super()._command()[1:]]


@contextlib.contextmanager
def fuxi_chat(tmp_path: Path, browser: Any, env: dict[str, str], *, chosen: bool = True
              ) -> Iterator[tuple[Any, Any]]:
    """A new chat, with the Fuxi persona chosen (the only persona is; with `chosen`
    False, once the persona picker is there): (the lab, the page). A test may put
    files in tmp_path / "root" first."""
    (tmp_path / "root").mkdir(exist_ok=True)
    (tmp_path / "state").mkdir()
    lab = JupyterAiLab(tmp_path / "root", tmp_path / "state",
                       {"FUXI_BLOCK_REAL_API": "1", **env}).start(timeout=120)
    page = browser.new_page()
    try:
        page.goto(f"{lab.url}/lab?reset")
        page.locator(".jp-LauncherCard", has_text="Chat").click(timeout=60 * MS)
        if chosen:
            page.get_by_text("Fuxi", exact=True).first.wait_for(timeout=60 * MS)
        else:
            page.get_by_title("Choose which persona to message").wait_for(timeout=60 * MS)
        yield lab, page
    except Exception:
        page.screenshot(path=str(tmp_path / "jupyter-ai-failure.png"))
        raise
    finally:
        page.close()
        lab.stop()


def _send(page: Any, words: str) -> None:
    page.get_by_placeholder("Type a chat message").fill(words)
    page.keyboard.press("Enter")


def test_the_fuxi_persona_answers_in_jupyter_ais_chat_and_asks_with_a_diff(
        tmp_path, browser):
    with FakeMessagesServer([
            Turn([text("Hello from fuxi in the chat.")]),
            Turn([text("Writing a note."),
                  tool_use("Write", {"file_path": "note.txt", "content": "hi\n"})]),
            Turn([text("Wrote note.txt.")])]) as api, fuxi_chat(tmp_path, browser, {
                "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-test",
                "FUXI_MODEL": "claude-sonnet-5-5"}) as (lab, page):
        # the session's config option (the model) in the chat's toolbar
        page.get_by_role("button", name="claude-sonnet-5-5").wait_for(timeout=60 * MS)
        _send(page, "say hello")
        page.get_by_text("Hello from fuxi in the chat.").wait_for(timeout=60 * MS)
        _send(page, "write a note")
        page.get_by_role("button", name="Always allow Edit(./**)").wait_for(timeout=60 * MS)
        assert page.get_by_text("+ hi").count() == 1  # the diff, before it is allowed
        page.get_by_role("button", name="Allow", exact=True).click()
        page.get_by_text("Wrote note.txt.").wait_for(timeout=60 * MS)
        # two turns' texts are two paragraphs, not "Writing a note.Wrote note.txt."
        page.get_by_text("Writing a note.").first.wait_for(timeout=60 * MS)
        assert page.get_by_text("Writing a note.Wrote note.txt.").count() == 0
        wait_until((lab.root / "note.txt").exists, timeout=30)
        assert (lab.root / "note.txt").read_text() == "hi\n"
        assert "Initialized persona 'Fuxi'" in lab.log_path.read_text()
        assert "say hello" in str(api.requests[0]["messages"][0]["content"])


def test_without_an_api_key_the_persona_says_how_to_set_one(tmp_path, browser):
    with fuxi_chat(tmp_path, browser, {}) as (_, page):
        _send(page, "hello?")
        page.get_by_text("fuxi needs a model to talk to").wait_for(timeout=60 * MS)
