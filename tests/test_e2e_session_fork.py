"""One session, one agent, end to end: the TUI in tmux resumes (``/resume``) a session
that a print-mode agent keeps open: it opens a fork and says the other pid."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import needs_tmux

pytestmark = needs_tmux


def test_resume_in_the_tui_of_a_session_open_elsewhere_forks_and_names_the_pid(
        agent, fake_api: FakeAnthropicServer, tmp_path) -> None:
    tmux, workspace = agent
    fake_api.enqueue(Reply.text("held answer"))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
           "AGENT_TUI_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    holder = subprocess.Popen(
        [sys.executable, "-m", "agent_tui.cli", "-p", "--input-format", "stream-json",
         "--output-format", "stream-json", "--cwd", str(workspace)],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True)
    try:
        holder.stdin.write(json.dumps({"type": "user_message", "text": "the held session"}) + "\n")
        holder.stdin.flush()
        for line in holder.stdout:
            if json.loads(line)["type"] == "turn_ended":
                break
        tmux.type("/resume")
        tmux.keys("Enter")
        tmux.wait_for("the held session")
        tmux.type("held")  # the picker lists this TUI's own new session first
        tmux.keys("Enter")
        # Said in the transcript too, whole (the status line may cut it short).
        screen = tmux.wait_for(lambda text: f"pid {holder.pid}" in " ".join(text.split()))
        assert "is open in another agent-tui" in " ".join(screen.split())
        fake_api.enqueue(Reply.text("fork answer"))
        tmux.type("and in the fork?")
        tmux.keys("Enter")
        tmux.wait_for("fork answer")
        sent = json.dumps(fake_api.requests[-1]["messages"])
        assert "the held session" in sent and "held answer" in sent  # the same history
    finally:
        holder.kill()
        holder.wait(10)
