"""`@Fuxi` in jupyter-ai's chat reaches the Fuxi persona, whoever the picker names.

jupyter-ai 3.1+ hands a message only to the persona chosen in the chat input's picker
(the persona manager reads the message's `metadata["to_persona"]`), and the chat's `@`
completion lists people, never personas; so a typed `@Fuxi` reached no one. This Jupyter
server extension watches each chat through jupyter-ai-router's public observers and hands
a message that mentions Fuxi to the Fuxi persona of that chat, as the manager hands one
to the picked persona: `persona.on_message(message)` on the manager's event loop. The
wheel enables it (shared data: `etc/jupyter/jupyter_server_config.d/` + this module's
name + `.json`, the file `jupyter server extension disable` rewrites).

Without jupyter-ai it does nothing (it schedules nothing where the router is not
installed, and stops waiting after `ROUTER_WAIT` seconds where it is not enabled); it never
fails the server, and an error while routing is one line in the log, never raised into
the router. A message from a bot (every persona, jupyter-ai's system user) is never
routed, so a reply that quotes `@Fuxi` cannot loop back to Fuxi.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import logging
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jupyter_server.serverapp import ServerApp

__all__ = ["ROUTER_WAIT", "MentionRouter", "addressed_to", "from_a_bot", "mentions",
           "should_deliver"]

#: how long to wait for jupyter-ai-router's router (it appears as the server starts: the
#: first look finds it wherever jupyter-ai is enabled), in seconds
ROUTER_WAIT = 30.0
_POLL = 0.1
#: where the persona picker's target is, in a message's metadata (PersonaManager's key)
TO_PERSONA = "to_persona"
#: what the picker adds for its persona alone (its model and settings): not Fuxi's
_PICKED_PERSONAS_OWN = ("model", "settings")
#: usernames that are never a person: every persona's id, jupyter-ai's system user
_BOT_PREFIXES = ("jupyter-ai-personas", "hidden::jupyter_ai_system")


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Jupyter Server finds this module's loader here (the config file names the module)."""
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: ServerApp) -> None:
    """Start waiting for jupyter-ai's router on the server's loop, where it can exist."""
    if importlib.util.find_spec("jupyter_ai_router") is None:
        return  # no jupyter-ai here: nothing to route, nothing to wait for
    router = MentionRouter(serverapp.web_app.settings, serverapp.log)
    try:
        loop = getattr(serverapp.io_loop, "asyncio_loop", None) or asyncio.get_event_loop()
        router.track(loop.create_task(router.attach()))
    except Exception as error:  # never the server's failure
        router._log_error("could not wait for jupyter-ai's router", error)


def mentions(text: str, name: str) -> bool:
    """Whether `text` mentions `name` as the chat writes a mention: `@Name` as a word
    (spaces become `-`, as in jupyterlab-chat's mention names), any case; an address
    such as `me@fuxi.dev` or a longer name such as `@Fuxi-bot` is not one."""
    handle = re.escape(name.strip().replace(" ", "-"))
    return bool(handle) and re.search(
        rf"(?<![\w@])@{handle}(?![\w-])", text, re.IGNORECASE) is not None


def from_a_bot(message: Any, users: Mapping[str, Any]) -> bool:
    """Whether a persona (or another bot user) wrote `message`: those are never routed,
    so nothing Fuxi or another persona says can send a message to Fuxi."""
    sender = str(getattr(message, "sender", "") or "")
    user = users.get(sender)
    return sender.startswith(_BOT_PREFIXES) or bool(getattr(user, "bot", False))


def should_deliver(message: Any, *, fuxi_id: str, fuxi_name: str,
                   users: Mapping[str, Any]) -> bool:
    """Whether `message` goes to Fuxi from here: a person's message that mentions Fuxi
    and that the persona manager does not already send to Fuxi (its picker target)."""
    if getattr(message, "deleted", False) or from_a_bot(message, users):
        return False
    if (getattr(message, "metadata", None) or {}).get(TO_PERSONA) == fuxi_id:
        return False
    return mentions(str(getattr(message, "body", "") or ""), fuxi_name)


def addressed_to(message: Any, persona_id: str) -> Any:
    """`message` as if the picker had named `persona_id`: the picked persona's own model
    and settings stay behind (Fuxi keeps the ones its chat chose for it)."""
    metadata = {key: value for key, value in (message.metadata or {}).items()
                if key not in _PICKED_PERSONAS_OWN}
    return dataclasses.replace(message, metadata={**metadata, TO_PERSONA: persona_id})


def fuxi_persona(personas: Mapping[str, Any]) -> Any | None:
    """The Fuxi persona among a chat's personas (its class, not a hard-coded id)."""
    from .persona import FuxiAcpPersona

    return next((p for p in personas.values() if isinstance(p, FuxiAcpPersona)), None)


class MentionRouter:
    """The observers registered with jupyter-ai-router, reading the server's settings
    (where the router and each chat's PersonaManager are) when a message comes."""

    def __init__(self, settings: Mapping[str, Any], log: logging.Logger,
                 wait: float | None = None) -> None:
        self.settings, self.log = settings, log
        self.wait = ROUTER_WAIT if wait is None else wait
        #: deliveries in flight (the loop keeps only weak references to tasks)
        self.tasks: set[asyncio.Task[Any]] = set()

    def _jupyter_ai(self) -> Mapping[str, Any]:
        return self.settings.get("jupyter-ai") or {}

    async def attach(self) -> bool:
        """Wait (bounded) for the router as the persona manager does, then observe every
        chat it connects, and those it connected already."""
        deadline = time.monotonic() + self.wait
        while (router := self._jupyter_ai().get("router")) is None:
            if time.monotonic() >= deadline:
                self.log.debug("fuxi: no jupyter-ai router after %.0f s: @Fuxi mentions are "
                               "not routed", self.wait)
                return False
            await asyncio.sleep(_POLL)
        try:
            router.observe_chat_init(self.on_chat_init)
            for chat_id, chat in list(getattr(router, "active_chats", {}).items()):
                self.on_chat_init(chat_id, chat)
        except Exception as error:
            self._log_error("could not observe jupyter-ai's chats", error)
            return False
        self.log.info("fuxi: an @Fuxi mention in jupyter-ai's chat goes to Fuxi")
        return True

    def on_chat_init(self, chat_id: str, chat: Any) -> None:
        """A chat the router connected: observe its messages."""
        router = self._jupyter_ai().get("router")
        if router is not None:
            router.observe_chat_msg(chat_id, self.on_chat_message)

    def on_chat_message(self, chat_id: str, message: Any) -> None:
        """A person's message in a chat: to Fuxi if it mentions Fuxi (never raises)."""
        try:
            self._deliver(chat_id, message)
        except Exception as error:
            self._log_error(f"could not hand a message of chat {chat_id} to Fuxi", error)

    def _deliver(self, chat_id: str, message: Any) -> None:
        manager = (self._jupyter_ai().get("persona-managers") or {}).get(chat_id)
        if manager is None:
            return
        fuxi = fuxi_persona(manager.personas)
        if fuxi is None or not should_deliver(message, fuxi_id=fuxi.id, fuxi_name=fuxi.name,
                                              users=manager.chat.get_users()):
            return
        self.track(manager.event_loop.create_task(fuxi.on_message(addressed_to(message,
                                                                              fuxi.id))))

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep `task` until it ends, then log its error in one line, if it had one."""
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log_error("a task of @Fuxi's routing failed", task.exception())

    def _log_error(self, what: str, error: BaseException | None) -> None:
        from .guard import describe

        self.log.warning("fuxi: %s: %s", what,
                         describe(error, where=True) if error else "no detail")
