"""The plan pane (todo_write) as a user sees it: live, interrupted, folded when done,
restored on resume and by a rewind; and the tools pane's line for grep and glob.

Snapshots are played by the fake session of ``support``; review changes in
snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.core.journal.records import (  # noqa: E402
    ToolIntentRecord,
    ToolResultRecord,
    TurnEndedRecord,
    UserMessageRecord,
)
from agent_tui.protocol import (  # noqa: E402
    RestoreWhat,
    Rewound,
    TextDelta,
    ToolStateChanged,
    TurnEnded,
    TurnStarted,
)
from agent_tui.protocol.states import ToolState as S  # noqa: E402
from agent_tui.protocol.states import TurnStatus  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import FakeSession, settle  # noqa: E402

WIDE = (110, 32)

PLAN = {"todos": [
    {"content": "Find where the flags are parsed", "status": "completed"},
    {"content": "Add the --verbose flag", "status": "completed"},
    {"content": "Write a test for it", "status": "in_progress",
     "activeForm": "Writing a test for --verbose"},
    {"content": "Update the README", "status": "pending"},
]}
DONE = {"todos": [dict(item, status="completed") for item in PLAN["todos"]]}


def _tool(turn: str, id: str, name: str, state: S, summary: str, **extra) -> ToolStateChanged:
    return ToolStateChanged(turn_id=turn, tool_use_id=id, name=name, state=state,
                            summary=summary, **extra)


def _turn(turn: str, text: str, plan: dict, *, status: TurnStatus | None) -> list:
    events = [
        TurnStarted(turn_id=turn, text=text),
        _tool(turn, f"{turn}-grep", "grep", S.SUCCEEDED, "grep 'argparse' in src",
              result="Found 3 matching lines in 2 files\nsrc/cli.py:12:import argparse"),
        _tool(turn, f"{turn}-glob", "glob", S.SUCCEEDED, "glob tests/**/*.py",
              result="Found 14 files\ntests/test_cli.py"),
        _tool(turn, f"{turn}-plan", "todo_write", S.SUCCEEDED, "todo_write: 2/4 done",
              input=plan, result="Plan updated"),
        TextDelta(turn_id=turn, text="Writing the test now."),
    ]
    if status is not None:
        events.append(TurnEnded(turn_id=turn, status=status))
    return events


LIVE = _turn("t1", "add a --verbose flag", PLAN, status=None) + [
    _tool("t1", "t1-bash", "bash", S.RUNNING, "$ pytest -q tests/test_cli.py")]
INTERRUPTED = _turn("t1", "add a --verbose flag", PLAN, status=TurnStatus.CANCELLED)
FOLDED = _turn("t1", "add a --verbose flag", DONE, status=TurnStatus.COMPLETED)


class _Resumed(FakeSession):
    def __init__(self, emit, events, records) -> None:
        super().__init__(emit, events)
        self.records = records

    def past_records(self) -> list:
        return self.records


def _app(events, records=None) -> AgentApp:
    def make(emit):
        return _Resumed(emit, events, records or [])

    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


def _settled(events):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(events))

    return run_before


def test_plan_pane_shows_the_plan_live_with_the_item_in_progress(snap_compare) -> None:
    assert snap_compare(_app(LIVE), terminal_size=WIDE, run_before=_settled(LIVE))


def test_plan_pane_marks_the_cut_off_item_interrupted(snap_compare) -> None:
    assert snap_compare(_app(INTERRUPTED), terminal_size=WIDE, run_before=_settled(INTERRUPTED))


def test_plan_pane_folds_when_every_item_is_done(snap_compare) -> None:
    assert snap_compare(_app(FOLDED), terminal_size=WIDE, run_before=_settled(FOLDED))


def _records(plan: dict, turn: str = "t1", call: str = "c1", cancelled: bool = True) -> list:
    return [
        UserMessageRecord(turn_id=turn, text="add a --verbose flag"),
        ToolIntentRecord(turn_id=turn, tool_use_id=call, name="todo_write", input=plan,
                         operation_id="op"),
        ToolResultRecord(turn_id=turn, tool_use_id=call, name="todo_write", state=S.SUCCEEDED,
                         content="Plan updated"),
        TurnEndedRecord(turn_id=turn, status=TurnStatus.CANCELLED if cancelled
                        else TurnStatus.COMPLETED),
    ]


def test_plan_pane_restores_the_interrupted_plan_of_a_resumed_session(snap_compare) -> None:
    app = _app([], records=_records(PLAN))
    assert snap_compare(app, terminal_size=WIDE, run_before=_settled([]))


@pytest.mark.asyncio
async def test_a_rewind_of_the_conversation_shows_the_plan_as_it_was() -> None:
    first = {"todos": [{"content": "Only step", "status": "in_progress"}]}
    events = [
        *_turn("t1", "one", first, status=TurnStatus.COMPLETED),
        *_turn("t2", "two", PLAN, status=TurnStatus.COMPLETED),
    ]
    app = _app(events)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, len(events))
        assert [i.content for i in app.plan_pane.plan.items][0] == "Find where the flags are parsed"
        app.dispatch.handle(Rewound(checkpoint_id="t2", restore=RestoreWhat.BOTH))
        assert [i.content for i in app.plan_pane.plan.items] == ["Only step"]
        app.dispatch.handle(Rewound(checkpoint_id="t1", restore=RestoreWhat.CODE))
        assert [i.content for i in app.plan_pane.plan.items] == ["Only step"]  # code only
        app.dispatch.handle(Rewound(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION))
        assert app.plan_pane.plan is None
        assert app.plan_pane.has_class("-empty")


@pytest.mark.asyncio
async def test_a_sub_agents_plan_does_not_replace_the_main_one() -> None:
    events = [
        *_turn("t1", "one", PLAN, status=None),
        _tool("t1", "sub-plan", "todo_write", S.SUCCEEDED, "todo_write: 0/1 done",
              input={"todos": [{"content": "Sub step", "status": "pending"}]},
              parent_tool_use_id="t1-task"),
    ]
    app = _app(events)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, len(events))
        assert app.plan_pane.plan.tool_use_id == "t1-plan"
