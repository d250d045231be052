"""A resumed session shows its conversation again: a real session writes a journal
(one turn interrupted mid-tool, one completed), the app is closed, and a second app
opens the same journal."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from agent_tui.core.journal.journal import Journal  # noqa: E402
from agent_tui.core.calls.permission import AllowAll  # noqa: E402
from agent_tui.core.session.session import Session  # noqa: E402
from agent_tui.core.calls.tool import ToolSet  # noqa: E402
from agent_tui.core.services.deps import AgentConfig, SessionDeps  # noqa: E402
from agent_tui.providers.scripted import ScriptedProvider  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.render.replay import input_summary  # noqa: E402
from tests.snapshot_tests.support import QuickTool, SlowTool, demo_script, wait_until  # noqa: E402

SIZE = (100, 40)


def _factory(path: Path, workspace: Path, *, resume: bool):
    def make(emit):
        journal = Journal.load(path) if resume else Journal(path)
        deps = SessionDeps(
            config=AgentConfig(workspace=workspace, model="scripted", cleanup_budget=2.0),
            provider=ScriptedProvider(demo_script(30.0), delay=0.01),
            tools=ToolSet([SlowTool(), QuickTool()]),
            policy=AllowAll(),
            journal=journal,
            emit=emit,
        )
        return Session(deps)

    return make


async def _type(pilot, text: str) -> None:
    for c in text:
        await pilot.press("space" if c == " " else c)


@pytest.mark.asyncio
async def test_a_resumed_session_shows_its_conversation(tmp_path) -> None:
    path = tmp_path / "journal.jsonl"
    app = AgentApp(_factory(path, tmp_path, resume=False), cursor_blink=False, welcome=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "run slow")
        await pilot.press("enter")
        await wait_until(pilot, lambda: [b.state for b in app.transcript.tool_blocks()] == ["running"],
                         what="tool running")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.last_turn_status == "cancelled", what="cancelled")

    resumed = AgentApp(_factory(path, tmp_path, resume=True), cursor_blink=False, welcome=False)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "resumed:" in resumed.transcript.plain_text(), what="replay")
        shown = resumed.transcript.plain_text()
        assert "run slow" in shown
        assert "■ cancelled while running  slow" in shown
        assert "turn cancelled" in shown
        assert shown.index("run slow") < shown.index("cancelled while running") < shown.index("resumed:")
        assert resumed.prompt.sent == ["run slow"]  # Up recalls it
        # The session goes on from there: a new turn appears below the divider.
        await _type(pilot, "quick")
        await pilot.press("enter")
        await wait_until(pilot, lambda: resumed.last_turn_status == "completed", what="new turn", timeout=10)
        shown = resumed.transcript.plain_text()
        assert shown.index("resumed:") < shown.rindex("quick")


@pytest.mark.asyncio
async def test_a_new_session_shows_no_divider(tmp_path) -> None:
    app = AgentApp(_factory(tmp_path / "j.jsonl", tmp_path, resume=False), cursor_blink=False, welcome=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        await pilot.pause()
        assert app.transcript.blocks == []


def test_calls_are_summarised_from_their_input() -> None:
    assert input_summary("bash", {"command": "make build\nmake test"}) == "$ make build"
    assert input_summary("read_file", {"path": "src/a.py", "limit": 10}) == "src/a.py"
    assert input_summary("mcp__x__y", {"n": 3}) == ""
