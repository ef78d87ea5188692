"""Fixtures for the fake Messages API server tests: a running server and a real client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anthropic
import pytest

from fuxi_notebook.testing.fake_server import FakeMessagesServer


@pytest.fixture
def server() -> Iterator[FakeMessagesServer]:
    """A started server with an empty script; tests `add()` their steps."""
    with FakeMessagesServer() as running:
        yield running


@pytest.fixture
async def client(server: FakeMessagesServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """The real SDK client pointed at `server`, without retries."""
    async with anthropic.AsyncAnthropic(
        api_key="test-key", base_url=server.url, max_retries=0
    ) as sdk:
        yield sdk
