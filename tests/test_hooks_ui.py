"""The tools pane while a hook decides about a call: "checked by hook", then the
call's own state again."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import HookEvent, HookRunState, HookStateChanged, TurnStarted  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle  # noqa: E402


def _hook(state: HookRunState) -> HookStateChanged:
    return HookStateChanged(event=HookEvent.PRE_TOOL_USE, state=state, commands=["./guard.sh"],
                            turn_id=scenarios.TURN, tool_use_id="toolu_a")


@pytest.mark.asyncio
async def test_the_tools_pane_shows_a_call_checked_by_a_hook_while_the_hook_runs() -> None:
    events = [TurnStarted(turn_id=scenarios.TURN, text="go"),
              scenarios._tool("toolu_a", "bash", scenarios.S.QUEUED, "git push"),
              _hook(HookRunState.RUNNING)]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app, len(events))
        app.flush()
        assert "└ checked by hook" in app.tools_pane.render_rows().plain
        app.inbox.emit(_hook(HookRunState.ENDED))
        app.inbox.emit(scenarios._tool("toolu_a", "bash", scenarios.S.RUNNING, "git push"))
        await settle(pilot, app, len(events) + 2)
        app.flush()
        assert "checked by hook" not in app.tools_pane.render_rows().plain
