"""Ctrl+X Ctrl+E: the draft goes to $VISUAL / $EDITOR (a fake editor script here) and
comes back edited; an editor that fails or cannot be started is reported and the
draft stays as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import UserMessage  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.external_editor import edit  # noqa: E402
from tests.snapshot_tests.support import fake_factory  # noqa: E402

SIZE = (100, 30)


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-editor"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def _type(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text])


@pytest.mark.asyncio
async def test_the_draft_goes_to_the_editor_and_comes_back_edited(tmp_path: Path, monkeypatch) -> None:
    seen = tmp_path / "seen.txt"
    # The fake editor keeps what it was given, then adds a line (as a person would).
    monkeypatch.setenv("VISUAL", _script(tmp_path, f'cp "$1" {seen}\nprintf "and add tests\\n" >> "$1"\n'))
    make, made = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "fix the parser")
        await pilot.press("ctrl+x", "ctrl+e")
        await pilot.pause()
        assert seen.read_text() == "fix the parser"
        assert app.prompt.text == "fix the parserand add tests"
        assert "back from the editor" in app.status.plain()
        await pilot.press("enter")
        await pilot.pause()
        assert made[0].ops == [UserMessage(text="fix the parserand add tests")]


@pytest.mark.asyncio
async def test_a_failing_editor_is_reported_and_the_draft_is_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VISUAL", _script(tmp_path, 'echo oops > "$1"\nexit 3\n'))
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "keep me")
        await pilot.press("ctrl+x", "ctrl+e")
        await pilot.pause()
        assert app.prompt.text == "keep me"
        assert "exited with code 3: the draft is unchanged" in app.status.plain()


def test_no_editor_or_one_that_cannot_start_says_why(tmp_path: Path) -> None:
    assert "set $VISUAL or $EDITOR" in edit("x", {}, attached=False).problem
    missing = edit("x", {"EDITOR": str(tmp_path / "no-such-editor")}, attached=False)
    assert missing.text is None and "cannot start the editor" in missing.problem
    assert edit("x", {"VISUAL": "true"}, attached=False).text == "x"  # VISUAL before EDITOR


@pytest.mark.asyncio
async def test_ctrl_x_alone_still_cuts_a_selection() -> None:
    make, _ = fake_factory([])
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _type(pilot, "abc")
        await pilot.press("shift+left", "ctrl+x")
        await pilot.pause()
        assert app.prompt.text == "ab"
