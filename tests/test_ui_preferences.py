"""A user's habits in the TUI: /vim and editorMode, /output-style (its picker and the
system prompt the session really uses), ~/.claude/keybindings.json and /keybindings.

Snapshots: review changes in snapshot_report.html, then ``pytest --snapshot-update``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402

from agent_tui.paths import claude_config_dir  # noqa: E402
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.input.keybindings import read_keybindings, textual_key  # noqa: E402
from tests.snapshot_tests.support import fake_factory, real_factory, settle, wait_until  # noqa: E402

SIZE = (100, 24)


def _keybindings(blocks: list[dict]) -> None:
    claude_config_dir().mkdir(parents=True, exist_ok=True)
    (claude_config_dir() / "keybindings.json").write_text(json.dumps({"bindings": blocks}))


def _fake_app(workspace: Path | None = None) -> AgentApp:
    make, _made = fake_factory([], workspace=workspace)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, welcome=False,
                    workspace=workspace)


async def _type(pilot, text: str) -> None:
    for ch in text:
        await pilot.press({"/": "slash", " ": "space", "-": "minus"}.get(ch, ch))


# -- keybindings.json -----------------------------------------------------------------


def test_claude_codes_key_names_become_textuals() -> None:
    assert textual_key("ctrl+e") == "ctrl+e"
    assert textual_key("meta+p") == "alt+p"
    assert textual_key("shift+ctrl+k") == "ctrl+shift+k"
    assert textual_key("ctrl+x ctrl+k") is None  # a chord
    assert textual_key("hyper+x") is None


def test_a_binding_agent_tui_cannot_honour_is_named_with_why() -> None:
    _keybindings([
        {"context": "Chat", "bindings": {"ctrl+t": "chat:newline", "ctrl+x ctrl+k": "chat:killAgents",
                                         "ctrl+s": "chat:stash", "enter": "chat:newline",
                                         "ctrl+u": None}},
        {"context": "Global", "bindings": {"escape": None, "ctrl+d": "app:exit"}},
        {"context": "Autocomplete", "bindings": {"tab": "autocomplete:accept"}},
    ])
    keymap = read_keybindings()
    assert [(b.key, b.action) for b in keymap.bindings] == [("ctrl+t", "newline"), ("ctrl+d", "quit_soon")]
    refused = "\n".join(keymap.refused)
    assert "ctrl+x ctrl+k → chat:killAgents: the input handles its first key itself" in refused
    assert "ctrl+s → chat:stash: an action agent-tui does not have" in refused
    assert "enter → chat:newline: the input handles this key itself" in refused
    assert "ctrl+u → None: unbinding is not supported" in refused
    assert "escape → None: Esc stays the stop key" in refused
    assert "Autocomplete tab → autocomplete:accept: agent-tui has no Autocomplete context" in refused
    assert len(keymap.refused) == 6


def test_a_file_that_is_not_keybindings_is_said_and_nothing_bound() -> None:
    claude_config_dir().mkdir(parents=True, exist_ok=True)
    (claude_config_dir() / "keybindings.json").write_text("[1, 2")
    keymap = read_keybindings()
    assert keymap.bindings == [] and "not read" in keymap.refused[0]


@pytest.mark.asyncio
async def test_the_users_bindings_work_and_the_rest_is_named_at_start() -> None:
    _keybindings([{"context": "Chat", "bindings": {"ctrl+t": "chat:newline", "ctrl+s": "chat:stash"}},
                  {"context": "Global", "bindings": {"ctrl+d": "app:exit"}}])
    app = _fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "ctrl+t", "b")
        assert app.prompt.text == "a\nb"
        assert "keybindings.json: 1 not taken" in str(app.status.notice_text)
        page = app.command_runner.preferences.keybindings_page()
        assert "ctrl+t" in str(page) and "(yours: ctrl+t)" in str(page)
        assert "ctrl+s → chat:stash" in str(page) and "escape" in str(page)
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: app.return_code is not None, what="the app's exit")



@pytest.mark.asyncio
async def test_a_bound_key_acts_in_order_with_keys_typed_in_one_burst() -> None:
    """As a terminal hands over keys typed fast (a paste-free burst): the driver posts
    each at once, with no wait between them; the bound key must not act after the
    characters that follow it."""
    from textual import events

    _keybindings([{"context": "Chat", "bindings": {"ctrl+t": "chat:newline"}}])
    app = _fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 0)
        for key in ("a", "h", "o", "y", "ctrl+t", "m", "a", "t", "e", "y"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_until(pilot, lambda: len(app.prompt.text) == 10, what="every key typed")
        assert app.prompt.text == "ahoy\nmatey"


@pytest.mark.asyncio
async def test_a_changed_keybindings_file_is_bound_again_and_an_old_key_given_back() -> None:
    _keybindings([{"context": "Chat", "bindings": {"ctrl+t": "chat:newline"}}])
    app = _fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "ctrl+t", "b")
        assert app.prompt.text == "a\nb"
        prefs = app.command_runner.preferences
        assert not prefs.look_at_keybindings()  # nothing changed: nothing done
        path = claude_config_dir() / "keybindings.json"
        _keybindings([{"context": "Chat", "bindings": {"ctrl+y": "chat:newline"}}])
        os.utime(path, ns=(1, 1))  # a second write in the same tick still counts
        assert prefs.look_at_keybindings()
        app.prompt.clear()
        await pilot.press("c", "ctrl+t", "d", "ctrl+y", "e")
        assert app.prompt.text == "cd\ne"  # ctrl+t no longer a newline, ctrl+y is
        assert "keybindings.json read again: 1 key(s)" in str(app.status.notice_text)

# -- vim mode -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_slash_vim_toggles_vim_mode_and_editor_mode_starts_in_it(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"editorMode": "vim"}')
    app = _fake_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.prompt.vim is not None and app.prompt.border_subtitle == "-- INSERT --"
        await _type(pilot, "/vim")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.vim is None, what="vim mode off")
        await _type(pilot, "/vim")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.vim is not None, what="vim mode on")


def test_vim_normal_mode_indicator(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot, pilot.app, 0)
        pilot.app.prompt.set_vim(True)
        await _type(pilot, "fix the flaky test")
        await pilot.press("escape", "b")
        await pilot.pause()

    assert snap_compare(_fake_app(), terminal_size=SIZE, run_before=run_before)


# -- output styles --------------------------------------------------------------------


def _style(workspace: Path) -> None:
    folder = workspace / ".claude" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "pirate.md").write_text("---\nname: Pirate\ndescription: Talks like a pirate\n---\nArr.\n")


def test_output_style_picker(snap_compare, tmp_path: Path) -> None:
    _style(tmp_path)
    make = real_factory(workspace=tmp_path)
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, welcome=False, workspace=tmp_path)

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: app.session is not None, what="the session")
        await _type(pilot, "/output-style")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.picker_slot.is_open, what="the picker")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 20), run_before=run_before)


@pytest.mark.asyncio
async def test_choosing_an_output_style_changes_the_sessions_prompt_and_saves_it(tmp_path: Path) -> None:
    _style(tmp_path)
    app = AgentApp(real_factory(workspace=tmp_path), cursor_blink=False, welcome=False,
                   workspace=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="the session")
        config = app.session.deps.config  # type: ignore[union-attr]
        assert "# How to work" in config.system and config.output_style is None
        await _type(pilot, "/output-style pirate")
        await pilot.press("enter")
        await wait_until(pilot, lambda: config.output_style == "Pirate", what="the style")
        assert config.system.endswith("# Output Style: Pirate\nArr.")
        assert "# How to work" not in config.system
        saved = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
        assert saved == {"outputStyle": "Pirate"}
        await _type(pilot, "/output-style nonesuch")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "no output style 'nonesuch'" in str(app.status.notice_text),
                         what="the warning")
        assert config.output_style == "Pirate"


@pytest.mark.asyncio
async def test_slash_vim_is_kept_for_the_next_session_in_your_own_settings(tmp_path: Path) -> None:
    from agent_tui.paths import user_config_dir

    saved = user_config_dir() / "settings.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text('{"theme": "light"}')  # what was there stays
    app = _fake_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.prompt.vim is None
        await _type(pilot, "/vim")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.vim is not None, what="vim mode on")
    assert json.loads(saved.read_text()) == {"theme": "light", "editorMode": "vim"}
    again = _fake_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: again.prompt.vim is not None, what="vim mode from the file")
        await _type(pilot, "/vim")
        await pilot.press("enter")
        await wait_until(pilot, lambda: again.prompt.vim is None, what="vim mode off")
    assert json.loads(saved.read_text())["editorMode"] == "normal"
