"""End to end in tmux: quitting the TUI runs the ``SessionEnd`` hooks with reason
``prompt_input_exit``; Esc while one hangs ends it, and the TUI exits."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tests.fake_api import FakeAnthropicServer
from tests.tmux_agent import REPO, WAIT, Tmux, agent_command

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HANGING_HOOK = '''
import json, os, sys, time
data = json.load(sys.stdin)
log = os.environ["HOOK_LOG_DIR"]
with open(os.path.join(log, "reason"), "w") as fh:
    fh.write(data["reason"])
with open(os.path.join(log, "hook.pid"), "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(300)
'''


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_quitting_runs_session_end_and_esc_ends_a_hanging_one(
        fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    workspace, home, logs = tmp_path / "work", tmp_path / "home", tmp_path / "logs"
    for folder in (workspace, home, logs):
        folder.mkdir()
    hook = tmp_path / "hang.py"
    hook.write_text(HANGING_HOOK)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionEnd": [{"matcher": "prompt_input_exit",
        "hooks": [{"type": "command", "timeout": 600,
                   "command": f"{shlex.quote(sys.executable)} {shlex.quote(str(hook))}"}]}]}}))
    pid_file, exit_file = logs / "hook.pid", tmp_path / "exit-code"
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    command = shlex.join([*agent_command(workspace), "--settings", str(settings)])
    tmux.start(["sh", "-c", f"{command}; echo $? > {shlex.quote(str(exit_file))}"], {
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(home), "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off",
        "HOOK_LOG_DIR": str(logs),
    }, workspace)
    try:
        tmux.wait_for("Type a message")
        tmux.keys("C-q")
        _until(lambda: pid_file.exists() and pid_file.read_text() != "", "the SessionEnd hook")
        assert (logs / "reason").read_text() == "prompt_input_exit"
        assert tmux.display("#{pane_dead}") == "0"  # quitting waits for the hook
        tmux.wait_for("SessionEnd hooks running")  # the status line says Esc ends them
        tmux.keys("Escape")
        _until(lambda: exit_file.exists() and exit_file.read_text().strip() != "", "the TUI to exit")
        assert exit_file.read_text().strip() == "0"
        pid = int(pid_file.read_text())
        _until(lambda: not psutil.pid_exists(pid)
               or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, "the hook to end")
        [journal] = list(home.rglob("journal.jsonl"))
        records = [json.loads(line) for line in journal.read_text().splitlines()]
        [end] = [r for r in records if r.get("kind") == "hook"]
        assert (end["event"], end["ending"]) == ("SessionEnd", "cancelled")
    finally:
        tmux.quit()
        if pid_file.exists() and pid_file.read_text() and psutil.pid_exists(int(pid_file.read_text())):
            psutil.Process(int(pid_file.read_text())).kill()  # a failed run leaves nothing behind
