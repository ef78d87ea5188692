"""How fuxi's answers read in jupyter-ai's chat, in a real JupyterLab (issue 39 (4)): the
text the model wrote before a tool call is drawn above the call's card, the context
gauge shows the share of the window the conversation takes, and an `@Fuxi` mention reaches
Fuxi whoever the input's persona picker names (acp/mentions.py)."""

from __future__ import annotations

import re

from fuxi_notebook.testing import FakeMessagesServer, Turn, text, tool_use

from .shots import docs_screenshot
from .test_jupyter_ai_lab import MS, _send, fuxi_chat
from .test_jupyter_ai_lab import pytestmark as _needs_jupyter_ai

pytestmark = _needs_jupyter_ai
_ENV = {"ANTHROPIC_API_KEY": "sk-test", "FUXI_MODEL": "claude-sonnet-5-5"}
#: a chat message, in the order the chat shows them
MESSAGES = ".jp-chat-messages-container > .jp-chat-message"
GAUGE = ".jp-jai-usage-chip"
#: a persona of the chat's own folder (`.jupyter/personas/`, as jupyter-ai documents)
ECHO_PERSONA = '''
from jupyter_ai_persona_manager import BasePersona, PersonaDefaults


class EchoPersona(BasePersona):
    @property
    def defaults(self):
        return PersonaDefaults(name="Echo", description="Says what it heard.",
                               avatar_path="", system_prompt="")

    async def process_message(self, message):
        self.send_message("Echo heard: " + message.body)
'''


def test_text_before_a_call_is_above_its_card_and_the_gauge_shows_the_contexts_share(
        tmp_path, browser):
    words = "Writing a note, in a few words. " * 8
    with FakeMessagesServer([
            Turn([text(words), tool_use("Write", {"file_path": "note.txt", "content": "hi\n"})]),
            Turn([text("Wrote note.txt.")]),
            # the API counts a quarter of the 1M window as this request's input
            Turn([text("A long conversation by now.")], usage={"input_tokens": 250_000})
    ]) as api, fuxi_chat(tmp_path, browser, {"ANTHROPIC_BASE_URL": api.url, **_ENV}) as (
            _, page):
        _send(page, "write a note")
        page.get_by_role("button", name="Allow", exact=True).click(timeout=60 * MS)
        page.get_by_text("Wrote note.txt.").wait_for(timeout=60 * MS)
        shown = page.locator(MESSAGES).all_inner_texts()
        # the text in one message, above the call's card (it was split around the card,
        # or wholly below it, when the ask overtook the text chunks)
        [said] = [i for i, body in enumerate(shown) if words.strip() in body]
        [card] = [i for i, body in enumerate(shown) if "Write `note.txt`" in body]
        assert said < card, shown
        docs_screenshot(page, "jupyter-ai-order.png")

        # the gauge is used / size of our usage_update: a few thousand tokens of a 1M
        # window is a true 0 % (the title says how many)
        gauge = page.locator(f'{GAUGE}[aria-label="Context 0% used"]')
        gauge.wait_for(timeout=60 * MS)
        assert re.fullmatch(r"Context: \d+(\.\d+)?k of 1M tokens \(0%\)",
                            (gauge.get_attribute("title") or "").splitlines()[0])
        _send(page, "and now?")
        page.get_by_text("A long conversation by now.").wait_for(timeout=60 * MS)
        page.locator(f'{GAUGE}[aria-label="Context 25% used"]').wait_for(timeout=60 * MS)


def test_an_at_fuxi_mention_reaches_fuxi_whoever_the_picker_names(tmp_path, browser):
    """acp/mentions.py, the server extension the wheel enables: jupyter-ai sends a message
    only to the picker's persona (PersonaManager.on_chat_message reads only
    metadata["to_persona"]), and the extension hands one that mentions @Fuxi to Fuxi too."""
    personas = tmp_path / "root" / ".jupyter" / "personas"
    personas.mkdir(parents=True)
    (personas / "echo_persona.py").write_text(ECHO_PERSONA)
    with FakeMessagesServer([Turn([text("Fuxi here, though no one was picked.")]),
                             Turn([text("Hello from fuxi, as mentioned.")])]) as api, \
            fuxi_chat(tmp_path, browser, {"ANTHROPIC_BASE_URL": api.url, **_ENV},
                      chosen=False) as (lab, page):
        picker = page.get_by_title("Choose which persona to message")
        assert "No one" in picker.inner_text()  # two personas: the picker starts at no one
        _send(page, "@fuxi, are you there?")  # a mention in any case
        page.get_by_text("Fuxi here, though no one was picked.").wait_for(timeout=60 * MS)

        picker.click()
        page.get_by_role("menuitem", name="Echo").click()
        _send(page, "only for echo")  # no mention: Echo alone
        page.get_by_text("Echo heard: only for echo").wait_for(timeout=60 * MS)
        _send(page, "@Fuxi say hello")
        page.get_by_text("Echo heard: @Fuxi say hello").wait_for(timeout=60 * MS)
        page.get_by_text("Hello from fuxi, as mentioned.").wait_for(timeout=60 * MS)

        # Fuxi was asked twice, by the two mentions: the message without one, sent
        # between them (and so, had it reached Fuxi, asked before the second), never was
        assert len(api.requests) == 2, api.requests
        assert "are you there?" in str(api.requests[0]["messages"][-1]["content"])
        assert "say hello" in str(api.requests[1]["messages"][-1]["content"])
        assert "only for echo" not in str(api.requests)
        assert page.get_by_text("Hello from fuxi, as mentioned.").count() == 1
        docs_screenshot(page, "jupyter-ai-mention.png")
        assert "an @Fuxi mention in jupyter-ai's chat goes to Fuxi" in lab.log_path.read_text()
