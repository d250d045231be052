"""The inline permission prompt's keys: a digit answers at once, arrows and Enter
confirm, the old letters still work, Tab edits a command (or adds a note for the
model), Esc denies and stops the turn (a note lets it go on);
"don't ask again" sends the rule and saves it (a notice names the file and the rule,
or says why it could not be saved); "allow all edits" switches to accept-edits."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402

from agent_tui.protocol import (  # noqa: E402
    Decide,
    Decision,
    PermissionMode,
    SetPermissionMode,
    UserMessage,
)
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.screens.permission import PermissionScreen  # noqa: E402
from tests.snapshot_tests import approval_scenarios as scenes  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

pytestmark = pytest.mark.asyncio
SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _no_user_home(tmp_path: Path, monkeypatch) -> None:
    """The global git ignore goes to a throwaway home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


async def _answer(tmp_path: Path, events, *keys: str):
    make, made = fake_factory(events, workspace=scenes.workspace(tmp_path))
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        assert isinstance(app.screen, PermissionScreen)
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes answers")
        await pilot.press(*keys)
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen), what="answered")
        ops = [op for op in made[0].ops if isinstance(op, Decide | SetPermissionMode | UserMessage)]
        return ops, app.status.notice_text


async def test_two_allows_and_saves_the_rule_for_the_program_and_subcommand(tmp_path: Path) -> None:
    ops, notice = await _answer(tmp_path, scenes.COMMAND, "2")
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.ALLOW_SESSION, rules=["Bash(npm test *)"])]
    saved = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(npm test *)"]}}
    assert "Bash(npm test *)" in notice and ".claude/settings.local.json" in notice


async def test_a_malformed_settings_file_keeps_its_bytes_and_the_rule_holds_for_the_session(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    path.parent.mkdir()
    path.write_text('{"permissions": ')
    ops, notice = await _answer(tmp_path, scenes.COMMAND, "down", "enter")
    assert ops[0].rules == ["Bash(npm test *)"]  # the core applies it all the same
    assert "applies for this session only" in notice and "not plain JSON" in notice
    assert path.read_text() == '{"permissions": '


async def test_arrows_and_enter_and_the_old_letters_answer(tmp_path: Path) -> None:
    ops, _ = await _answer(tmp_path, scenes.DANGEROUS, "down", "up", "enter")
    assert ops == [Decide(tool_use_id="toolu_r", decision=Decision.ALLOW_ONCE)]
    ops, _ = await _answer(tmp_path, scenes.DANGEROUS, "a")  # rm: this exact call, no rule
    assert ops == [Decide(tool_use_id="toolu_r", decision=Decision.ALLOW_SESSION)]
    assert not (tmp_path / ".claude").exists()
    ops, _ = await _answer(tmp_path, scenes.DANGEROUS, "3")
    assert ops == [Decide(tool_use_id="toolu_r", decision=Decision.DENY, stop=True)]  # and stop the turn


async def test_esc_denies_and_stops_the_turn_and_a_note_lets_it_go_on(tmp_path: Path) -> None:
    ops, notice = await _answer(tmp_path, scenes.COMMAND, "escape")
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.DENY, stop=True)]
    assert "the turn stopped" in notice
    ops, _ = await _answer(tmp_path, scenes.COMMAND, "d", *"use pnpm", "enter")
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.DENY, note="use pnpm")]
    ops, _ = await _answer(tmp_path, scenes.FETCH, "down", "down", "tab", *"read the docs", "enter")
    assert ops == [Decide(tool_use_id="toolu_f", decision=Decision.DENY, note="read the docs")]


async def test_tab_with_yes_chosen_allows_and_the_note_is_read_after_the_result(tmp_path: Path) -> None:
    ops, _ = await _answer(tmp_path, scenes.EDIT, "tab", *"then run lint", "enter")
    assert ops == [Decide(tool_use_id="toolu_e", decision=Decision.ALLOW_ONCE, note="then run lint"),
                   UserMessage(text="then run lint")]  # a steer: after the call's result


async def test_esc_in_a_note_for_a_yes_denies_and_keeps_the_note_in_the_input(tmp_path: Path) -> None:
    make, made = fake_factory(scenes.FETCH, workspace=scenes.workspace(tmp_path))
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(scenes.FETCH))
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes answers")
        await pilot.press("tab", *"read the docs", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen), what="answered")
        assert [op for op in made[0].ops if isinstance(op, Decide)] == [
            Decide(tool_use_id="toolu_f", decision=Decision.DENY, stop=True)]
        assert app.prompt.text == "read the docs"  # nothing typed is lost


