"""Custom commands as Claude Code 2.1.x runs them: a ```` ```! ```` fenced block is a
command to run before the prompt is sent (its output takes the block's place), like
an inline ``!`cmd```; built-in commands win over custom ones of the same name."""

from __future__ import annotations

from pathlib import Path

from agent_tui.commands.expand import expand
from agent_tui.commands.files import load_command
from agent_tui.core.commands.command_run import ShellStep
from agent_tui.ui.commands.builtin import BUILTIN
from agent_tui.ui.commands.custom import load_custom
from agent_tui.ui.commands.registry import CommandKind, Commands

FENCED = """---
description: Review what changed
---
## Context

```!
git status --short
git diff --stat $1
```

Also: !`git branch --show-current`

Review the changes above.
"""


def test_a_fenced_bang_block_is_one_command_run_before_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "review.md"
    path.write_text(FENCED)
    command, problems = load_command(path, ("review",), "project")
    assert problems == []
    done = expand(command, "main")
    assert done.steps == [
        ShellStep(command="git status --short\ngit diff --stat main", where=f"{path}:6"),
        ShellStep(command="git branch --show-current", where=f"{path}:11")]
    prompt = done.compose(["M a.py", "main"])
    assert prompt == ("## Context\n\nM a.py\n\nAlso: main\n\nReview the changes above."
                      "\n\nARGUMENTS: main")  # $1, not $ARGUMENTS: appended, as Claude Code does
    assert "```" not in prompt


def test_a_plain_fence_and_a_bang_in_text_are_not_commands(tmp_path: Path) -> None:
    path = tmp_path / "doc.md"
    path.write_text("Look:\n\n```bash\nrm -rf build\n```\n\nWow! `ls` is a command.\n")
    command, _ = load_command(path, ("doc",), "project")
    assert expand(command, "").steps == []


def test_a_built_in_command_wins_over_a_custom_one_of_its_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    taken = "model"  # agent-tui has no /config: its settings are files
    (tmp_path / ".claude" / "commands" / f"{taken}.md").write_text("the project's own\n")
    found, _ = load_custom(tmp_path, taken=frozenset(c.name for c in BUILTIN))
    commands = Commands(BUILTIN, found)
    assert commands.get(taken).kind is CommandKind.BUILTIN
    assert any(f"/{taken} is already a built-in command (ignored)" in p for p in commands.problems)
