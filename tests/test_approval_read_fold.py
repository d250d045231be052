"""Consecutive read-only calls fold into one line, "Read 3 files, searched 2
patterns"; Ctrl+O unfolds them; a call of another kind, or text, ends the run."""

from __future__ import annotations

import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import TextDelta, ToolStateChanged, TurnStarted, TurnStateChanged  # noqa: E402
from agent_tui.protocol.states import ToolState as S  # noqa: E402
from agent_tui.protocol.states import TurnState as T  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle  # noqa: E402

SIZE = (100, 30)


def _call(n: int, name: str, summary: str, state: S = S.SUCCEEDED) -> ToolStateChanged:
    return ToolStateChanged(turn_id="t1", tool_use_id=f"toolu_{n}", name=name, state=state, summary=summary)


READS = [
    TurnStarted(turn_id="t1", text="where is the parser?"),
    TurnStateChanged(turn_id="t1", state=T.RUNNING),
    TextDelta(turn_id="t1", text="Looking around."),
    _call(1, "read_file", "read_file setup.cfg"),
    _call(2, "grep", "grep parse"),
    _call(3, "read_file", "read_file src/parser.py"),
    _call(4, "glob", "glob **/*.py"),
    _call(5, "read_file", "read_file src/lexer.py"),
    _call(6, "bash", "npm test"),
    _call(7, "read_file", "read_file README.md"),
]


def _app(events) -> AgentApp:
    make, _ = fake_factory(events)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0)


@pytest.mark.asyncio
async def test_consecutive_reads_fold_into_one_line_and_ctrl_o_unfolds_them() -> None:
    app = _app(READS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(READS))
        text = app.transcript.plain_text()
        assert "Read 3 files, searched 2 patterns" in text
        assert "setup.cfg" not in text and "src/lexer.py" not in text
        assert "npm test" in text and "README.md" in text  # another kind ends the run; one call is not folded
        app.transcript.toggle(app.transcript.tool_blocks()[0])  # Enter or a click on the run
        await pilot.pause()
        text = app.transcript.plain_text()
        assert "Read 3 files" not in text
        assert all(name in text for name in ("setup.cfg", "grep", "src/parser.py", "**/*.py", "src/lexer.py"))


@pytest.mark.asyncio
async def test_ctrl_o_unfolds_the_latest_run() -> None:
    events = READS[:8]
    app = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert "Read 3 files, searched 2 patterns" in app.transcript.plain_text()
        await pilot.press("ctrl+o")
        await pilot.pause()
        text = app.transcript.plain_text()
        assert "Read 3 files" not in text and "src/lexer.py" in text and "setup.cfg" in text


def test_a_folded_run_of_reads(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, len(READS))

    assert snap_compare(_app(READS), terminal_size=SIZE, run_before=run_before)
