"""Background jobs (Ctrl+B, k stops one), expandable tool output (bounded), the
status line's sticky journal failure and honest retry countdown, and themes from
the command palette."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import (  # noqa: E402
    BackgroundJobChanged,
    Notice,
    RetryScheduled,
    StopBackground,
    TextDelta,
    TurnStarted,
)
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.render.output_tail import OutputTail  # noqa: E402
from agent_tui.ui.screens.background import BackgroundScreen  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (110, 36)


def _app(events, clock=lambda: 0.0):
    make, made = fake_factory(events)
    return AgentApp(make, cursor_blink=False, clock=clock), made


# ------------------------------------------------------------ background jobs


@pytest.mark.asyncio
async def test_ctrl_b_lists_jobs_and_k_stops_the_selected_one() -> None:
    events = scenarios.BACKGROUND
    app, made = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "⚙ 2 background" in app.status.plain()
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, BackgroundScreen), what="jobs")
        # Newest first: bash_4 (killed) is highlighted; k on an ended job does nothing.
        await pilot.press("k")
        assert not any(isinstance(op, StopBackground) for op in made[0].ops)
        await pilot.press("down", "down", "down", "k")  # bash_2, running
        await pilot.pause()
        assert [op for op in made[0].ops if isinstance(op, StopBackground)] == [StopBackground(id="bash_2")]
        assert "stopping…" in str(app.screen.query_one("#jobs").get_option("bash_2").prompt)
        # The core reports it ended: the list and the count follow.
        app.inbox.emit(BackgroundJobChanged(id="bash_2", kind="shell", description="pytest -q --looponfail",
                                            state="killed", detail="SIGTERM (user)"))
        await wait_until(pilot, lambda: app.jobs.running == 1, what="ended")
        await pilot.pause()
        assert "killed" in str(app.screen.query_one("#jobs").get_option("bash_2").prompt)
        assert "⚙ 1 background" in app.status.plain()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BackgroundScreen)


# ------------------------------------------------------------ tool output


def test_output_tail_keeps_the_last_lines_and_bytes() -> None:
    tail = OutputTail(max_lines=200, max_chars=64 * 1024)
    for i in range(1000):
        tail.append(f"line {i}\n")
    text, cut = tail.tail()
    assert cut and text.split("\n")[0] == "line 800" and text.endswith("line 999")
    big = OutputTail(max_lines=200, max_chars=1024)
    big.append("x" * 10_000)
    text, cut = big.tail()
    assert cut and len(text) == 1024


def test_output_tail_removes_an_escape_split_across_pieces() -> None:
    tail = OutputTail()
    tail.append("a\x1b]0;ti")
    tail.append("tle\x07b\n")
    assert tail.tail() == ("ab", False)


@pytest.mark.asyncio
async def test_ctrl_o_and_enter_expand_a_tool_call_with_its_output_and_result() -> None:
    events = scenarios.EXPANDED_OUTPUT
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        [entry] = app.transcript.tool_blocks()
        assert not entry.expanded
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert entry.expanded
        body = entry.render_body().plain
        assert "earlier output not shown" in body
        assert "test_case_061" not in body and "test_case_062 PASSED" in body
        assert "[bold]260 passed[/bold] in 1.2s" in body  # literal, not markup
        assert "\x1b" not in body
        assert "── result ──\nexit code 0" in body
        # Tab focuses it from the input; Enter folds it.
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is app.transcript and app.transcript.cursor is entry
        await pilot.press("enter")
        await pilot.pause()
        assert not entry.expanded


@pytest.mark.asyncio
async def test_output_of_a_running_call_updates_while_expanded() -> None:
    events = scenarios.TOOL_RUNNING
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        [entry] = app.transcript.tool_blocks()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "build step 3 of 30" in entry.render_body().plain
        app.inbox.emit(scenarios.ToolOutput(turn_id="t1", tool_use_id="toolu_1", text="build step 4 of 30\n"))
        await wait_until(pilot, lambda: "build step 4 of 30" in app.transcript.plain_text(), what="new output")


# ------------------------------------------------------------ status line


@pytest.mark.asyncio
async def test_journal_error_stays_until_the_session_ends() -> None:
    events = [
        *scenarios.TOOL_RUNNING,
        Notice(level="error", text="journal not saved (tool_intent): No space left on device",
           code="journal_write_failed"),
        Notice(level="info", text="something else"),
        TurnStarted(turn_id="t2", text="next"),
    ]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "✗ journal not saved" in app.status.plain()


@pytest.mark.asyncio
async def test_start_up_warnings_stay_whole_in_the_transcript_later_ones_in_the_status() -> None:
    """The status line holds one notice, cut to its width, cleared when a turn starts:
    what a settings file was found to hold (unknown keys, a bad rule) is said whole in
    the transcript before the first turn, each warning and error once."""
    unknown = ("/home/you/.claude/settings.json:3:3: not supported by agent-tui, ignored: "
               "statusLine, includeCoAuthoredBy, enabledPlugins, cleanupPeriodDays")
    bad_rule = (".claude/settings.local.json:4:7: permissions.allow[0]: permission rule "
                "'Bsah(ls)' names no known tool 'Bsah' (did you mean \"Bash\"?) (skipped)")
    events = [
        Notice(level="warning", text=unknown),
        Notice(level="info", text="an info note stays in the status line"),
        Notice(level="error", text=bad_rule),
        TurnStarted(turn_id="t1", text="hello"),
        Notice(level="warning", text="a warning during the turn"),
    ]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        shown = " ".join(app.transcript.plain_text().split())  # as written, not as wrapped
        assert shown.count("cleanupPeriodDays") == 1 and shown.count("'Bsah(ls)'") == 1
        assert "⚠ warning: " + unknown in shown and "⚠ error: " + bad_rule in shown
        assert "info note" not in shown and "during the turn" not in shown
        assert "during the turn" in app.status.plain()


@pytest.mark.asyncio
async def test_retry_counts_down_with_the_clock_and_clears_when_the_reply_comes() -> None:
    now = [100.0]
    events = [*scenarios.RETRY]
    app, _ = _app(events, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "retrying in 8s (attempt 3)" in app.status.plain()
        now[0] = 105.2
        app.status.tick()
        assert "retrying in 3s (attempt 3)" in app.status.plain()
        now[0] = 109.0
        app.status.tick()
        assert "retrying now (attempt 3)" in app.status.plain()
        app.inbox.emit(TextDelta(turn_id="t1", text="Here"))
        await wait_until(pilot, lambda: "retrying" not in app.status.plain(), what="cleared")


def test_retry_event_wording() -> None:
    event = RetryScheduled(turn_id="t1", attempt=1, delay=2.0, reason="x")
    assert event.attempt + 1 == 2  # the status line names the request about to be tried


# ------------------------------------------------------------ themes


@pytest.mark.asyncio
async def test_theme_from_the_command_palette() -> None:
    app, _ = _app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.has_class("-agent-theme-dark")
        await pilot.press("ctrl+p")
        await pilot.pause()
        for c in "theme light":
            await pilot.press("space" if c == " " else c)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme_name == "light", what="light theme")
        assert app.theme == "textual-light"
        assert app.has_class("-agent-theme-light") and not app.has_class("-agent-theme-dark")


@pytest.mark.asyncio
async def test_theme_option_still_chooses_at_start() -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, theme="high-contrast", cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "agent-tui-high-contrast" and app.has_class("-agent-theme-high-contrast")


# ------------------------------------------------------------ tool call times


def test_durations_read_short() -> None:
    from agent_tui.ui.render.times import format_duration

    assert [format_duration(s) for s in (0.42, 9.96, 12.7, 65, 3725)] == [
        "0.4s", "10.0s", "12s", "1m05s", "1h02m"]


@pytest.mark.asyncio
async def test_the_tools_pane_shows_how_long_each_call_runs_and_ran() -> None:
    now = [100.0]
    events = [TurnStarted(turn_id="t1", text="go"),
              scenarios._tool("toolu_a", "bash", scenarios.S.RUNNING, "make build"),
              scenarios._tool("toolu_b", "bash", scenarios.S.DENIED, "rm -rf build")]
    app, _ = _app(events, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        now[0] = 112.5
        app.tools_pane.tick()
        app.flush()
        text = app.tools_pane.render_rows().plain
        assert "12s  bash  make build" in text
        denied = next(line for line in text.splitlines() if "rm -rf build" in line)
        assert "s  bash" not in denied  # never ran: no time
        app.inbox.emit(scenarios._tool("toolu_a", "bash", scenarios.S.SUCCEEDED, "make build"))
        await settle(pilot, app, len(events) + 1)
        now[0] = 500.0
        app.tools_pane.tick()
        app.flush()
        assert "12s  bash  make build" in app.tools_pane.render_rows().plain  # stopped at the end


@pytest.mark.asyncio
async def test_a_call_that_ends_after_its_turn_stays_out_of_the_next_turns_pane() -> None:
    events = [*scenarios.STOPPING_AFTER_THE_TURN, TurnStarted(turn_id="t2", text="next")]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        app.inbox.emit(scenarios._tool("toolu_s", "bash", scenarios.S.CANCELLED_WHILE_RUNNING,
                                       "npm run dev", detail="SIGKILL", signal="SIGKILL"))
        await settle(pilot, app, len(events) + 1)
        assert "npm run dev" not in app.tools_pane.render_rows().plain


@pytest.mark.asyncio
async def test_a_call_moved_to_the_background_drops_its_old_last_line_in_the_tools_pane() -> None:
    from agent_tui.protocol import ToolState
    from agent_tui.protocol import ToolOutput

    events = [
        *scenarios._start("run a slow build"),
        scenarios._tool("toolu_b", "bash", ToolState.RUNNING, "$ ./build.sh"),
        ToolOutput(turn_id=scenarios.TURN, tool_use_id="toolu_b", text="build step 5 of 30\n"),
        scenarios._tool("toolu_b", "bash", ToolState.SUCCEEDED, "$ ./build.sh",
                        ended_by="send_to_background", detail="moved to the background as shell_1",
                        result="The command is still running, now in the background as shell_1"),
    ]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        row = app.tools_pane.rows["toolu_b"]
        assert row.last_line == ""  # "build step 5 of 30" would look like a stuck build
        shown = app.tools_pane.render_rows().plain
        assert "build step 5" not in shown and "moved to the background as shell_1" in shown
