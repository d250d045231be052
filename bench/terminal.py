"""What the app writes to its terminal and the CPU it uses, idle and while a reply
streams, beside a bare Textual app doing the same (``bench/bare_app.py``).

Both run as in :mod:`bench.startup` (a fresh ``python -c`` on a 100x30 pseudo-terminal)
and get the same keys. After the first frame and a settling second, ``hi`` + Enter: a
short exchange (agent-tui's scripted model answers a line; the bare app shows one).
Then, for ``IDLE_S`` seconds of nothing: the bytes the terminal received and the
process's CPU (user + system). Then ``stream`` + Enter: the same Markdown text
(``answer_text()``, about 16 KB) streams in, 4 characters every ``DELAY_S`` seconds, to
agent-tui's transcript from the scripted model and to the bare app's Markdown widget
(Textual's own streaming); bytes and CPU are taken over ``STREAM_S`` seconds from 1 s
into it. The bare app's cursor blinks (Textual's default); agent-tui's does not (its own
default: an idle TUI writes nothing).
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from bench.bare_app import SHORT_ANSWER
from bench.startup import AGENT, BARE, FRAME, REPO, _env

IDLE_S = 8.0  # long enough for CPU ticks (10 ms) to say something at 1% of a core
STREAM_S = 3.0
DELAY_S = 0.002  # seconds per 4 characters: about 2,000 characters a second


def answer_text() -> str:
    """A model answer of about 16 KB: paragraphs, a list and a code block, repeated."""
    part = (
        "The function reads the file line by line, parses each record and adds its "
        "amount to the running total for its account. Records it cannot parse are "
        "counted and reported at the end, so nothing is lost silently.\n\n"
        "- `read_records` opens the file and yields one record a line\n"
        "- `parse` turns a line into an account and an amount\n"
        "- `totals` adds them up, per account\n\n"
        "```python\n"
        "def totals(path):\n"
        "    out = {}\n"
        "    for account, amount in map(parse, read_records(path)):\n"
        "        out[account] = out.get(account, 0) + amount\n"
        "    return out\n"
        "```\n\n"
    )
    return part * 24


class PtyApp:
    """A program on a 100x30 pseudo-terminal; a thread keeps what it writes, with times."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path = REPO) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=cwd, start_new_session=True)
        os.close(slave)
        self.ps = psutil.Process(self.proc.pid)
        self.chunks: list[tuple[float, int]] = []
        self.seen = b""  # the first bytes, until the first frame
        self._stop = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._stop:
            if not select.select([self.master], [], [], 0.05)[0]:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.chunks.append((time.monotonic(), len(data)))
            self.on_data(data)
            if len(self.seen) < 1_000_000:
                self.seen += data

    def on_data(self, data: bytes) -> None:
        """Each chunk as it is read (the reader's thread)."""

    def wait_frame(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not FRAME.search(self.seen):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"no frame; output: {self.seen[-300:]!r}")
            time.sleep(0.02)

    def wait_for(self, text: bytes, timeout: float = 30.0) -> None:
        """Until ``text`` has been written (anywhere in what the app wrote)."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while text not in self.seen[start - 2000 if start > 2000 else 0 :]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{text!r} not shown")
            time.sleep(0.02)

    def type(self, text: str) -> None:
        for ch in text:
            os.write(self.master, ch.encode())
            time.sleep(0.03)
        os.write(self.master, b"\r")

    def window(self, seconds: float) -> tuple[float, float]:
        """(bytes a second written, % of a core used) over the next ``seconds``."""
        cpu0 = sum(self.ps.cpu_times()[:2])
        t0 = time.monotonic()
        time.sleep(seconds)
        t1 = time.monotonic()
        cpu = sum(self.ps.cpu_times()[:2]) - cpu0
        written = sum(n for t, n in self.chunks if t0 <= t < t1)
        return written / (t1 - t0), 100 * cpu / (t1 - t0)

    def close(self) -> None:
        self._stop = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self._reader.join(2)
        os.close(self.master)


class Pty(PtyApp):
    """agent-tui on the scripted model, or the bare app, streaming the same text."""

    def __init__(self, which: str, home: str, workspace: str, script: Path, text: Path) -> None:
        argv = [sys.executable, "-c", AGENT if which == "agent" else BARE]
        env = _env(home)
        if which == "agent":
            argv += ["--provider", "scripted", "--script", str(script), "--cwd", workspace]
            env["AGENT_TUI_SCRIPTED_DELAY"] = str(DELAY_S)
        else:
            env.update(BENCH_STREAM_FILE=str(text), BENCH_STREAM_DELAY=str(DELAY_S))
        super().__init__(argv, env)


def run(which: str) -> dict[str, float]:
    """One app: idle bytes/s and CPU % after a short exchange, then while streaming."""
    tmp = Path(tempfile.mkdtemp(prefix="atui-bench-term-"))
    text = tmp / "answer.md"
    text.write_text(answer_text(), encoding="utf-8")
    script = tmp / "script.json"
    script.write_text(json.dumps({
        "rules": [{"match": "^stream", "replies": [[{"text": answer_text()}]]}],
        "default": [[{"text": SHORT_ANSWER}]],
    }), encoding="utf-8")
    (tmp / "home").mkdir()
    (tmp / "ws").mkdir()
    app = Pty(which, str(tmp / "home"), str(tmp / "ws"), script, text)
    try:
        app.wait_frame()
        time.sleep(1.5)  # the core starts, the preload runs
        app.type("hi")
        app.wait_for(SHORT_ANSWER.split()[-1].encode())
        time.sleep(1.5)  # the answer is shown, the app settles
        idle_bps, idle_cpu = app.window(IDLE_S)
        app.type("stream")
        time.sleep(1.0)
        stream_bps, stream_cpu = app.window(STREAM_S)
    finally:
        app.close()
    return {"idle_bps": idle_bps, "idle_cpu": idle_cpu,
            "stream_bps": stream_bps, "stream_cpu": stream_cpu}


def measure(runs: int) -> dict[str, list[float]]:
    """Alternating runs of both apps; each key a list (agent), and ``bare_<key>``."""
    out: dict[str, list[float]] = {}
    for i in range(runs):
        for which in (("agent", "bare") if i % 2 == 0 else ("bare", "agent")):
            result = run(which)
            for key, value in result.items():
                out.setdefault(key if which == "agent" else f"bare_{key}", []).append(value)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 1), indent=1))
