"""End to end in tmux: the terminal closing (SIGHUP) or a plain ``kill`` (SIGTERM) ends
the TUI as quitting does. What it runs (a command tree, a hook) is ended, the journal
says how the call ended, and nothing is left behind."""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import signal
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import REPO, Tmux, agent_command
from tests.tmux_agent import wait_for_condition as _until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HANGING_GUARD = '''
import os, sys, time
with open(os.path.join(os.environ["HOOK_LOG_DIR"], "hook.pid"), "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(300)
'''


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _with(needle: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(needle in part for part in proc.info["cmdline"] or ()) and not _gone(proc.pid):
                found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def _start(tmp_path: Path, fake_api: FakeAnthropicServer, *more: str,
           env: dict[str, str] | None = None) -> tuple[Tmux, Path, Path, int]:
    """The TUI in tmux; its shell writes the TUI's exit code to a file. Returns the tmux,
    the home (journals), the exit-code file and the agent's pid."""
    workspace, home = tmp_path / "work", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    exit_file = tmp_path / "exit-code"
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    command = shlex.join([*agent_command(workspace), *more])
    tmux.start(["sh", "-c", f"{command}; echo $? > {shlex.quote(str(exit_file))}"], {
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
        "AGENT_TUI_HOME": str(home), "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off",
        **(env or {}),
    }, workspace)
    try:
        tmux.wait_for("Type a message")
        [pid] = [p for p in _with(str(workspace))
                 if psutil.Process(p).name() != "sh" and not psutil.Process(p).name().startswith("tmux")]
    except BaseException:
        tmux.quit()  # never a tmux server left behind by a failed start
        raise
    return tmux, home, exit_file, pid


def _records(home: Path) -> list[dict]:
    [journal] = list(home.rglob("journal.jsonl"))
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def test_closing_the_terminal_ends_a_running_command_tree_and_the_journal_says_so(
        fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    seconds = str(random.randint(100_000, 999_999))  # a sleep no other process runs
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"sleep {seconds} & sleep {seconds}"},
                                    id="toolu_tree"))
    tmux, home, _, pid = _start(tmp_path, fake_api)
    try:
        tmux.type("start the long job")
        tmux.keys("Enter")
        _until(lambda: len(_with(seconds)) >= 2, "both sleeps started")
        tmux.tmux("kill-server", check=False)  # the terminal goes away: SIGHUP
        _until(lambda: _gone(pid), "the agent to exit")
        _until(lambda: not _with(seconds), "no process of the tree left")
    finally:
        tmux.quit()
    records = _records(home)
    [result] = [r for r in records if r.get("kind") == "tool_result"]
    assert result["state"] == "cancelled_while_running"
    assert [r["status"] for r in records if r.get("kind") == "turn_ended"] == ["cancelled"]


def test_a_kill_ends_a_hanging_hook_and_the_tui_exits_with_143(
        fake_api: FakeAnthropicServer, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    hook = tmp_path / "guard.py"
    hook.write_text(HANGING_GUARD)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "timeout": 600,
         "command": f"{shlex.quote(sys.executable)} {shlex.quote(str(hook))}"}]}]}}))
    marker = tmp_path / "ran"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"touch {shlex.quote(str(marker))}"}))
    tmux, home, exit_file, pid = _start(tmp_path, fake_api, "--settings", str(settings),
                                        env={"HOOK_LOG_DIR": str(logs)})
    pid_file = logs / "hook.pid"
    try:
        tmux.type("touch it")
        tmux.keys("Enter")
        _until(lambda: pid_file.exists() and pid_file.read_text() != "", "the guard hook")
        hook_pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
        _until(lambda: exit_file.exists() and exit_file.read_text().strip() != "", "the TUI to exit")
        assert exit_file.read_text().strip() == "143"
        _until(lambda: _gone(hook_pid), "the hook to end")
    finally:
        tmux.quit()
    assert not marker.exists()  # the call the hook was checking never started
    states = [r.get("state") for r in _records(home) if r.get("kind") == "tool_result"]
    assert states in ([], ["cancelled_before_start"]), states
