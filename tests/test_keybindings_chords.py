"""Chords in ~/.claude/keybindings.json (``"ctrl+k ctrl+n"``): read and checked, the
pending keys shown, completed in order with the text typed before, cancelled by Esc, by
a key no chord continues with, or by no key within the timeout; the keys a chord
shadows are named."""

from __future__ import annotations

import json
import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402

from agent_tui.paths import claude_config_dir  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.chords import ChordState  # noqa: E402
from agent_tui.ui.input.keybindings import chord_keys, read_keybindings  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

SIZE = (100, 24)


def _keybindings(blocks: list[dict], raw: str | None = None) -> None:
    claude_config_dir().mkdir(parents=True, exist_ok=True)
    (claude_config_dir() / "keybindings.json").write_text(
        raw if raw is not None else json.dumps({"bindings": blocks}))


def _app() -> AgentApp:
    make, _made = fake_factory([])
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, welcome=False)


def test_a_chord_is_its_keys_in_textuals_names() -> None:
    assert chord_keys("ctrl+k ctrl+s") == ("ctrl+k", "ctrl+s")
    assert chord_keys("meta+x  shift+ctrl+p") == ("alt+x", "ctrl+shift+p")
    assert chord_keys("ctrl+k") == ("ctrl+k",)
    assert chord_keys("ctrl+k hyper+s") is None
    assert chord_keys("   ") is None


def test_chords_are_taken_and_those_that_would_break_a_key_are_named() -> None:
    _keybindings([{"context": "Chat", "bindings": {
        "ctrl+k ctrl+n": "chat:newline",
        "ctrl+k escape": "chat:undo",  # Esc cancels a chord: never reachable
        "ctrl+k ctrl+c": "chat:undo",  # Ctrl+C stays the quit key
        "enter ctrl+n": "chat:newline",  # the input's own key
        "g g": "chat:undo",  # would eat the letter g from typing
        "ctrl+k ctrl+y": "chat:stash",  # an action we lack
        "ctrl+k ctrl+u": None,
    }}])
    keymap = read_keybindings()
    assert [(c.keys, c.action, c.whose) for c in keymap.chords] == [
        (("ctrl+k", "ctrl+n"), "newline", "input")]
    refused = "\n".join(keymap.refused)
    assert "ctrl+k escape → chat:undo: Esc stays the stop key (Esc cancels a chord)" in refused
    assert "ctrl+k ctrl+c → chat:undo: Ctrl+C stays the quit key" in refused
    assert "enter ctrl+n → chat:newline: the input handles its first key itself" in refused
    assert "g g → chat:undo: its first key types a character" in refused
    assert "ctrl+k ctrl+y → chat:stash: an action agent-tui does not have" in refused
    assert "ctrl+k ctrl+u → None: unbinding is not supported" in refused
    assert len(keymap.refused) == 6 and keymap.warnings == []


def test_what_a_chord_shadows_and_a_key_written_twice_are_warned_about() -> None:
    raw = ('{"bindings": [{"context": "Chat", "bindings": {"ctrl+t": "chat:newline", '
           '"ctrl+t": "chat:undo", "ctrl+t ctrl+n": "chat:newline"}}, '
           '{"context": "Global", "bindings": {"ctrl+o ctrl+o": "app:toggleTranscript", '
           '"ctrl+d": "app:exit"}}, {"context": "Chat", "bindings": {"ctrl+d": "chat:undo"}}]}')
    _keybindings([], raw=raw)
    keymap = read_keybindings()
    warnings = "\n".join(keymap.warnings)
    assert "ctrl+t is written twice in one block: only the last one counts" in warnings
    assert "ctrl+t → undo the last edit in the input is never reached: it begins the chord ctrl+t ctrl+n" in warnings
    assert "ctrl+o no longer does output: it begins the chord ctrl+o ctrl+o" in warnings
    assert "Chat ctrl+d is bound twice: chat:undo wins over the earlier 'ctrl+d' (quit)" in warnings
    assert len(keymap.warnings) == 4 and keymap.refused == []


