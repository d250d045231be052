"""A Claude Code user's setup (``tests/claude_user/``) in the TUI, end to end: the
``agent-tui`` binary in tmux with ``HOME`` at the setup's home, against the fake API.
The start-up notices are on screen, a denied command shows as denied and never runs,
the user's guard hook blocks ``rm -rf``, and ``/permissions`` lists the rules in Claude
Code's names with their files."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.claude_user_setup import Setup
from tests.tmux_agent import BINARY, REPO, Tmux

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None or shutil.which("jq") is None,
    reason="needs tmux (the terminal) and jq (the user's Stop hook)")


def flat(screen: str) -> str:
    """The screen with its lines joined: a long notice wraps anywhere."""
    return "".join(line.strip() for line in screen.splitlines())


def test_the_tui_keeps_a_claude_code_user_safe(fake_api, tmp_path):
    setup = Setup(tmp_path)
    fake_api.enqueue(
        Reply.tool_use("bash", {"command": "./scripts/deploy.sh --prod"}, id="toolu_deploy"),
        Reply.tool_use("bash", {"command": "rm -rf build"}, id="toolu_rmrf"),
        Reply.text("nothing shipped"))
    base = [str(BINARY)] if BINARY.exists() else [sys.executable, "-m", "agent_tui.cli"]
    env = {
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(tmp_path / "agent-home"), "HOME": str(setup.home),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PATH": setup.path,
        "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off",
    }
    tmux = Tmux(f"agent-tui-ccuser-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start([*base, "--cwd", str(setup.ws)], env, setup.ws)
    try:
        tmux.wait_for("Type a message")
        # the start-up notices: unknown keys, the misspelled rule (the project is trusted
        # in Claude Code's record: no dialog)
        screen = tmux.wait_for(lambda s: "Bsah" in flat(s))
        # the first ones are above the fold: a page up shows them
        tmux.keys("PageUp")
        above = tmux.wait_for(lambda s: "formatter@acme-tools" in flat(s))
        tmux.keys("PageDown")
        shown = flat(above) + flat(screen)
        for key in ("includeCoAuthoredBy", "formatter@acme-tools", "cleanupPeriodDays",
                    "spinnerTipsEnabled"):
            assert key in shown, above + screen
        assert "settings.local.json:4:7" in shown, screen
        tmux.wait_for(lambda s: "cc-status project" in s)  # the user's status line

        tmux.type("ship it")
        tmux.keys("Enter")
        screen = tmux.wait_for(lambda s: "nothing shipped" in s)
        shown = flat(screen)
        assert "Bash(./scripts/deploy.sh:*)" in shown, screen  # the rule that denied it
        assert "Blocked by guard.py: rm -rf is not allowed" in shown, screen
        assert shown.count("denied") >= 2, screen
        assert not (setup.ws / "deployed").exists()
        assert (setup.ws / "build").is_dir()

        tmux.type("/permissions")
        tmux.keys("Enter")
        screen = tmux.wait_for(lambda s: "rules are applied in this order" in s)
        tmux.keys("End")  # the page scrolls: its end too
        end = tmux.wait_for(lambda s: "esc closes this page" in s)
        rows = [" ".join(line.split("│")[1].split()) for line in (screen + end).splitlines()
                if line.count("│") >= 2]  # the page's lines, between its borders
        expected = [  # each rule in Claude Code's spelling, with the file it came from
            "deny Bash(./scripts/deploy.sh:*) .claude/settings.json",
            "deny Read(./secrets/**) .claude/settings.json",
            "deny Read(~/.ssh/**) ~/.claude/settings.json",
            "ask Bash(git push *) ~/.claude/settings.json",
            "allow Bash(npm test:*) ~/.claude/settings.json",
            "allow Bash(./scripts/check.sh) .claude/settings.local.json",
        ]
        for row in expected:
            assert row in rows, screen + end
        assert not any("Bsah" in row for row in rows if row.startswith("allow"))
    finally:
        tmux.quit()
