"""The status line while the session's SessionEnd hooks run: it says so, and that Esc
ends them (a snapshot; the fake session plays the events)."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from agent_tui.protocol import HookEvent, HookRunState, HookStateChanged  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle  # noqa: E402

EVENTS = [HookStateChanged(event=HookEvent.SESSION_END, state=HookRunState.RUNNING,
                           commands=["./scripts/save-notes.sh"])]


def _run_before(pilot) -> None:
    return settle(pilot, pilot.app, len(EVENTS))


def test_the_status_line_says_session_end_hooks_run_and_esc_ends_them(snap_compare) -> None:
    make, _ = fake_factory(EVENTS)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    assert snap_compare(app, terminal_size=(110, 32), run_before=_run_before)
