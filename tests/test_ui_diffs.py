"""Diffs of edit_file and write_file: every line with its number and symbol (never
colour alone), long ones folded to "Added N lines, removed M lines" with a key to unfold, in the transcript and in the
permission prompt (where a write's diff is read from the file while the call waits)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import PermissionRequested, ToolStateChanged  # noqa: E402
from agent_tui.protocol.states import ToolState  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.render.diff_view import render  # noqa: E402
from agent_tui.ui.render.diffs import FIRST_LINES, Tense, diff_for_call, summary, unified  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (110, 34)
OLD = "".join(f"line {i}\n" for i in range(1, 31))
NEW = (OLD.replace("line 5\n", "line five\n").replace("line 10\n", "line ten\n")
       .replace("line 20\n", "line twenty\nline 20b\n"))


def test_a_diff_marks_every_line_with_a_symbol() -> None:
    diff = unified("src/app.py", "a\nb\nc\n", "a\nB\nc\nd\n")
    assert (diff.added, diff.removed) == (2, 1)
    assert summary(diff) == "Added 2 lines, removed 1 line"
    assert summary(diff, Tense.WILL) == "will add 2 lines, remove 1 line"
    assert render(diff, {}, highlight=False).plain.split("\n") == [
        "1  a", "2 -b", "2 +B", "3  c", "4 +d"]


def test_a_new_file_shows_its_first_lines(tmp_path: Path) -> None:
    content = "".join(f"print({i})\n" for i in range(50))
    diff = diff_for_call("write_file", {"path": "new.py", "content": content}, tmp_path)
    assert diff.new_file and summary(diff, Tense.WILL) == "will create new.py (50 lines)"
    assert summary(diff) == "Created new.py (50 lines)"
    shown = render(diff, {}, highlight=False, tense=Tense.WILL).plain.split("\n")
    assert shown[0] == "will create new.py (50 lines)" and shown[1] == " 1 +print(0)"
    assert "not read" not in "\n".join(shown)
    assert len(shown) == 1 + FIRST_LINES + 1 and shown[-1] == "… 30 more lines"


def test_a_write_over_a_file_read_first_is_an_exact_diff(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    diff = diff_for_call("write_file", {"path": "notes.txt", "content": "one\n2\n"}, tmp_path)
    assert summary(diff) == "Added 1 line, removed 1 line"
    unread = diff_for_call("write_file", {"path": "notes.txt", "content": "one\n2\n"})
    assert unread.content_only and summary(unread, Tense.WILL) == "will write 2 lines to notes.txt"
    assert summary(unread, Tense.DID) == "Wrote 2 lines to notes.txt"


def _edit(state: ToolState, **extra) -> ToolStateChanged:
    return ToolStateChanged(turn_id="t1", tool_use_id="toolu_e", name="edit_file", state=state,
                            summary="edit_file src/app.py", input={"path": "src/app.py", "old_string": OLD,
                                                                   "new_string": NEW}, **extra)


@pytest.mark.asyncio
async def test_a_long_diff_is_folded_and_unfolds_with_its_key() -> None:
    events = [_edit(ToolState.QUEUED), _edit(ToolState.RUNNING), _edit(ToolState.SUCCEEDED, result="Edited")]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        text = app.transcript.plain_text()
        assert "Added 4 lines, removed 3 lines" in text and "-line 5" not in text
        await pilot.press("ctrl+o")
        await pilot.pause()
        text = app.transcript.plain_text()
        assert " 5 -line 5" in text and " 5 +line five" in text and "21 +line 20b" in text


@pytest.mark.asyncio
async def test_the_permission_prompt_for_a_write_shows_its_diff(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("debug = false\nport = 80\n")
    ask = PermissionRequested(turn_id="t1", tool_use_id="toolu_w", name="write_file",
                              summary="write_file config.toml",
                              input={"path": "config.toml", "content": "debug = true\nport = 80\n"})
    events = [ToolStateChanged(turn_id="t1", tool_use_id="toolu_w", name="write_file",
                               state=ToolState.AWAITING_APPROVAL, input=ask.input), ask]
    make, _ = fake_factory(events, workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, workspace=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen), what="prompt")
        await pilot.pause()
        lines = str(app.screen.query_one("#diff-lines").render())
        assert "1 -debug = false" in lines and "1 +debug = true" in lines and "2  port = 80" in lines
        assert "will add 1 line, remove 1 line" in lines
