"""The rewind menu driven with keys: Esc Esc lists the messages, Enter shows the plan
(what would change, what cannot be undone), a choice sends ``Rewind``; files changed
since the checkpoint are only overwritten after an explicit second choice. The
``rewound`` answer puts the message back into the input and marks the transcript."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import (  # noqa: E402
    ListRewindPoints,
    PlanRewind,
    RestoreWhat,
    Rewind,
    RewindPoints,
)
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.rewind import RewindScreen  # noqa: E402
from agent_tui.ui.widgets.transcript_blocks import RewindBlock, UserBlock  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, utc_hhmm, wait_until  # noqa: E402

pytestmark = pytest.mark.asyncio

SIZE = (110, 40)


def _app(events=scenarios.HISTORY, replies=scenarios.REWIND_REPLIES):
    make, made = fake_factory(events, replies)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, format_time=utc_hhmm), made


async def _open(pilot, app) -> RewindScreen:
    await pilot.press("escape", "escape")
    await wait_until(pilot, lambda: app.rewind_slot.screen is not None and app.rewind_slot.screen.step == "points",
                     what="points")
    return app.rewind_slot.screen


async def _plan(pilot, screen: RewindScreen, downs: int) -> None:
    await pilot.press(*(["down"] * downs), "enter")
    await wait_until(pilot, lambda: screen.step == "plan", what="plan")


def _rewinds(made) -> list[Rewind]:
    return [op for op in made[0].ops if isinstance(op, Rewind)]


async def test_esc_esc_lists_messages_newest_first_with_undo_points() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        assert isinstance(app.screen, RewindScreen)
        assert made[0].ops == [ListRewindPoints()]
        assert [p.checkpoint_id for p in screen.points] == ["t2", "cp-undo-1", "t1"]
        options = screen.query_one("#points").options
        assert str(options[0].prompt).startswith("09:20  write tests for the parser")
        assert "undo point: before rewind to “rename the module”" in str(options[1].prompt)


async def test_the_plan_lists_what_cannot_be_undone_before_any_choice() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=2)
        assert made[0].ops[-1] == PlanRewind(checkpoint_id="t1")
        text = screen.render_plan().plain
        assert "restore   src/parser.py  +4 -1  CONFLICT: changed since the checkpoint" in text
        assert "Cannot be undone by a rewind:" in text
        assert "pip install -e ." in text
        assert _rewinds(made) == []


async def test_conflicts_need_an_explicit_overwrite() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=2)
        await pilot.press("enter")  # restore code and conversation
        await wait_until(pilot, lambda: screen.step == "confirm", what="confirm")
        assert _rewinds(made) == []
        await pilot.press("down", "enter")  # overwrite files changed since
        await wait_until(pilot, lambda: app.rewind_slot.screen is None, what="closed")
        assert _rewinds(made) == [Rewind(checkpoint_id="t1", restore=RestoreWhat.BOTH, overwrite_conflicts=True)]


async def test_keeping_conflicting_files_rewinds_without_overwrite() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=2)
        await pilot.press("down", "down", "enter")  # code only
        await wait_until(pilot, lambda: screen.step == "confirm", what="confirm")
        await pilot.press("enter")  # keep them
        await wait_until(pilot, lambda: app.rewind_slot.screen is None, what="closed")
        assert _rewinds(made) == [Rewind(checkpoint_id="t1", restore=RestoreWhat.CODE)]


async def test_conversation_only_does_not_ask_about_files() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=2)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.rewind_slot.screen is None, what="closed")
        assert _rewinds(made) == [Rewind(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION)]


async def test_an_undo_point_can_only_restore_code() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=1)
        actions = screen.query_one("#actions")
        assert [o.disabled for o in actions.options] == [True, True, False]
        assert actions.highlighted == 2


async def test_esc_steps_back_then_closes() -> None:
    app, made = _app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=0)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.step == "points"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.rewind_slot.screen is None, what="closed")
        assert _rewinds(made) == []


async def test_no_checkpoints_says_rewind_is_off() -> None:
    app, _ = _app(replies={ListRewindPoints: [RewindPoints(points=[], available=False)]})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenarios.HISTORY))
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.events_handled > len(scenarios.HISTORY), what="answer")
        await pilot.pause()
        options = app.rewind_slot.screen.query_one("#points").options
        assert "rewind is off" in str(options[0].prompt)


async def test_rewound_puts_the_message_back_and_dims_what_left_the_conversation() -> None:
    events = [*scenarios.HISTORY, scenarios.REWOUND_T2]
    app, _ = _app(events, {})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert app.prompt.text == "write tests for the parser"
        users = list(app.transcript.blocks_of(UserBlock))
        assert [u.rewound for u in users] == [False, True]
        [divider] = app.transcript.blocks_of(RewindBlock)
        assert "rewound to “write tests for the parser”" in divider.title
        body = divider.body.plain
        assert "skipped 1 file(s) changed since the checkpoint" in body
        assert "src/parser.py" in body


async def test_code_only_rewind_leaves_the_conversation_and_input_alone() -> None:
    rewound = scenarios.REWOUND_T2.model_copy(update={"restore": RestoreWhat.CODE})
    events = [*scenarios.HISTORY, rewound]
    app, _ = _app(events, {})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert app.prompt.text == ""
        assert not any(u.rewound for u in app.transcript.blocks_of(UserBlock))


async def test_rewind_through_the_real_session_restores_a_file(tmp_path) -> None:
    """End to end in process: a real Session with checkpoints, a tool that writes."""
    from tests.snapshot_tests.support import real_rewind_factory

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("original\n")
    app = AgentApp(real_rewind_factory(work, tmp_path / "state"), cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        for c in "write":
            await pilot.press(c)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="turn", timeout=10)
        assert (work / "notes.txt").read_text() == "changed\n"
        screen = await _open(pilot, app)
        await _plan(pilot, screen, downs=0)
        await pilot.press("enter")  # code and conversation
        await wait_until(pilot, lambda: app.prompt.text == "write", what="text back", timeout=10)
        assert (work / "notes.txt").read_text() == "original\n"
        assert next(app.transcript.blocks_of(UserBlock)).rewound


async def test_esc_esc_after_a_rewind_opens_the_menu_while_the_input_holds_the_rewound_text() -> None:
    events = [*scenarios.HISTORY, scenarios.REWOUND_T2]
    app, made = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert app.prompt.text == "write tests for the parser"
        [divider] = app.transcript.blocks_of(RewindBlock)
        assert "to undo this rewind: Esc Esc" in divider.body.plain
        screen = await _open(pilot, app)  # the hint is true: the menu opens
        assert made[0].ops[-1] == ListRewindPoints()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.rewind_slot.screen is None, what="closed")
        assert screen is not None and app.prompt.text == "write tests for the parser"
        # Once the text is edited, Esc Esc is the input's again (nothing opens).
        await pilot.press("end", "!")
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.rewind_slot.screen is None
