"""The ``fake_openai`` fixture: a started :class:`FakeOpenAIServer` (both APIs), with
``FAKE_OPENAI_KEY`` set for the providers the tests configure against it; at teardown,
its handler threads raised nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import FakeOpenAIServer


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    with FakeOpenAIServer() as srv:
        yield srv
    assert srv.errors == []
