"""Snapshots of the permission prompt, one per kind of call (command, a command that
gets no lasting rule, edit, new file, web fetch, MCP tool, plan, a long command folded
and, after ctrl+o, whole), and of an edit's
numbered diff in the transcript once it ran. The prompt sits at the foot of the
window; the transcript stays visible above it, and scrolls behind it (PageUp). ctrl+e
explains the call.

Review changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests import approval_scenarios as scenes  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

WIDE = (100, 30)


def _app(events, tmp: Path) -> AgentApp:
    make, _ = fake_factory(events, workspace=scenes.workspace(tmp))
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


def _settled(events, keys: tuple[str, ...] = ()):
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(events))
        if keys:
            await pilot.press(*keys)
            await settle(pilot, pilot.app, len(events))
        await _lifted(pilot)

    return run_before


async def _lifted(pilot) -> None:
    """Until the transcript's end sits just above the prompt (the prompt lifts it)."""
    app = pilot.app
    if isinstance(app.screen, PermissionScreen):
        dialog = app.screen.query_one("#dialog")
        await wait_until(pilot, lambda: app.transcript.region.bottom == dialog.region.y,
                         what="the transcript lifted above the prompt")
        await pilot.pause()


@pytest.mark.parametrize("scene", ["COMMAND", "DANGEROUS", "EDIT", "NEW_FILE", "FETCH", "MCP", "PLAN",
                                   "LONG_COMMAND"])
def test_the_prompt_for_each_kind_of_call(snap_compare, tmp_path: Path, scene: str) -> None:
    events = getattr(scenes, scene)
    assert snap_compare(_app(events, tmp_path), terminal_size=WIDE, run_before=_settled(events))


def test_an_edit_after_it_ran_shows_its_numbered_diff(snap_compare, tmp_path: Path) -> None:
    events = scenes.edit_done()
    assert snap_compare(_app(events, tmp_path), terminal_size=WIDE, run_before=_settled(events))


def test_tab_opens_the_command_for_editing(snap_compare, tmp_path: Path, monkeypatch) -> None:
    from agent_tui.ui.screens import permission

    monkeypatch.setattr(permission, "ARM_DELAY", 0.0)  # the keys answer at once
    events = scenes.COMMAND
    assert snap_compare(_app(events, tmp_path), terminal_size=WIDE,
                        run_before=_settled(events, ("tab", *" -- --bail")))


def test_ctrl_o_shows_a_long_command_whole(snap_compare, tmp_path: Path, monkeypatch) -> None:
    from agent_tui.ui.screens import permission

    monkeypatch.setattr(permission, "ARM_DELAY", 3600.0)  # ctrl+o needs no arming
    events = scenes.LONG_COMMAND
    assert snap_compare(_app(events, tmp_path), terminal_size=(100, 50),
                        run_before=_settled(events, ("ctrl+o",)))


def test_ctrl_e_explains_the_call(snap_compare, tmp_path: Path, monkeypatch) -> None:
    from agent_tui.ui.screens import permission

    monkeypatch.setattr(permission, "ARM_DELAY", 3600.0)  # ctrl+e needs no arming
    events = scenes.DANGEROUS
    assert snap_compare(_app(events, tmp_path), terminal_size=WIDE, run_before=_settled(events, ("ctrl+e",)))


def test_the_transcript_scrolled_behind_the_prompt(snap_compare, tmp_path: Path, monkeypatch) -> None:
    from agent_tui.ui.screens import permission

    monkeypatch.setattr(permission, "ARM_DELAY", 3600.0)  # nor does scrolling
    events = scenes.SCROLLED
    assert snap_compare(_app(events, tmp_path), terminal_size=WIDE, run_before=_settled(events, ("pageup",)))


def test_a_long_diff_in_a_small_window_scrolls_and_the_answers_stay(snap_compare, tmp_path: Path) -> None:
    events = scenes.long_edit(tmp_path)
    make, _ = fake_factory(events, workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    assert snap_compare(app, terminal_size=(100, 24), run_before=_settled(events))
