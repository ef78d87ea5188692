"""`@Fuxi` in jupyter-ai's chat (acp/mentions.py), without a browser or jupyter-ai: what a
mention is, that only a person's message that the picker does not already send to Fuxi
goes to Fuxi (never a persona's, so Fuxi's replies cannot loop), that it is delivered as
the persona manager delivers, that an error is one log line and never reaches the
router, and that without jupyter-ai the extension does nothing. The real chat:
tests/browser/test_jupyter_ai_chat_lab.py."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fuxi_notebook._internal.acp import mentions
from fuxi_notebook._internal.acp.mentions import (
    MentionRouter,
    addressed_to,
    should_deliver,
)

ROOT = Path(__file__).resolve().parents[2]
FUXI_ID = "jupyter-ai-personas::fuxi_notebook::FuxiAcpPersona"
ECHO_ID = "jupyter-ai-personas::echo_persona::EchoPersona"
LOG = logging.getLogger("test_acp_mentions")


@dataclasses.dataclass
class Message:
    """The fields of jupyterlab_chat's Message that routing reads."""

    body: str
    sender: str = "alice"
    id: str = "m1"
    time: float = 0.0
    metadata: dict[str, Any] | None = None
    deleted: bool | None = None


@dataclasses.dataclass
class User:
    username: str
    bot: bool = False


PEOPLE = {"alice": User("alice"), "helper-bot": User("helper-bot", bot=True),
          FUXI_ID: User(FUXI_ID, bot=True)}


@pytest.mark.parametrize(("body", "mentioned"), [
    ("@Fuxi say hello", True), ("@fuxi, are you there?", True), ("thanks @FUXI.", True),
    ("ask\n@Fuxi", True), ("(@Fuxi)", True),
    ("Fuxi say hello", False), ("mail me@fuxi.dev", False), ("@Fuxi-bot hi", False),
    ("@Fuxibot hi", False), ("@@Fuxi", False), ("@Fux", False), ("", False)])
def test_a_mention_is_at_name_as_a_word_in_any_case(body, mentioned):
    assert mentions.mentions(body, "Fuxi") is mentioned


def test_a_name_with_spaces_is_mentioned_as_the_chat_writes_it():
    assert mentions.mentions("hi @Fuxi-Agent", "Fuxi Agent")
    assert not mentions.mentions("hi @Fuxi Agent", "Fuxi Agent")
    assert not mentions.mentions("hi @", "")


@pytest.mark.parametrize(("message", "delivered"), [
    (Message("@Fuxi say hello"), True),  # the picker on no one
    (Message("@Fuxi say hello", metadata={"to_persona": ECHO_ID}), True),
    # the picker names Fuxi: the persona manager delivers it, once
    (Message("@Fuxi say hello", metadata={"to_persona": FUXI_ID}), False),
    (Message("say hello", metadata={"to_persona": ECHO_ID}), False),
    # a persona's (Fuxi's own reply), jupyter-ai's system user's, any bot user's
    (Message("I am @Fuxi, hello", sender=FUXI_ID), False),
    (Message("@Fuxi see above", sender=ECHO_ID), False),
    (Message("@Fuxi failed to load", sender="hidden::jupyter_ai_system"), False),
    (Message("@Fuxi ping", sender="helper-bot"), False),
    (Message("", deleted=True), False),
])
def test_only_a_persons_mention_the_picker_does_not_send_to_fuxi_goes_to_fuxi(
        message, delivered):
    assert should_deliver(message, fuxi_id=FUXI_ID, fuxi_name="Fuxi",
                          users=PEOPLE) is delivered


def test_the_message_fuxi_gets_names_fuxi_without_the_picked_personas_own_settings():
    message = Message("@Fuxi hi", metadata={"to_persona": ECHO_ID, "model": {"id": "echo-1"},
                                           "settings": {"t": 1}, "other": 2})
    given = addressed_to(message, FUXI_ID)
    assert given.metadata == {"to_persona": FUXI_ID, "other": 2}
    assert (given.body, given.id) == ("@Fuxi hi", "m1")
    assert message.metadata["to_persona"] == ECHO_ID  # the chat's message is unchanged
    assert addressed_to(Message("@Fuxi"), FUXI_ID).metadata == {"to_persona": FUXI_ID}


class FakeRouter:
    """jupyter-ai-router's public observer API, recording what is registered."""

    def __init__(self, active: dict[str, Any] | None = None) -> None:
        self.active_chats = active or {}
        self.init_observers: list[Any] = []
        self.msg_observers: dict[str, list[Any]] = {}

    def observe_chat_init(self, callback):
        self.init_observers.append(callback)

    def observe_chat_msg(self, chat_id, callback):
        self.msg_observers.setdefault(chat_id, []).append(callback)

    def connect(self, chat_id):
        for callback in self.init_observers:
            callback(chat_id, object())

    def send(self, chat_id, message):
        for callback in self.msg_observers.get(chat_id, []):
            callback(chat_id, message)  # the router calls them synchronously


class FakeFuxi:
    id = FUXI_ID
    name = "Fuxi"

    def __init__(self, fail: bool = False) -> None:
        self.got: list[Message] = []
        self.fail = fail

    async def on_message(self, message):
        if self.fail:
            raise RuntimeError("the agent\nbroke")
        self.got.append(message)


class FakeChat:
    def get_users(self):
        return PEOPLE


