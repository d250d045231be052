"""While the permission prompt is open the transcript behind it scrolls (PageUp,
PageDown, the mouse wheel) and the prompt keeps the focus and its keys. Before the
prompt is armed only answers are held: scrolling, ctrl+o (unfold the diff) and ctrl+e
(explain) work at once and do not restart the wait, and a digit typed then goes to the
input, never answering. The transcript is lifted above the prompt while it is open."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402
from textual import events  # noqa: E402
from textual.app import App  # noqa: E402

from agent_tui.protocol import Decide, Decision, PermissionRequested  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens import permission  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests import approval_scenarios as scenes  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

pytestmark = pytest.mark.asyncio
SIZE = (100, 30)


def _wheel(app: AgentApp, up: bool, x: int, y: int) -> None:
    """A wheel turn at (x, y) as the terminal's driver posts it."""
    kind = events.MouseScrollUp if up else events.MouseScrollDown
    app.post_message(kind(None, x, y, 0, -1 if up else 1, 0, False, False, False, screen_x=x, screen_y=y))


async def test_the_transcript_scrolls_behind_the_prompt_which_keeps_its_keys(tmp_path: Path) -> None:
    make, made = fake_factory(scenes.SCROLLED, workspace=scenes.workspace(tmp_path))
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenes.SCROLLED))
        prompt, transcript = app.screen, app.transcript
        assert isinstance(prompt, PermissionScreen)
        await wait_until(pilot, lambda: prompt.armed, what="the prompt takes answers")
        bottom = transcript.max_scroll_y
        assert bottom > 0 and transcript.scroll_y == bottom  # following the end

        await pilot.press("pageup")
        await wait_until(pilot, lambda: transcript.scroll_y < bottom, what="a page up")
        paged = transcript.scroll_y
        _wheel(app, True, 10, 2)  # over the transcript, above the prompt
        await wait_until(pilot, lambda: transcript.scroll_y < paged, what="the wheel scrolls up")
        wheeled = transcript.scroll_y
        _wheel(app, False, 10, 2)
        await wait_until(pilot, lambda: transcript.scroll_y > wheeled, what="the wheel scrolls down")
        await pilot.press("pagedown", "pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, what="back at the end")

        assert app.screen is prompt and prompt.decided is None  # scrolling answers nothing
        assert app.focused is None or app.focused.screen is prompt  # the focus stayed
        lifted = transcript.styles.margin.bottom
        assert lifted > 0  # the transcript's end sits above the prompt, not behind it
        await pilot.press("1")
        await wait_until(pilot, lambda: app.screen is not prompt, what="answered")
        assert [op for op in made[0].ops if isinstance(op, Decide)] == [
            Decide(tool_use_id="toolu_s", decision=Decision.ALLOW_ONCE)]
        assert transcript.styles.margin.bottom == 0  # put back


async def test_before_it_is_armed_only_answers_are_held(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(permission, "ARM_DELAY", 3600.0)  # never armed in this test
    events_ = scenes.long_edit(tmp_path, scenes.LONG_ANSWER)
    make, made = fake_factory(events_, workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events_))
        prompt = app.screen
        assert isinstance(prompt, PermissionScreen) and not prompt.armed
        diff = prompt.query_one("#diff")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: diff.has_class("unfolded"), what="ctrl+o unfolds at once")
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: bool(prompt.query("#explain")), what="ctrl+e explains at once")
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: not prompt.query("#explain"), what="ctrl+e again hides it")
        bottom = app.transcript.max_scroll_y
        assert bottom > 0
        await pilot.press("pageup")
        await wait_until(pilot, lambda: app.transcript.scroll_y < bottom, what="a page up at once")

        await pilot.press("1", "enter")  # an answer typed now is held: it goes to the input
        await wait_until(pilot, lambda: app.prompt.text == "1", what="the digit in the input")
        assert app.screen is prompt and prompt.decided is None
        assert not [op for op in made[0].ops if isinstance(op, Decide)]


async def test_a_key_that_answers_nothing_does_not_restart_the_wait() -> None:
    now = [0.0]
    decided: list[Decide] = []
    request = PermissionRequested(turn_id="t", tool_use_id="toolu_k", name="bash", summary="make",
                                  input={"command": "make"}, rule="mode:ask")
    prompt = PermissionScreen(request, decided.append, clock=lambda: now[0])

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(prompt)

    async with Host().run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: prompt.is_mounted, what="the prompt")
        now[0] = 0.2
        await pilot.press("x")  # typing: the wait starts again from here
        now[0] = 0.6
        assert not prompt.armed
        await pilot.press("pagedown", "ctrl+o", "ctrl+e")  # these do not restart it
        now[0] = 0.75
        assert prompt.armed
        await pilot.press("1")
        await wait_until(pilot, lambda: bool(decided), what="answered")
        assert decided == [Decide(tool_use_id="toolu_k", decision=Decision.ALLOW_ONCE)]
