"""The TUI end to end in a real terminal, for tests: the ``agent-tui`` binary in tmux
(one server per test, ``tmux -L``), typed into with ``send-keys`` and read with
``capture-pane``; every wait polls with a generous timeout. The ``agent`` fixture
(in conftest.py) starts one against the fake API."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

REPO = Path(__file__).resolve().parents[1]
BINARY = Path(sys.executable).with_name("agent-tui")
WAIT = 30.0  # seconds: generous, this machine has two cores and runs tests in parallel


def agent_command(workspace: Path, *flags: str, mode: str = "auto", trust: bool = True) -> list[str]:
    """The agent in ``workspace``, in ``mode``, trusting its files (``trust``: else the
    trust dialog comes first where the folder has files of its own)."""
    base = [str(BINARY)] if BINARY.exists() else [sys.executable, "-m", "agent_tui.cli"]
    return [*base, "--permission-mode", mode, *flags, "--cwd", str(workspace),
            *(["--trust"] if trust else [])]


def agent_env(api_url: str, home: Path) -> dict[str, str]:
    """The agent's environment in tmux: the fake API, its own state folder, no bell."""
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api_url,
            "AGENT_TUI_HOME": str(home), "PYTHONPATH": str(REPO), "AGENT_TUI_NOTIFY": "off"}


class Tmux:
    """One tmux server with one 120x40 session running the agent."""

    def __init__(self, name: str) -> None:
        self.socket = name
        self.target = "e2e"

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True, text=True, timeout=15, check=check,
        )

    def start(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        env_args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        self.tmux(
            "new-session", "-d", "-s", self.target, "-x", "120", "-y", "40", "-c", str(cwd),
            *env_args, shlex.join(command),
            # Without a client tmux may fall back to its default size (80x24): pin it.
            ";", "set-option", "-g", "default-size", "120x40",
            ";", "set-option", "-g", "window-size", "manual",
            ";", "set-option", "-t", self.target, "remain-on-exit", "on",
        )

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target, check=False).stdout

    def display(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.target, fmt, check=False).stdout.strip()

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.target, "-l", text)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.target, *keys)

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = WAIT) -> str:
        check = (lambda screen: what in screen) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            if self.display("#{pane_dead}") == "1":
                break
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what!r}; the screen:\n{screen}")

    def quit(self) -> None:
        """Quit the agent (Ctrl+Q), bounded, then end the tmux server."""
        try:
            if self.display("#{pane_dead}") == "0":
                self.keys("C-q")
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and self.display("#{pane_dead}") == "0":
                    time.sleep(0.1)
        finally:
            self.tmux("kill-server", check=False)


def processes_with(needle: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(needle in part for part in proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def wait_for_condition(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
