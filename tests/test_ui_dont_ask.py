"""dont-ask mode (Claude Code's dontAsk) in the TUI: a call that would be asked is
refused without a prompt, what a rule allows runs, the status line says the mode, and
Shift+Tab can come back to it (as to auto) only because the session started in it.
A real Session on the real SDK against the fake API; a snapshot of the status line."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.permissions import PermissionRules, Permissions  # noqa: E402
from agent_tui.protocol import PermissionMode, PermissionRequested, SetPermissionMode  # noqa: E402
from agent_tui.providers.anthropic import AnthropicProvider  # noqa: E402
from agent_tui.tools.registry import default_tools  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.fake_api import Reply  # noqa: E402
from tests.hooks_support import tool_results  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (110, 32)


@pytest.fixture(autouse=True)
def quiet_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.claude of the machine


@pytest.mark.asyncio
async def test_a_call_that_would_be_asked_is_refused_without_a_prompt(fake_api, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_api.enqueue(
        Reply.tool_uses([("bash", {"command": "touch allowed"}, "toolu_allowed"),
                         ("bash", {"command": "touch refused"}, "toolu_refused")]),
        Reply.text("done"))
    made: list[Session] = []
    seen: list[Any] = []

    def make(emit):
        def both(event):
            seen.append(event)
            emit(event)
        deps = SessionDeps(
            config=AgentConfig(workspace=ws, model="claude-test", cleanup_budget=2.0),
            provider=AnthropicProvider(api_key="test-key", base_url=fake_api.url),
            tools=default_tools(ws),
            policy=Permissions(ws, "dontAsk", PermissionRules(allow=["Bash(touch allowed)"])),
            journal=Journal(), emit=both,
        )
        made.append(Session(deps))
        return made[-1]

    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(made), what="the session")
        await wait_until(pilot, lambda: "don't ask" in app.status.plain(), what="the mode shown",
                         timeout=30)
        await pilot.press(*"touch", "enter")
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="the turn",
                         timeout=60)
        assert not isinstance(app.screen, PermissionScreen)
        assert not any(isinstance(e, PermissionRequested) for e in seen)
        assert (ws / "allowed").exists() and not (ws / "refused").exists()
        told = {b["tool_use_id"]: json.dumps(b["content"]) for b in tool_results(fake_api.requests[1])}
        assert "permission mode dontAsk denies Bash without asking" in told["toolu_refused"]
        assert "Bash(touch refused) would allow it" in told["toolu_refused"]
        # Shift+Tab leaves it, and comes back to it: the session started in it
        session = made[0]
        for mode in (PermissionMode.ASK, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN,
                     PermissionMode.DONT_ASK):
            await pilot.press("shift+tab")
            await wait_until(pilot, lambda: session.permission_mode is mode, what=mode.value,
                             timeout=30)
        assert "don't ask" in app.status.plain()


# -- snapshot ----------------------------------------------------------------------------


def test_dont_ask_mode_in_the_status_line(snap_compare) -> None:
    make_fake, _ = fake_factory(scenarios.IDLE)

    def make(emit):
        session = make_fake(emit)
        session.permission_mode = PermissionMode.DONT_ASK  # what the session started in
        return session

    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)

    async def run_before(pilot) -> None:
        await settle(pilot, app, len(scenarios.IDLE))
        await wait_until(pilot, lambda: "don't ask" in app.status.plain(), what="the mode",
                         timeout=30)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    session = app.host.session
    assert not [op for op in getattr(session, "ops", []) if isinstance(op, SetPermissionMode)]