async def test_tab_with_no_chosen_gives_a_note_even_for_a_command(tmp_path: Path) -> None:
    ops, _ = await _answer(tmp_path, scenes.COMMAND, "down", "down", "tab", *"use pnpm", "enter")
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.DENY, note="use pnpm")]  # the turn goes on


async def test_tab_edits_the_command_and_it_runs_as_edited(tmp_path: Path) -> None:
    ops, _ = await _answer(tmp_path, scenes.COMMAND, "tab", *" -- --bail", "enter")
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.ALLOW_ONCE, updated_input={
        "command": "npm test -- --bail", "description": "Run the project's test suite"})]
    ops, _ = await _answer(tmp_path, scenes.COMMAND, "tab", "enter")  # as it was: no change
    assert ops == [Decide(tool_use_id="toolu_c", decision=Decision.ALLOW_ONCE)]


async def test_allow_all_edits_switches_to_accept_edits(tmp_path: Path) -> None:
    ops, notice = await _answer(tmp_path, scenes.EDIT, "shift+tab")
    assert ops == [Decide(tool_use_id="toolu_e", decision=Decision.ALLOW_ONCE),
                   SetPermissionMode(mode=PermissionMode.ACCEPT_EDITS)]
    assert "accept-edits" in notice


async def test_ctrl_o_unfolds_a_long_diff_in_the_prompt(tmp_path: Path) -> None:
    events = scenes.long_edit(tmp_path)
    make, _ = fake_factory(events, workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        diff = app.screen.query_one("#diff")
        assert "ctrl+o: all lines" in str(app.screen.query_one("#keys").render())
        folded = diff.outer_size.height
        await wait_until(pilot, lambda: app.screen.armed, what="the prompt takes keys")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert diff.has_class("unfolded") and diff.outer_size.height > folded


async def test_ctrl_o_shows_a_long_command_whole_and_folds_it_again(tmp_path: Path) -> None:
    events = scenes.LONG_COMMAND
    make, _ = fake_factory(events, workspace=scenes.workspace(tmp_path))
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        call, keys = screen.query_one("#call"), screen.query_one("#keys")
        await wait_until(pilot, lambda: "ctrl+o: show it all" in str(keys.render()), what="the fold's key")
        folded = str(call.render())
        assert "npm run step1\n" in folded and "step13" not in folded and "more lines" in folded
        body = screen.query_one("#body")
        # the fold fits once the prompt's layout has settled: its last line, what it hides, shows
        await wait_until(pilot, lambda: body.max_scroll_y == 0, what="the fold to fit")
        await pilot.press("ctrl+o")  # needs no arming: it answers nothing
        await wait_until(pilot, lambda: "ctrl+o: fold it again" in str(keys.render()), what="unfolded")
        assert "npm run step30" in str(call.render()) and "more lines" not in str(call.render())
        await pilot.pause()
        assert call.outer_size.height > 30  # the whole command, not cut at the fold's height
        await pilot.press("pagedown")  # scrolls the command shown whole, not the transcript
        await wait_until(pilot, lambda: body.scroll_y > 0, what="the command scrolled")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "ctrl+o: show it all" in str(keys.render()), what="folded again")
        assert "step13" not in str(call.render())
        assert isinstance(app.screen, PermissionScreen) and screen.decided is None


async def test_a_long_one_line_command_folds_and_says_what_it_hides() -> None:
    from agent_tui.ui.screens import call_preview

    command = "npm test -- " + " ".join(f"--flag-{i}=value{i}" for i in range(200))
    folded = call_preview.body("bash", {"command": command}, {}).plain
    whole = call_preview.body("bash", {"command": command}, {}, whole=True).plain
    assert whole == command and call_preview.folds("bash", {"command": command}, {})
    shown, hidden = folded.split("\n")
    assert command.startswith(shown) and len(shown) == call_preview.MAX_COMMAND_CHARS
    assert f"{len(command) - len(shown)} more characters" in hidden and "ctrl+o" in hidden
    assert not call_preview.folds("bash", {"command": "npm test"}, {})
