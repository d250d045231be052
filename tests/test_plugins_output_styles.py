"""A plugin's output styles (``output-styles/``, or its manifest's ``outputStyles``):
named ``PLUGIN:NAME`` as in Claude Code, chosen by ``outputStyle``, forced by
``force-for-plugin`` (a plugin's only), and bad files named with the rest loaded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_tui.core.memory import output_styles
from agent_tui.core.memory.output_styles import load_output_styles, style_in_force
from agent_tui.core.memory.prompt import build_system_prompt
from agent_tui.plugins import use_plugin_dirs
from agent_tui.plugins.output_styles import plugin_output_styles
from tests.plugins_support import home  # noqa: F401  (a fixture: HOME of its own)


def _style(path: Path, front: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}\n")


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "kit"
    _style(root / "output-styles" / "terse.md", "description: few words", "Answer in few words.")
    _style(root / "output-styles" / "more" / "pirate.md", "name: Pirate\nkeep-coding-instructions: true",
           "Talk like a pirate.")
    (root / "output-styles" / "notes.txt").write_text("not a style")
    monkeypatch.setattr(output_styles, "_SOURCES", [plugin_output_styles])
    use_plugin_dirs([root])
    yield root
    use_plugin_dirs([])


def test_a_plugins_styles_load_under_its_name_and_go_into_the_prompt(
        home: Path, plugin: Path, tmp_path: Path) -> None:
    loaded = load_output_styles(tmp_path)
    mine = {s.name: s for s in loaded.styles if s.scope == "plugin"}
    assert sorted(mine) == ["kit:Pirate", "kit:terse"] and loaded.problems == []
    assert mine["kit:terse"].description == "few words"
    assert mine["kit:Pirate"].keep_coding_instructions
    style, warnings = style_in_force(tmp_path, "KIT:terse")  # any case, as the others
    assert style is not None and style.name == "kit:terse" and warnings == []
    prompt = build_system_prompt(tmp_path, [], style=style)
    assert prompt.rstrip().endswith("# Output Style: kit:terse\nAnswer in few words.")


def test_a_forced_style_wins_and_says_so_but_a_users_file_cannot_force(
        home: Path, plugin: Path, tmp_path: Path) -> None:
    _style(home / ".claude" / "output-styles" / "mine.md", "force-for-plugin: true", "Mine.")
    assert style_in_force(tmp_path, None)[0] is None  # the user's file forced nothing
    _style(plugin / "output-styles" / "loud.md", "force-for-plugin: true", "SHOUT.")
    style, warnings = style_in_force(tmp_path, "mine")
    assert style is not None and style.name == "kit:loud"
    assert warnings == ["output style kit:loud: its plugin forces it (force-for-plugin); "
                        "outputStyle 'mine' is not used"]


def test_the_manifest_replaces_the_folder_and_a_bad_or_outside_file_is_named(
        home: Path, plugin: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("the user's secret")
    (plugin / "styles").mkdir()
    os.symlink(secret, plugin / "styles" / "leak.md")
    _style(plugin / "styles" / "bad.md", "keep-coding-instructions: maybe", "x")
    _style(plugin / "one.md", "name: One", "Just one.")
    (plugin / ".claude-plugin").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "kit", "outputStyles": ["./styles", "./one.md", "../elsewhere"]}))
    loaded = load_output_styles(tmp_path)
    assert [s.name for s in loaded.styles if s.scope == "plugin"] == ["kit:One"]
    said = "\n".join(str(p) for p in loaded.problems)
    assert "leak.md" in said and "links outside the plugin's folder" in said
    assert "bad.md" in said and "must be true or false" in said
    assert "secret" not in "".join(s.prompt for s in loaded.styles)
    _styles, problems = plugin_output_styles()
    assert len(problems) == 2  # the manifest's ../elsewhere is the plugin's own problem
    from agent_tui.plugins import enabled_plugins

    assert any("../elsewhere is outside the plugin's folder" in p
               for p in enabled_plugins().problems)
