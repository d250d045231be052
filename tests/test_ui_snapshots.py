"""Snapshots of what a user sees, one per scenario. The app is driven by a fake
session that plays a fixed list of events (tests/snapshot_tests/scenarios.py), so
nothing moves between runs: no clocks, no spinners, no blinking cursor.

Review changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle  # noqa: E402

WIDE = (110, 32)


def _app(events, theme: str = "dark") -> AgentApp:
    make, _ = fake_factory(events)
    return AgentApp(make, theme=theme, cursor_blink=False, clock=lambda: 0.0)


def _settled(events, then=None):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(events))
        if then is not None:
            await then(pilot)
            await settle(pilot, pilot.app, len(events))

    return run_before


def test_idle_empty(snap_compare) -> None:
    assert snap_compare(_app(scenarios.IDLE), terminal_size=WIDE, run_before=_settled([]))


def test_streaming_text_is_markdown_and_never_markup(snap_compare) -> None:
    events = scenarios.STREAMING
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_tool_running_shows_last_output_line(snap_compare) -> None:
    events = scenarios.TOOL_RUNNING
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_cancelled_turn_with_mixed_tool_states(snap_compare) -> None:
    events = scenarios.CANCELLED_MIXED
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_permission_prompt(snap_compare) -> None:
    events = scenarios.PERMISSION
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_steers_queued_and_applied(snap_compare) -> None:
    events = scenarios.STEERS
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_returned_message_is_back_in_the_input(snap_compare) -> None:
    events = scenarios.RETURNED
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_narrow_80x24_cancelled_mixed(snap_compare) -> None:
    events = scenarios.CANCELLED_MIXED
    assert snap_compare(_app(events), terminal_size=(80, 24), run_before=_settled(events))


@pytest.mark.parametrize("theme", ["light", "high-contrast"])
def test_themes_cancelled_mixed(snap_compare, theme: str) -> None:
    events = scenarios.CANCELLED_MIXED
    assert snap_compare(_app(events, theme), terminal_size=WIDE, run_before=_settled(events))


def test_help_screen(snap_compare) -> None:
    async def open_help(pilot) -> None:
        await pilot.press("f1")

    assert snap_compare(_app([]), terminal_size=WIDE, run_before=_settled([], open_help))
