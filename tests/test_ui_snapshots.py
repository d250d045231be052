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
from tests.snapshot_tests.support import fake_factory, settle, utc_hhmm, wait_until  # noqa: E402

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


def test_a_call_still_stopping_after_its_turn_ended_says_so_in_place(snap_compare) -> None:
    events = scenarios.STOPPING_AFTER_THE_TURN
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


# ------------------------------------------------------------ issue 5: rewind, jobs, output, status

def _app_with(events, replies=None) -> AgentApp:
    make, _ = fake_factory(events, replies)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, format_time=utc_hhmm)


async def _open_rewind(pilot) -> None:
    app = pilot.app
    await pilot.press("escape", "escape")
    await wait_until(
        pilot, lambda: app.rewind_slot.screen is not None and app.rewind_slot.screen.step == "points",
        what="rewind points",
    )
    await pilot.pause()


class TestRewind:
    def test_rewind_menu_lists_messages_and_undo_points(self, snap_compare) -> None:
        events = scenarios.HISTORY
        app = _app_with(events, scenarios.REWIND_REPLIES)
        assert snap_compare(app, terminal_size=WIDE, run_before=_settled(events, _open_rewind))

    def test_rewind_plan_with_a_conflict_and_what_cannot_be_undone(self, snap_compare) -> None:
        events = scenarios.HISTORY

        async def plan(pilot) -> None:
            await _open_rewind(pilot)
            await pilot.press("down", "down", "enter")
            screen = pilot.app.rewind_slot.screen
            await wait_until(pilot, lambda: screen.step == "plan", what="plan")
            await pilot.pause()

        app = _app_with(events, scenarios.REWIND_REPLIES)
        assert snap_compare(app, terminal_size=WIDE, run_before=_settled(events, plan))

    def test_rewind_asks_before_overwriting_files_changed_since(self, snap_compare) -> None:
        events = scenarios.HISTORY

        async def confirm(pilot) -> None:
            await _open_rewind(pilot)
            await pilot.press("down", "down", "enter")
            screen = pilot.app.rewind_slot.screen
            await wait_until(pilot, lambda: screen.step == "plan", what="plan")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen.step == "confirm", what="confirm")
            await pilot.pause()

        app = _app_with(events, scenarios.REWIND_REPLIES)
        assert snap_compare(app, terminal_size=WIDE, run_before=_settled(events, confirm))

    def test_rewound_text_is_back_in_the_input_below_a_divider(self, snap_compare) -> None:
        events = [*scenarios.HISTORY, scenarios.REWOUND_T2]
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


def test_background_jobs_screen(snap_compare) -> None:
    events = scenarios.BACKGROUND

    async def open_jobs(pilot) -> None:
        await pilot.press("ctrl+b")
        await pilot.pause()

    assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events, open_jobs))


def test_expanded_tool_output_keeps_the_tail_and_shows_the_result(snap_compare) -> None:
    events = scenarios.EXPANDED_OUTPUT

    async def expand(pilot) -> None:
        await pilot.press("ctrl+o")
        await pilot.pause()

    assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events, expand))


def test_web_search_results_show_their_titles_and_links(snap_compare) -> None:
    events = scenarios.WEB_SEARCH
    assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


def test_a_web_search_is_asked_for_with_its_query(snap_compare) -> None:
    events = scenarios.WEB_SEARCH_ASKED
    assert snap_compare(_app(events), terminal_size=WIDE, run_before=_settled(events))


def test_journal_error_stays_in_the_status_line(snap_compare) -> None:
    events = scenarios.JOURNAL_ERROR
    assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


def test_retry_scheduled_shows_the_countdown(snap_compare) -> None:
    events = scenarios.RETRY
    assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


# ------------------------------------------------------------ issue 11: every tool state on screen

TALL = (110, 40)


class TestToolStates:
    def test_queued_call_waits_behind_one_awaiting_approval(self, snap_compare) -> None:
        events = scenarios.APPROVAL_AND_QUEUED
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))

    def test_cancelling_shows_cleanup_progress_while_one_call_still_runs(self, snap_compare) -> None:
        # A background job is running too: Esc does not stop it, and the status line
        # keeps counting it next to the cleanup progress.
        events = scenarios.CANCELLING_PROGRESS
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))

    def test_all_six_end_states_side_by_side(self, snap_compare) -> None:
        events = scenarios.ALL_END_STATES
        assert snap_compare(_app_with(events), terminal_size=TALL, run_before=_settled(events))

    def test_follow_up_queued_next_to_a_steer(self, snap_compare) -> None:
        events = scenarios.STEER_AND_FOLLOW_UP
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


class TestSubAgents:
    def test_task_call_with_nested_calls_of_its_sub_agent(self, snap_compare) -> None:
        events = scenarios.SUBAGENT_RUNNING
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))

    def test_interrupted_task_keeps_each_nested_calls_own_state(self, snap_compare) -> None:
        events = scenarios.SUBAGENT_INTERRUPTED
        assert snap_compare(_app_with(events), terminal_size=WIDE, run_before=_settled(events))


def test_a_resumed_session_shows_its_conversation(snap_compare) -> None:
    make, _ = fake_factory([])

    def resumed(emit):
        session = make(emit)
        session.past_records = scenarios.past_records  # what the journal held
        return session

    app = AgentApp(resumed, cursor_blink=False, clock=lambda: 0.0, format_time=utc_hhmm, welcome=False)

    async def shown(pilot) -> None:
        await wait_until(pilot, lambda: "resumed:" in app.transcript.plain_text(), what="replay")
        await settle(pilot, app, 0)

    assert snap_compare(app, terminal_size=WIDE, run_before=shown)


def test_docs_screenshots_match_the_snapshots() -> None:
    """docs/ shows what the tests check (``python -m tests.snapshot_tests.screenshots``
    copies them again after a deliberate snapshot update)."""
    from tests.snapshot_tests.screenshots import DOCS, SNAPSHOTS, SOURCES

    stale = [name for name, source in SOURCES.items()
             if (DOCS / name).read_bytes() != (SNAPSHOTS / source).read_bytes()]
    assert not stale, f"stale screenshots in docs/: {stale}"
