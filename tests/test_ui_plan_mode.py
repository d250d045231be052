"""Plan mode in the TUI, driven with keys: Shift+Tab cycles the permission mode (the
real Session's policy follows, the status line shows it), a plan from exit_plan_mode
is shown for approval, and approving it leaves plan mode. Snapshots of both."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.journal.records import PermissionModeRecord  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.permissions import Permissions  # noqa: E402
from agent_tui.protocol import PermissionMode, PermissionRequested, SetPermissionMode  # noqa: E402
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider  # noqa: E402
from agent_tui.tools.files import ReadFileTool  # noqa: E402
from agent_tui.tools.plan_mode import ExitPlanModeTool  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (110, 32)
PLAN_TEXT = "## Plan\n1. Rename `load()` to `read_config()` in src/config.py\n2. Run the tests"


def _planning_session(workspace: Path, mode: str = "ask"):
    made: list[Session] = []
    script = Script(rules=[Rule(match="plan", replies=[
        [Block(text="Here is the plan."), Block(tool="exit_plan_mode", input={"plan": PLAN_TEXT})],
        [Block(text="Carrying it out.")],
    ])], default=[[Block(text="ok")]])

    def make(emit):
        deps = SessionDeps(
            config=AgentConfig(workspace=workspace, model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(script, delay=0.0),
            tools=ToolSet([ReadFileTool(), ExitPlanModeTool()]),
            policy=Permissions(workspace, mode), journal=Journal(), emit=emit,
        )
        made.append(Session(deps))
        return made[-1]

    return make, made


@pytest.mark.asyncio
async def test_shift_tab_cycles_the_mode_and_the_session_follows(tmp_path) -> None:
    make, made = _planning_session(tmp_path)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(made), what="the session")
        session = made[0]
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: session.permission_mode is PermissionMode.ACCEPT_EDITS)
        assert "accept edits" in app.status.plain()
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: session.permission_mode is PermissionMode.PLAN)
        assert "plan mode: read-only" in app.status.plain()
        await pilot.press("shift+tab")  # auto is not in the cycle: the session started in ask
        await wait_until(pilot, lambda: session.permission_mode is PermissionMode.ASK)
        assert "plan mode" not in app.status.plain() and "auto" not in app.status.plain()


@pytest.mark.asyncio
async def test_an_approved_plan_leaves_plan_mode_for_accept_edits(tmp_path, monkeypatch) -> None:
    from agent_tui.ui.screens import permission

    monkeypatch.setattr(permission, "ARM_DELAY", 0.0)
    make, made = _planning_session(tmp_path, mode="plan")
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(made), what="the session")
        await wait_until(pilot, lambda: "plan mode" in app.status.plain(), what="the mode shown")
        await pilot.press(*"plan", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="the plan")
        screen = app.screen
        assert screen.is_plan
        shown = str(screen.query_one("#plan-text").render())
        assert "read_config()" in shown
        await wait_until(pilot, lambda: screen.armed, what="the prompt takes answers")
        await pilot.press("a")
        session = made[0]
        await wait_until(pilot, lambda: session.permission_mode is PermissionMode.ACCEPT_EDITS)
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="the turn")
        modes = [r.mode for r in session.deps.journal.records if isinstance(r, PermissionModeRecord)]
        assert modes == [PermissionMode.PLAN, PermissionMode.ACCEPT_EDITS]
        assert "accept edits" in app.status.plain()


# -- snapshots ---------------------------------------------------------------------------

PLAN_PROMPT = [
    *scenarios._start("rename load() everywhere"),
    *scenarios._text("I looked at the callers. Here is the plan."),
    scenarios._tool("toolu_x", "exit_plan_mode", scenarios.S.AWAITING_APPROVAL, PLAN_TEXT),
    PermissionRequested(turn_id=scenarios.TURN, tool_use_id="toolu_x", name="exit_plan_mode",
                        summary=PLAN_TEXT, input={"plan": PLAN_TEXT}, reason="approve the plan"),
]


def test_plan_mode_in_the_status_line(snap_compare) -> None:
    make, _ = fake_factory(scenarios.IDLE)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)

    async def run_before(pilot) -> None:
        await settle(pilot, app, len(scenarios.IDLE))
        await pilot.press("shift+tab", "shift+tab")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    assert [op.mode for op in _ops(app) if isinstance(op, SetPermissionMode)] == [
        PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN]


def test_a_plan_waits_for_approval(snap_compare) -> None:
    make, _ = fake_factory(PLAN_PROMPT)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)

    async def run_before(pilot) -> None:
        await settle(pilot, app, len(PLAN_PROMPT))

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _ops(app: AgentApp) -> list:
    session = app.host.session
    return list(getattr(session, "ops", []))
