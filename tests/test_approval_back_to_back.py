"""Two calls asked for in one turn: the second prompt follows the first, and the
transcript behind it is lifted once, to the right place, at once: what stands below the
transcript (the tools pane, which took the first call's result) is laid out before the
prompt measures it, so no later look has to correct the lift (a visible jump). And a
prompt shows only once the transcript is lifted: its first frame is in place."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import Decide, ToolOutput, ToolStateChanged  # noqa: E402
from agent_tui.protocol.states import ToolState as S  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests import approval_scenarios as scenes  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

pytestmark = pytest.mark.asyncio
SECOND = {"command": "npm run build", "description": "Build the project"}


def _second_asked(op: Decide) -> list:
    """The first call runs (its output grows the tools pane), then the second asks."""
    if op.tool_use_id != "toolu_c":
        return []
    first = {"turn_id": scenes.TURN, "tool_use_id": "toolu_c", "name": "bash", "summary": "npm test",
             "input": scenes.COMMAND[-1].input}
    second = {"turn_id": scenes.TURN, "tool_use_id": "toolu_d", "name": "bash", "summary": "npm run build",
              "input": SECOND}
    return [ToolStateChanged(**first, state=S.RUNNING),
            ToolOutput(turn_id=scenes.TURN, tool_use_id="toolu_c", text="12 passed\n"),
            ToolStateChanged(**first, state=S.SUCCEEDED, detail="exit 0", result="12 passed"),
            ToolStateChanged(**second, state=S.AWAITING_APPROVAL),
            scenes.COMMAND[-1].model_copy(update={"tool_use_id": "toolu_d", "summary": "npm run build",
                                                  "input": SECOND})]


async def test_the_second_prompt_lifts_the_transcript_once_and_right(tmp_path: Path, monkeypatch) -> None:
    looks: list[tuple[str, int, int]] = []  # (prompt, lift before, lift after) per look
    shown_before_lifted: list[str] = []  # prompts whose lift changed while they showed
    lift = PermissionScreen._lift_behind

    def looked(self: PermissionScreen) -> None:
        before = self._behind.styles.margin.bottom if self._behind is not None else 0
        lift(self)
        after = self._behind.styles.margin.bottom if self._behind is not None else 0
        if before != after and not self.query_one("#dialog").has_class("fitting"):
            shown_before_lifted.append(self.tool_use_id)
        looks.append((self.tool_use_id, before, after))

    monkeypatch.setattr(PermissionScreen, "_lift_behind", looked)
    from agent_tui.ui.app import main

    monkeypatch.setattr(main, "FLUSH_INTERVAL", 3600.0)  # the app renders only when told here
    second_queued = ToolStateChanged(turn_id=scenes.TURN, tool_use_id="toolu_d", name="bash",
                                     summary="npm run build", input=SECOND, state=S.QUEUED)
    events = [*scenes.COMMAND[:4], second_queued, *scenes.COMMAND[4:]]
    make, _ = fake_factory(events, {Decide: _second_asked}, workspace=scenes.workspace(tmp_path))
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app, len(events))
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.armed,
                         what="the first prompt takes answers")
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen)
                         and app.screen.tool_use_id == "toolu_d", what="the second prompt")
        await wait_until(pilot, lambda: any(p == "toolu_d" for p, _, _ in looks), what="a first lift")
        app.flush()  # what streamed in is rendered now, if it was not before the prompt measured
        # Two more looks (LIFT_CHECK): had the tools pane grown since, the lift would change.
        seen = len(looks)
        await wait_until(pilot, lambda: len(looks) >= seen + 2, what="two more looks at the lift")
        assert "12 passed" in str(app.tools_pane.render_rows())
        changes = [(before, after) for p, before, after in looks if p == "toolu_d" and before != after]
        assert len(changes) == 1, f"the lift was corrected after it was shown: {changes}"
        assert shown_before_lifted == []  # each prompt showed with the transcript lifted
        dialog = app.screen.query_one("#dialog")
        assert app.transcript.region.bottom == dialog.region.y  # and it is the right one
