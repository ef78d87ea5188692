"""A pytest plugin (auto-registered) with fixtures for testing agents offline.

    def test_my_agent(fake_messages_api):
        fake_messages_api.add(Turn([text("hi")]))
        model = AnthropicModel("claude-sonnet-5-5", api_key="test",
                               base_url=fake_messages_api.url)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_server import FakeMessagesServer

__all__ = ["fake_messages_api"]


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesServer]:
    """A running fake Messages API server on 127.0.0.1 with an empty script."""
    with FakeMessagesServer() as server:
        yield server
