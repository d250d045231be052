"""pytest fixture for the fake Anthropic API (import it from the project's conftest)."""

from __future__ import annotations

from typing import Iterator

import pytest

from .server import FakeAnthropicServer


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer` on 127.0.0.1 (stopped after the test).

    Use ``fake_api.url`` as ``base_url`` and ``fake_api.enqueue(Reply...)`` to script it.
    """
    with FakeAnthropicServer() as srv:
        yield srv
