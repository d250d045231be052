"""A command is shown whole, every line, where the user judges it: the permission
prompt and the transcript (a command hiding `touch PWNED` on its second line behind
`ls #'` must not look like `ls`)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import PermissionRequested, ToolStateChanged  # noqa: E402
from agent_tui.protocol.states import ToolState  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.render.safe_text import every_line, full_summary, short_summary  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests.support import fake_factory, wait_until  # noqa: E402

HIDDEN = "ls #'\ntouch PWNED\n#'"


def test_summaries_keep_every_line() -> None:
    assert full_summary("bash", f"$ {HIDDEN}") == f"$ {HIDDEN}"
    assert short_summary("bash", f"$ {HIDDEN}") == "$ ls #' ⏎ touch PWNED ⏎ #'"
    assert every_line("a\r\n\n\tb") == "a ⏎ b"


@pytest.mark.asyncio
async def test_the_permission_prompt_and_the_transcript_show_every_line(tmp_path: Path) -> None:
    ask = PermissionRequested(turn_id="t1", tool_use_id="toolu_b", name="bash",
                              summary=f"$ {HIDDEN}", input={"command": HIDDEN})
    events = [ToolStateChanged(turn_id="t1", tool_use_id="toolu_b", name="bash",
                               state=ToolState.AWAITING_APPROVAL, summary=f"$ {HIDDEN}",
                               input=ask.input), ask]
    make, _ = fake_factory(events, workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=tmp_path)
    async with app.run_test(size=(100, 34)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        await pilot.pause()
        shown = str(app.screen.query_one("#call").render())
        assert "touch PWNED" in shown and shown.count("\n") >= 2
        assert "touch PWNED" in app.transcript.plain_text()
