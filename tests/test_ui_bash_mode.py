"""Bash mode in the TUI: ``!cmd`` in the input is marked as a shell command, Enter runs
it (``run_shell``), its output shows in the transcript, Esc stops it."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.calls.permission import AllowAll  # noqa: E402
from agent_tui.core.journal.records import UserCommandRecord  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.protocol import (  # noqa: E402
    RunShell,
    ToolOutput,
    ToolState,
    ToolStateChanged,
    UserMessage,
)
from agent_tui.providers.scripted import ScriptedProvider  # noqa: E402
from agent_tui.tools.bash import BashTool  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import demo_script, fake_factory, settle, wait_until  # noqa: E402
from tests.print_agent import marked  # noqa: E402

WIDE = (110, 32)
CALL = "bash_mode_0123456789ab"


def _ran(op: RunShell) -> list:
    common = dict(turn_id="", tool_use_id=CALL, name="bash", summary=f"! {op.command}",
                  input={"command": op.command})
    return [
        ToolStateChanged(state=ToolState.RUNNING, **common),
        ToolOutput(turn_id="", tool_use_id=CALL, text="README.md\nsrc\ntests\n"),
        ToolStateChanged(state=ToolState.SUCCEEDED, detail="exit 0", exit_code=0, **common),
    ]


def test_the_input_in_bash_mode(snap_compare) -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)

    async def run_before(pilot) -> None:
        await settle(pilot, app, 0)
        app.prompt.insert("!git status --short")
        await pilot.pause()
        assert app.prompt.has_class("-bash-mode")

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_the_transcript_after_a_bang_command(snap_compare) -> None:
    make, made = fake_factory([], {RunShell: _ran})
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)

    async def run_before(pilot) -> None:
        await settle(pilot, app, 0)
        app.prompt.insert("!ls")
        await pilot.press("enter")
        await settle(pilot, app, 3)
        assert [op for op in made[0].ops if isinstance(op, (RunShell, UserMessage))] == [
            RunShell(command="ls")]  # no message: no model request
        assert not app.prompt.has_class("-bash-mode") and app.prompt.text == ""

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


@pytest.mark.asyncio
async def test_esc_stops_a_bang_command_in_a_real_session(tmp_path: Path) -> None:
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    journal = Journal()

    def make(emit):
        return Session(SessionDeps(
            config=AgentConfig(workspace=tmp_path, model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(demo_script(), delay=0.0),
            tools=ToolSet([BashTool(grace=0.2)]), policy=AllowAll(), journal=journal, emit=emit,
        ))

    app = AgentApp(make, cursor_blink=False)
    try:
        async with app.run_test(size=WIDE) as pilot:
            await wait_until(pilot, lambda: app.host.session is not None, what="session")
            app.prompt.insert(f"!echo begun; sleep 300; : {marker}")
            await pilot.press("enter")
            await wait_until(pilot, lambda: bool(app.dispatch.bash_mode) and bool(marked(marker)),
                             timeout=10, what="the command running")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.dispatch.bash_mode, timeout=10,
                             what="the command stopped")
            await wait_until(pilot, lambda: not marked(marker), timeout=5, what="no process left")
    finally:
        for proc in marked(marker):
            proc.kill()
    (record,) = [r for r in journal.records if isinstance(r, UserCommandRecord)]
    assert record.state is ToolState.CANCELLED_WHILE_RUNNING and "begun" in record.output
    assert record.ended.startswith("Interrupted by the user")


@pytest.mark.asyncio
async def test_a_resumed_session_shows_its_bang_commands(tmp_path: Path) -> None:
    from agent_tui.core.journal.records import TurnEndedRecord, UserMessageRecord
    from agent_tui.protocol import TurnStatus

    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(UserCommandRecord(id="bash_mode_aaaaaaaaaaaa", command="echo hi",
                                     state=ToolState.SUCCEEDED, output="hi there\n", exit_code=0))
    journal.append(UserMessageRecord(turn_id="t1", text="what did it say?"))
    journal.append(TurnEndedRecord(turn_id="t1", status=TurnStatus.COMPLETED))
    journal.close()

    def make(emit):
        return Session(SessionDeps(
            config=AgentConfig(workspace=tmp_path, model="scripted"),
            provider=ScriptedProvider(demo_script(), delay=0.0), tools=ToolSet([]),
            policy=AllowAll(), journal=Journal.load(path), emit=emit,
        ))

    app = AgentApp(make, cursor_blink=False, welcome=False)
    async with app.run_test(size=WIDE) as pilot:
        await wait_until(pilot, lambda: "resumed:" in app.transcript.plain_text(), what="replay")
        app.flush()
        await pilot.pause()
        shown = app.transcript.plain_text()
        assert shown.index("! echo hi") < shown.index("hi there") < shown.index("what did it say?")
        assert app.prompt.sent == ["!echo hi", "what did it say?"]