@pytest.mark.asyncio
async def test_a_chord_shows_its_pending_key_and_runs_after_the_text_typed_before() -> None:
    _keybindings([{"context": "Chat", "bindings": {"ctrl+k ctrl+n": "chat:newline",
                                                   "ctrl+k ctrl+k ctrl+n": "chat:undo"}}])
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        chords = app.command_runner.preferences.chords
        await pilot.press("a", "b", "ctrl+k")
        await wait_until(pilot, lambda: chords.state is ChordState.PENDING, what="a pending chord")
        assert app.status.hint == "ctrl+k … waiting for ctrl+k or ctrl+n (esc cancels)"
        await pilot.press("ctrl+n", "c")
        await wait_until(pilot, lambda: app.prompt.text == "ab\nc", what="the chord's newline")
        assert chords.state is ChordState.IDLE and app.status.hint == ""
        await pilot.press("ctrl+k", "ctrl+k")  # into the longer chord
        await wait_until(pilot, lambda: chords.pending == ("ctrl+k", "ctrl+k"), what="two keys pending")
        assert app.status.hint == "ctrl+k ctrl+k … waiting for ctrl+n (esc cancels)"
        await pilot.press("ctrl+n")  # undo: the "c" goes
        await wait_until(pilot, lambda: app.prompt.text == "ab\n", what="the chord's undo")
        page = str(app.command_runner.preferences.keybindings_page())
        assert "ctrl+k ctrl+n" in page and "(yours: ctrl+k ctrl+k ctrl+n)" in page


@pytest.mark.asyncio
async def test_esc_a_stray_key_or_the_timeout_cancels_a_chord_and_nothing_is_typed() -> None:
    _keybindings([{"context": "Global", "bindings": {"ctrl+k ctrl+o": "app:toggleTranscript"}},
                  {"context": "Chat", "bindings": {"ctrl+k ctrl+n": "chat:newline"}}])
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        chords = app.command_runner.preferences.chords
        await pilot.press("a", "ctrl+k", "escape")
        await wait_until(pilot, lambda: "ctrl+k cancelled" in str(app.status.notice_text),
                         what="Esc's cancel")
        assert chords.state is ChordState.IDLE and app.prompt.text == "a"
        await pilot.press("ctrl+k", "x")
        await wait_until(pilot, lambda: "ctrl+k x: no such chord" in str(app.status.notice_text),
                         what="a stray key's cancel")
        assert app.prompt.text == "a" and app.status.hint == ""  # the x was not typed
        chords.timeout_s = 0.05
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: "no next key within 0.05 s" in str(app.status.notice_text),
                         what="the timeout")
        assert chords.state is ChordState.IDLE and app.status.hint == ""
        await pilot.press("b")
        await wait_until(pilot, lambda: app.prompt.text == "ab", what="typing again")


@pytest.mark.asyncio
async def test_no_chord_is_taken_under_another_screen_and_a_reload_drops_a_pending_one() -> None:
    _keybindings([{"context": "Chat", "bindings": {"ctrl+k ctrl+n": "chat:newline"}}])
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        prefs = app.command_runner.preferences
        app.action_help()
        await wait_until(pilot, lambda: len(app.screen_stack) > 1, what="the help screen")
        assert not prefs.chords.take("ctrl+k")  # the help has the keys
        app.pop_screen()
        await wait_until(pilot, lambda: len(app.screen_stack) == 1 and app.prompt.has_focus,
                         what="the main screen again")
        assert prefs.chords.take("ctrl+k")
        _keybindings([{"context": "Chat", "bindings": {"ctrl+t": "chat:newline"}}])
        os.utime(claude_config_dir() / "keybindings.json", ns=(1, 1))
        assert prefs.look_at_keybindings()
        assert prefs.chords.state is ChordState.IDLE and app.status.hint == ""
        assert not prefs.chords.take("ctrl+k")


@pytest.mark.asyncio
async def test_a_chords_hint_and_ctrl_cs_press_again_each_keep_their_own_text() -> None:
    _keybindings([{"context": "Chat", "bindings": {"ctrl+k ctrl+n": "chat:newline"}}])
    app = _app()  # its clock stands still: Ctrl+C's window stays open
    quit_hint = "press Ctrl+C again to quit"
    async with app.run_test(size=SIZE) as pilot:
        chords = app.command_runner.preferences.chords
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.status.hint == quit_hint, what="Ctrl+C's hint")
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: chords.state is ChordState.PENDING, what="a pending chord")
        assert app.status.hint == f"ctrl+k … waiting for ctrl+n (esc cancels)  {quit_hint}"
        await pilot.press("x")  # the chord is cancelled: its hint goes, Ctrl+C's stays
        await wait_until(pilot, lambda: chords.state is ChordState.IDLE, what="the cancel")
        assert app.status.hint == quit_hint
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: chords.state is ChordState.PENDING, what="a pending chord")
        app.status.set_hint("")  # Ctrl+C's window closed: the chord's hint stays
        assert app.status.hint == "ctrl+k … waiting for ctrl+n (esc cancels)"
