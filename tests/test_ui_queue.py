"""Queue editing: queued steers and follow-ups are selected in the queue pane, edited
and removed by asking the core; an item the core applied first is not changed and the
edit is not lost; Up on an empty input pulls the newest queued item back."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import EditQueued, RemoveQueued, SteerState  # noqa: E402
from agent_tui.protocol.states import SteerKind, SteerStatus  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.queue_edit import QueueEditScreen  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

pytestmark = pytest.mark.asyncio
SIZE = (110, 34)

QUEUED = [
    *scenarios.TOOL_RUNNING,
    SteerState(id="q1", state=SteerStatus.QUEUED, text="also run the linter"),
    SteerState(id="q2", state=SteerStatus.QUEUED, kind=SteerKind.FOLLOW_UP, text="then write a summary"),
]


def _edited(op):
    return [SteerState(id=op.id, state=SteerStatus.EDITED, text=op.text)]


def _removed_text(op):
    texts = {"q1": "also run the linter", "q2": "then write a summary"}
    return [SteerState(id=op.id, state=SteerStatus.REMOVED, text=texts[op.id])]


def _app(replies):
    make, made = fake_factory(QUEUED, replies)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0), made


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


async def test_an_item_is_selected_edited_and_the_core_is_asked() -> None:
    app, made = _app({EditQueued: _edited})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(QUEUED))
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.focused is app.queue_pane and app.queue_pane.cursor == "q2"  # the newest
        await pilot.press("up", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, QueueEditScreen), what="editor")
        await _type(pilot, " and the type checker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.queue_pane.items["q1"].state == SteerStatus.EDITED, what="edited")
        assert made[0].ops == [EditQueued(id="q1", text="also run the linter and the type checker")]
        assert app.queue_pane.items["q1"].text == "also run the linter and the type checker"
        assert "queued (edited)" in app.queue_pane.render().plain


async def test_an_item_is_removed() -> None:
    app, made = _app({RemoveQueued: _removed_text})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(QUEUED))
        await pilot.press("alt+up", "d")
        await wait_until(pilot, lambda: app.queue_pane.items["q2"].state == SteerStatus.REMOVED, what="removed")
        assert made[0].ops == [RemoveQueued(id="q2")]
        assert app.prompt.text == ""  # removed, not pulled back
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.prompt


async def test_an_edit_that_comes_too_late_is_not_lost() -> None:
    def too_late(op):  # the core applied it first
        return [SteerState(id=op.id, state=SteerStatus.APPLIED, text="also run the linter")]

    app, made = _app({EditQueued: too_late})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(QUEUED))
        await pilot.press("alt+up", "up", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, QueueEditScreen), what="editor")
        await _type(pilot, " twice")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.queue_pane.items["q1"].state == SteerStatus.APPLIED, what="applied")
        assert app.prompt.text == "also run the linter twice"
        assert "applied before the edit" in app.status.plain()


async def test_an_applied_item_can_no_longer_be_edited() -> None:
    app, made = _app({})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(QUEUED))
        app.inbox.emit(SteerState(id="q2", state=SteerStatus.APPLIED, kind=SteerKind.FOLLOW_UP,
                                  text="then write a summary"))
        await settle(pilot, app, len(QUEUED) + 1)
        await pilot.press("alt+up")
        await pilot.pause()
        assert app.queue_pane.cursor == "q1"  # only a waiting item can be picked
        await pilot.press("down", "e")  # there is nothing below q1 that can be changed
        await wait_until(pilot, lambda: isinstance(app.screen, QueueEditScreen), what="editor")
        assert app.screen.item_id == "q1"


async def test_up_on_an_empty_input_pulls_the_newest_queued_item_back() -> None:
    app, made = _app({RemoveQueued: _removed_text})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(QUEUED))
        await pilot.press("up")
        await wait_until(pilot, lambda: app.prompt.text == "then write a summary", what="pulled back")
        assert made[0].ops == [RemoveQueued(id="q2")]
        await pilot.press("up")  # the input is not empty now: Up is the input's own again
        await pilot.pause()
        assert made[0].ops == [RemoveQueued(id="q2")]