class FakeManager:
    def __init__(self, fuxi: FakeFuxi) -> None:
        self.personas = {FUXI_ID: fuxi}
        self.event_loop = asyncio.get_running_loop()
        self.chat = FakeChat()


@pytest.fixture
def fuxi_is_fake(monkeypatch):
    """The persona class is jupyter-ai's (not installed here): a FakeFuxi stands in."""
    monkeypatch.setattr(mentions, "fuxi_persona", lambda personas: next(
        (p for p in personas.values() if isinstance(p, FakeFuxi)), None))


async def _appears(settings: dict[str, Any], router: FakeRouter) -> None:
    """The router appears once attach() waits: this task first runs at attach()'s first
    await, after it looked once and found nothing."""
    settings["jupyter-ai"] = {"router": router, "persona-managers": {}}


async def test_a_mention_in_a_chat_is_delivered_on_the_managers_loop(fuxi_is_fake):
    settings: dict[str, Any] = {}
    router, fuxi = FakeRouter(), FakeFuxi()
    routing = MentionRouter(settings, LOG)
    appearing = asyncio.create_task(_appears(settings, router))
    assert await routing.attach()  # it waited for the router, as the persona manager does
    await appearing
    router.connect("chat-1")
    settings["jupyter-ai"]["persona-managers"]["chat-1"] = FakeManager(fuxi)

    router.send("chat-1", Message("only for echo", metadata={"to_persona": ECHO_ID}))
    router.send("chat-1", Message("@Fuxi say hello", id="m2",
                                  metadata={"to_persona": ECHO_ID, "model": {"id": "e"}}))
    router.send("chat-1", Message("Hello, I am @Fuxi", sender=FUXI_ID))  # its own reply
    router.send("chat-2", Message("@Fuxi, a chat with no persona manager yet"))
    await asyncio.gather(*routing.tasks)
    assert [(m.id, m.metadata) for m in fuxi.got] == [("m2", {"to_persona": FUXI_ID})]


async def test_chats_connected_before_it_attached_are_observed_too(fuxi_is_fake):
    fuxi = FakeFuxi()
    router = FakeRouter(active={"old": object()})
    settings = {"jupyter-ai": {"router": router, "persona-managers": {
        "old": FakeManager(fuxi)}}}
    assert await MentionRouter(settings, LOG).attach()
    assert list(router.msg_observers) == ["old"] and len(router.init_observers) == 1


async def test_an_error_is_one_log_line_and_never_reaches_the_router(fuxi_is_fake, caplog):
    class Broken:
        @property
        def personas(self):
            raise KeyError("personas\nmid-refresh")

    router, failing = FakeRouter(), FakeFuxi(fail=True)
    settings = {"jupyter-ai": {"router": router, "persona-managers": {
        "broken": Broken(), "failing": FakeManager(failing)}}}
    routing = MentionRouter(settings, LOG)
    assert await routing.attach()
    router.connect("broken")
    router.connect("failing")
    with caplog.at_level(logging.WARNING, LOG.name):
        router.send("broken", Message("@Fuxi hi"))  # does not raise
        router.send("failing", Message("@Fuxi hi"))
        await asyncio.gather(*routing.tasks, return_exceptions=True)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all("\n" not in line for line in lines), lines
    assert "chat broken" in lines[0] and "KeyError" in lines[0]
    assert "RuntimeError: the agent broke" in lines[1]


async def test_it_stops_waiting_for_a_router_that_never_comes(caplog):
    with caplog.at_level(logging.DEBUG, LOG.name):
        assert not await MentionRouter({}, LOG, wait=0.2).attach()
    assert "no jupyter-ai router" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


class FakeServerApp:
    def __init__(self, io_loop: Any) -> None:
        self.web_app = type("WebApp", (), {"settings": {}})()
        self.log = LOG
        self.io_loop = io_loop


def test_without_jupyter_ai_the_extension_does_nothing(monkeypatch):
    class NoLoop:
        @property
        def asyncio_loop(self):
            raise AssertionError("nothing may be scheduled without jupyter-ai")

    monkeypatch.setattr(mentions.importlib.util, "find_spec",
                        lambda name: None if name == "jupyter_ai_router" else object())
    mentions._load_jupyter_server_extension(FakeServerApp(NoLoop()))


async def test_with_jupyter_ai_it_waits_on_the_servers_loop(monkeypatch):
    loop = asyncio.get_running_loop()
    monkeypatch.setattr(mentions.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(mentions, "ROUTER_WAIT", 0.0)
    before = asyncio.all_tasks()
    mentions._load_jupyter_server_extension(
        FakeServerApp(type("IOLoop", (), {"asyncio_loop": loop})()))
    [waiting] = asyncio.all_tasks() - before
    assert await waiting is False  # no router in these settings: it gave up


def test_the_wheel_enables_this_module_as_a_server_extension():
    [point] = mentions._jupyter_server_extension_points()
    assert point == {"module": "fuxi_notebook._internal.acp.mentions"}
    shared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"][
        "targets"]["wheel"]["shared-data"]
    # named after the extension: `jupyter server extension disable MODULE` rewrites it
    [source] = [s for s, target in shared.items() if target ==
                f"etc/jupyter/jupyter_server_config.d/{point['module']}.json"]
    config = json.loads((ROOT / source).read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {point["module"]: True}}}
