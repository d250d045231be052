"""pytest fixtures for the fake Anthropic API (import them from a test module or conftest).

* ``fake_api``: a started :class:`FakeAnthropicServer` with the default catalogue;
* ``fake_clock``: the :class:`FakeClock` of ``fake_api_clocked``, a server whose cache
  TTLs follow that clock (``fake_clock.advance(301)`` expires 5-minute entries);
* ``sdk_client`` / ``sdk_aclient``: the real ``anthropic`` SDK (sync / async) pointed at
  ``fake_api`` (``max_retries=0``); each asserts at teardown that the server's handler
  threads raised nothing.

:func:`stream_then_cancel` streams a request with an async client and cancels it after
some content deltas, the way an Esc does, then waits until the server saw the close.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Iterator

import pytest
import pytest_asyncio

from .cache import FakeClock
from .server import FakeAnthropicServer


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer` on 127.0.0.1 (stopped after the test).

    Use ``fake_api.url`` as ``base_url`` and ``fake_api.enqueue(Reply...)`` to script it.
    """
    with FakeAnthropicServer() as srv:
        yield srv


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fake_api_clocked(fake_clock: FakeClock) -> Iterator[FakeAnthropicServer]:
    """Like ``fake_api``, with the cache on ``fake_clock``."""
    with FakeAnthropicServer(clock=fake_clock) as srv:
        yield srv


@pytest.fixture
def sdk_client(fake_api: FakeAnthropicServer) -> Iterator[Any]:
    import anthropic  # here, not at import: conftest loads this module for every test

    with anthropic.Anthropic(base_url=fake_api.url, api_key="test", max_retries=0,
                             timeout=10) as c:
        yield c
    assert fake_api.errors == []


@pytest_asyncio.fixture
async def sdk_aclient(fake_api: FakeAnthropicServer) -> AsyncIterator[Any]:
    import anthropic

    async with anthropic.AsyncAnthropic(base_url=fake_api.url, api_key="test", max_retries=0,
                                        timeout=10) as c:
        yield c
    assert fake_api.errors == []


async def stream_then_cancel(aclient: Any, srv: FakeAnthropicServer, *, deltas: int = 1,
                             **body: Any) -> list[str]:
    """Stream ``body``, cancel the consumer after ``deltas`` content deltas; return the
    delta types seen. Raises ``AssertionError`` when the server saw no disconnect."""
    seen: list[str] = []
    enough = asyncio.Event()

    async def consume() -> None:
        stream = await aclient.messages.create(**body, stream=True)
        async for ev in stream:
            if ev.type == "content_block_delta":
                seen.append(ev.delta.type)
                if len(seen) >= deltas:
                    enough.set()

    before = len(srv.disconnects)
    task = asyncio.create_task(consume())
    await asyncio.wait_for(enough.wait(), 5)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert await asyncio.to_thread(srv.wait_for_disconnect, 5, before + 1)
    return seen
