"""A lone Esc is the Esc key at once; an escape sequence (an arrow, Alt+key) is still one
key; ``ESCDELAY`` keeps Textual's own wait. Through Textual's own terminal parser, fed
as its input thread feeds it: one read's text, then a tick."""

from __future__ import annotations

import pytest
from textual import constants, events
from textual._xterm_parser import XTermParser

from agent_tui.ui.app.escape_key import lone_escape_at_once


def _keys(*reads: str) -> list[str]:
    parser = XTermParser()
    keys: list[str] = []
    for data in reads:  # the input thread: feed what one read returned, then tick
        for token in [*parser.feed(data), *parser.tick()]:
            if isinstance(token, events.Key):
                keys.append(token.key)
    return keys


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "ESCAPE_DELAY", constants.ESCAPE_DELAY)  # restored after
    assert lone_escape_at_once({})


def test_a_lone_esc_is_the_key_as_soon_as_it_is_read(at_once: None) -> None:
    assert _keys("\x1b") == ["escape"]


def test_without_it_a_lone_esc_waits_for_a_later_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.1)
    assert _keys("\x1b") == []  # Textual's own wait: not yet the Esc key


def test_escape_sequences_read_whole_are_still_their_keys(at_once: None) -> None:
    assert _keys("\x1b[A", "\x1b[B", "x") == ["up", "down", "x"]
    assert _keys("\x1bx") == ["alt+x"]
    assert _keys("\x1b", "\x1b[A") == ["escape", "up"]


def test_a_user_who_sets_escdelay_keeps_textuals_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.05)
    assert not lone_escape_at_once({"ESCDELAY": "50"})
    assert constants.ESCAPE_DELAY == 0.05
