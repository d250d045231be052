"""End to end in tmux, in ``ask`` mode: "Yes, and don't ask again for: git init *"
writes the rule to the project's ``.claude/settings.local.json``; the next ``git init``
runs unasked, in a new session too, while another command still asks. While a prompt
is open, PageUp, PageDown and the mouse wheel scroll the transcript behind it (at once,
before the prompt takes answers), and the prompt keeps its keys."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest

from agent_tui.ui.screens.permission import ARM_DELAY
from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import BINARY, REPO, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _start(tmp_path: Path, fake_api: FakeAnthropicServer, workspace: Path) -> Tmux:
    base = [str(BINARY)] if BINARY.exists() else [sys.executable, "-m", "agent_tui.cli"]
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start([*base, "--permission-mode", "ask", "--cwd", str(workspace)], {
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(tmp_path / "state"), "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "AGENT_TUI_NOTIFY": "off",
    }, workspace)
    tmux.wait_for("Type a message")
    return tmux


def _ask(tmux: Tmux, text: str) -> None:
    tmux.type(text)
    tmux.keys("Enter")


def test_dont_ask_again_saves_the_rule_and_it_holds_in_a_new_session(
        fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / ".git").mkdir()  # a repository: the rule's file is kept out of git
    (tmp_path / "home").mkdir()
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git init -q", "description": "Make a repository"}),
                     Reply.text("Made it."))
    tmux = _start(tmp_path, fake_api, workspace)
    try:
        _ask(tmux, "make a repo")
        screen = tmux.wait_for("Yes, and don't ask again for: git init *")
        assert "Make a repository" in screen and "1. Yes" in screen and "3. No" in screen
        assert "make a repo" in screen  # the transcript stays visible above the prompt
        time.sleep(ARM_DELAY * 2)  # a key before the prompt is armed goes to the input
        tmux.keys("2")
        tmux.wait_for("Made it.")
        tmux.wait_for("saved to .claude/settings.local.json")
        saved = json.loads((workspace / ".claude" / "settings.local.json").read_text())
        assert saved == {"permissions": {"allow": ["Bash(git init *)"]}}
        assert (workspace / ".git" / "HEAD").is_file()  # git init ran
        ignore = tmp_path / "home" / ".config" / "git" / "ignore"
        assert ignore.read_text() == "**/.claude/settings.local.json\n"
    finally:
        tmux.quit()

    # A new session: the same prefix runs unasked; another command still asks.
    fake_api.enqueue(Reply.tool_use("bash", {"command": "git init --quiet"}, id="toolu_again"),
                     Reply.tool_use("bash", {"command": "git add -A"}, id="toolu_other"))
    tmux = _start(tmp_path, fake_api, workspace)
    try:
        # The folder holds configuration now (.claude/): the user is asked to trust it
        # once, as for any folder with files of its own; its rules apply once trusted.
        tmux.wait_for("Do you trust the files in this folder?")
        time.sleep(1.2)  # the dialog takes keys once it is armed (0.5 s)
        tmux.keys("y")
        _ask(tmux, "again")
        screen = tmux.wait_for("Do you want to proceed?")
        assert "git add -A" in screen and "git init --quiet" in screen
        assert screen.count("Do you want to proceed?") == 1
        time.sleep(ARM_DELAY * 2)
        asked = len(fake_api.requests)
        tmux.keys("Escape")  # no, and stop: the model waits to be told what to do instead
        tmux.wait_for(lambda s: "the turn stopped" in s and "cancelled" in s)
        assert len(fake_api.requests) == asked  # the model was not asked again
    finally:
        tmux.quit()


def _wheel(tmux: Tmux, up: bool, times: int) -> None:
    """Wheel turns over the transcript, as the terminal reports them (SGR mouse)."""
    tmux.type(f"\x1b[<{64 if up else 65};20;5M" * times)


def test_the_transcript_scrolls_behind_the_prompt(fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    findings = "".join(f"Finding {i}: the parser reads line {i}.\n\n" for i in range(1, 61))
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch made.txt"}, text_before=findings),
                     Reply.text("Made it."))
    tmux = _start(tmp_path, fake_api, workspace)
    try:
        _ask(tmux, "review the parser")
        tmux.wait_for(lambda s: "Do you want to proceed?" in s and "Finding 60:" in s)
        tmux.keys(*["PageUp"] * 30)  # at once: scrolling needs no arming
        screen = tmux.wait_for("Finding 1:")
        assert "Do you want to proceed?" in screen and "Finding 60:" not in screen
        tmux.keys(*["PageDown"] * 30)
        tmux.wait_for(lambda s: "Finding 60:" in s and "Finding 1:" not in s)
        _wheel(tmux, True, 15)
        screen = tmux.wait_for(lambda s: "Finding 60:" not in s)
        assert "Do you want to proceed?" in screen
        _wheel(tmux, False, 40)
        tmux.wait_for("Finding 60:")
        time.sleep(ARM_DELAY * 2)  # the prompt kept its keys: a digit answers it
        tmux.keys("1")
        tmux.wait_for("Made it.")
        assert (workspace / "made.txt").is_file()
    finally:
        tmux.quit()


def test_ctrl_o_shows_a_long_command_whole_and_a_second_prompt_follows(
        fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    """Two calls in one reply: a command of thirty lines (folded; ctrl+o shows it whole
    and folds it again), then a second one asked right after; No stops the turn."""
    workspace = tmp_path / "work"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    steps = "\n".join(f"touch step{i}.txt" for i in range(1, 31))
    fake_api.enqueue(Reply.tool_uses([("bash", {"command": steps, "description": "Make thirty files"}),
                                      ("bash", {"command": "touch last.txt", "description": "One more"})]))
    tmux = _start(tmp_path, fake_api, workspace)
    try:
        _ask(tmux, "make the files")
        screen = tmux.wait_for("ctrl+o shows the whole command")
        assert "touch step1.txt" in screen and "touch step30.txt" not in screen
        tmux.keys("C-o")  # at once: it answers nothing
        tmux.wait_for(lambda s: "touch step13.txt" in s and "fold it again" in s)
        tmux.keys("PageDown", "PageDown", "PageDown")  # the command shown whole scrolls
        screen = tmux.wait_for("touch step30.txt")
        assert "Do you want to proceed?" in screen
        tmux.keys("C-o")
        tmux.wait_for(lambda s: "touch step30.txt" not in s and "ctrl+o shows the whole command" in s)
        time.sleep(ARM_DELAY * 2)
        tmux.keys("1")
        screen = tmux.wait_for(lambda s: "One more" in s and "Do you want to proceed?" in s)
        assert (workspace / "step30.txt").is_file() and screen.count("Do you want to proceed?") == 1
        time.sleep(ARM_DELAY * 2)
        tmux.keys("3")
        tmux.wait_for("the turn stopped")
        assert not (workspace / "last.txt").exists()
    finally:
        tmux.quit()
