"""Turn-end notifications: only while the terminal is out of focus and only for a turn
longer than the threshold (or a call waiting for approval); the bell or OSC 9 / 777 as
the terminal speaks; off unless asked; never the model's words."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import PermissionRequested, TextDelta, TurnEnded, TurnStarted  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.app.notify import NotifyMode, NotifySettings, pick, sequence  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle  # noqa: E402


def test_auto_picks_what_the_terminal_speaks() -> None:
    assert pick(NotifyMode.AUTO, {"TERM_PROGRAM": "iTerm.app"}) is NotifyMode.OSC9
    assert pick(NotifyMode.AUTO, {"TERM": "foot"}) is NotifyMode.OSC777
    assert pick(NotifyMode.AUTO, {"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/x"}) is NotifyMode.BELL
    assert pick(NotifyMode.AUTO, {"TERM": "xterm-256color"}) is NotifyMode.BELL
    assert pick(NotifyMode.OFF, {"TERM_PROGRAM": "iTerm.app"}) is NotifyMode.OFF


def test_sequences_hold_no_control_characters_of_the_text() -> None:
    assert sequence(NotifyMode.OSC9, "turn completed\x1b]0;x\x07") == "\x1b]9;agent-tui: turn completed]0x\x07"
    assert sequence(NotifyMode.OSC777, "a;b") == "\x1b]777;notify;agent-tui;ab\x07"
    assert sequence(NotifyMode.BELL, "x") == "\x07"
    assert sequence(NotifyMode.OFF, "x") == ""


def test_the_environment_chooses_and_bad_values_are_reported() -> None:
    settings, problem = NotifySettings.from_environ({"AGENT_TUI_NOTIFY": "osc9", "AGENT_TUI_NOTIFY_AFTER": "5"})
    assert settings == NotifySettings(NotifyMode.OSC9, 5.0) and problem == ""
    settings, problem = NotifySettings.from_environ({"AGENT_TUI_NOTIFY": "loud"})
    assert settings.mode is NotifyMode.BELL and "not one of" in problem
    assert NotifySettings().mode is NotifyMode.OFF  # the app's own default: tests stay quiet


async def _turn(app, pilot, now: list[float], seconds: float, *, focused: bool, turn: str) -> None:
    app.app_focus = focused
    now[0] = 100.0
    app.inbox.emit(TurnStarted(turn_id=turn, text="go"))
    await settle(pilot, app, app.inbox.received)
    app.inbox.emit(TextDelta(turn_id=turn, text="SECRET model words"))
    now[0] = 100.0 + seconds
    app.inbox.emit(TurnEnded(turn_id=turn, status="completed"))
    await settle(pilot, app, app.inbox.received)


@pytest.mark.asyncio
async def test_a_long_turn_ending_while_unfocused_notifies_without_the_models_words() -> None:
    now = [0.0]
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: now[0],
                   notify=NotifySettings(NotifyMode.OSC9, after_s=30))
    async with app.run_test(size=(100, 30)) as pilot:
        await _turn(app, pilot, now, 125, focused=True, turn="t1")
        await _turn(app, pilot, now, 5, focused=False, turn="t2")
        assert app.notifier.sent == []  # focused, then too short
        await _turn(app, pilot, now, 125, focused=False, turn="t3")
        assert app.notifier.sent == ["\x1b]9;agent-tui: turn completed after 2m05s\x07"]
        assert not any("SECRET" in s for s in app.notifier.sent)
        app.inbox.emit(PermissionRequested(turn_id="t4", tool_use_id="x", name="bash", summary="SECRET",
                                           input={}))
        await settle(pilot, app, app.inbox.received)
        assert app.notifier.sent[-1] == "\x1b]9;agent-tui: a tool call waits for your approval\x07"
