"""Time to first frame: agent-tui vs a bare Textual app, both started the same way.

Method (fair to both): each app is a fresh ``python -c "...main()"`` subprocess on a
pseudo-terminal (100x30, ``TERM=xterm-256color``), with PYTHONDONTWRITEBYTECODE unset
so bytecode caching works as it does for users. The clock runs from just before the
spawn until the first byte of the first frame reaches the terminal: the first cursor
positioning (``ESC [ row ; col H``) that Textual's compositor writes. The mode set-up
sequences Textual writes before it are not a frame. The process group is then killed.
One warm-up run of each comes first (it also writes the bytecode caches); the
measured runs alternate between the two apps so that drift hits both alike.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FRAME = re.compile(rb"\x1b\[\d+;\d+H")

AGENT = "from agent_tui.cli import run; run()"
BARE = "import sys; from bench.bare_app import main; sys.exit(main())"


def _env(home: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(TERM="xterm-256color", COLUMNS="100", LINES="30", AGENT_TUI_HOME=home,
               TEXTUAL_ANIMATIONS="none")
    return env


def first_frame_s(which: str, timeout: float = 30.0) -> float:
    """Seconds from spawn to the first frame of ``which`` ("agent" or "bare")."""
    home = tempfile.mkdtemp(prefix="atui-bench-home-")
    workspace = tempfile.mkdtemp(prefix="atui-bench-ws-")
    argv = [sys.executable, "-c", AGENT if which == "agent" else BARE]
    if which == "agent":
        argv += ["--provider", "scripted", "--cwd", workspace]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=_env(home),
                            cwd=REPO, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            now = time.monotonic()
            seen += data
            if FRAME.search(seen):
                return now - t0
        raise RuntimeError(f"{which}: no frame within {timeout} s; output: {seen[-300:]!r}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        # Drain what the terminal still holds, then let go of it.
        try:
            while select.select([master], [], [], 0)[0] and os.read(master, 65536):
                pass
        except OSError:
            pass
        os.close(master)


def measure(runs: int) -> tuple[list[float], list[float]]:
    """(agent ms, bare ms) over ``runs`` alternating runs, after one warm-up of each."""
    first_frame_s("agent")
    first_frame_s("bare")
    agent, bare = [], []
    for i in range(runs):
        order = ("agent", "bare") if i % 2 == 0 else ("bare", "agent")
        for which in order:
            ms = first_frame_s(which) * 1000
            (agent if which == "agent" else bare).append(ms)
    return agent, bare
