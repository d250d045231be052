"""End to end in tmux: the allow rule ``Bash(ls:*)`` does not cover a command that hides
``touch PWNED`` behind ``ls #'``; the TUI asks, and its prompt shows every line."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from agent_tui.ui.screens.permission import ARM_DELAY
from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import Tmux, agent_command, agent_env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_a_hidden_command_is_asked_about_and_shown_whole(fake_api: FakeAnthropicServer,
                                                         tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    fake_api.enqueue(Reply.tool_use("bash", {"command": "ls #'\ntouch PWNED\n#'"}))
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmux.start(agent_command(workspace, "--allowedTools", "Bash(ls:*)", mode="ask"),
               agent_env(fake_api.url, tmp_path / "home"), workspace)
    try:
        tmux.wait_for("Type a message")
        tmux.type("list the files")
        tmux.keys("Enter")
        screen = tmux.wait_for("Do you want to proceed?")
        assert "touch PWNED" in screen, screen
        assert not (workspace / "PWNED").exists()
        time.sleep(ARM_DELAY * 2)  # a key before the prompt is armed goes to the input
        tmux.keys("n")  # no, and the turn stops
        tmux.wait_for("the turn stopped")
        assert not (workspace / "PWNED").exists()
    finally:
        tmux.quit()
