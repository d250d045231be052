"""The forked ``cli_path`` the Agent SDK tests use (tests/forked_cli.py) behaves as the
executable would: the app's pipes reach the agent, its exit code comes back, TERM reaches
it, and a killed launcher leaves no agent behind."""

from __future__ import annotations

import os
import signal
import subprocess

import psutil
import pytest

from tests.agent_sdk_support import AGENT_TUI
from tests.forked_cli import launcher_command
from tests.print_agent import wait_until

pytestmark = pytest.mark.skipif(os.environ.get("AGENT_TUI_TEST_FORK") == "0",
                                reason="AGENT_TUI_TEST_FORK=0: agents start as fresh interpreters")


def _agent(folder) -> psutil.Process | None:
    """The forked agent working in ``folder`` (a forked process's environment as /proc
    shows it is the fork server's; its folder is its own)."""
    for proc in psutil.process_iter():
        try:
            if proc.cwd() == str(folder) and "forked_cli_launcher" not in " ".join(proc.cmdline()):
                return proc
        except psutil.Error:
            continue
    return None


def _start(folder) -> subprocess.Popen[str]:
    folder.mkdir()
    env = {**os.environ, "AGENT_TUI_HOME": str(folder / "home"),
           "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    return subprocess.Popen([*launcher_command(), "--input-format", "stream-json",
                             "--output-format", "stream-json", "--verbose"],
                            cwd=folder, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_bad_option_says_so_on_stderr_and_its_exit_code_comes_back(tmp_path) -> None:
    plain = subprocess.run([str(AGENT_TUI), "--no-such-option"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    out = subprocess.run([*launcher_command(), "--no-such-option"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert plain.returncode != 0 and "--no-such-option" in plain.stderr
    assert (out.returncode, out.stderr) == (plain.returncode, plain.stderr)


def _ended(proc: psutil.Process) -> bool:
    """Gone, a zombie, or reaped between the two looks (psutil then says no such process)."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_term_reaches_the_agent_and_a_killed_launcher_leaves_none(tmp_path) -> None:
    folder = tmp_path / "term"
    launcher = _start(folder)
    assert wait_until(lambda: _agent(folder) is not None, timeout=60)
    agent = _agent(folder)
    assert agent is not None and agent.pid != launcher.pid
    try:
        launcher.send_signal(signal.SIGTERM)
        launcher.communicate(timeout=60)
    finally:
        launcher.kill()
    assert launcher.returncode != 0
    assert wait_until(lambda: _ended(agent), timeout=30)

    folder = tmp_path / "kill"
    launcher = _start(folder)
    assert wait_until(lambda: _agent(folder) is not None, timeout=60)
    agent = _agent(folder)
    assert agent is not None
    launcher.kill()
    launcher.wait(60)  # the agent's stdin stays open: only the kill can end it
    try:
        assert wait_until(lambda: _ended(agent),
                          timeout=30)
    finally:
        launcher.communicate(timeout=60)
