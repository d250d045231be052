"""The Esc key as a person presses it: from the byte the terminal sends to the server
seeing its stream closed, and to the first stop line on the screen.

The real ``agent-tui`` runs on a pseudo-terminal (as in :mod:`bench.terminal`), talking
through the real SDK to the strict fake API, whose reply stalls after its first words.
Once they are on the screen, the bench writes one ``ESC`` byte to the terminal and times
(a) until the fake API sees the connection closed and (b) until the screen shows that
the turn stops. Side by side, the same app with Textual's own wait for a lone Esc
(``ESCDELAY=100``, its default): the ratio is what telling a lone Esc at once saves.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any

from bench.startup import AGENT, _env
from bench.terminal import PtyApp

STOP_LINE = b"stopping"  # the status line's word, the first sign of the stop on screen


class EscSession(PtyApp):
    """One agent-tui on a pseudo-terminal against its own fake API."""

    def __init__(self, escdelay: str | None) -> None:
        from tests.fake_api import FakeAnthropicServer

        self.srv = FakeAnthropicServer().start()
        home = tempfile.mkdtemp(prefix="atui-bench-home-")
        workspace = tempfile.mkdtemp(prefix="atui-bench-ws-")
        env = _env(home)
        env.update(ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=self.srv.url)
        env.pop("ESCDELAY", None)
        if escdelay is not None:
            env["ESCDELAY"] = escdelay
        self.timed: list[tuple[float, bytes]] = []  # every chunk, with its time
        super().__init__([sys.executable, "-c", AGENT, "--cwd", workspace,
                          "--model", "claude-bench"], env)
        self._wait(lambda: self._shown_since(0.0, b"idle"), 60, "no first frame")
        time.sleep(0.5)  # the first frame is up: the input takes keys

    def on_data(self, data: bytes) -> None:
        self.timed.append((time.monotonic(), data))

    def _shown_since(self, t0: float, text: bytes) -> float | None:
        """When ``text`` was first whole in what the app wrote from ``t0`` on."""
        got = b""
        for t, d in list(self.timed):
            if t >= t0:
                got += d
                if text in got:
                    return t
        return None

    def _wait(self, pred: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = pred()
            if value:
                return value
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"esc bench: {what} (exit {self.proc.poll()})")
            time.sleep(0.005)

    def one(self) -> dict[str, float | None]:
        """One stalled reply, one Esc: ms to the server's close and to the stop line."""
        from tests.fake_api import Reply

        self.srv.enqueue(Reply.stall(after_text="Thinking about it", seconds=60))
        before = len(self.srv.disconnects)
        typed = time.monotonic()
        self.type("think")
        self._wait(lambda: self._shown_since(typed, b"Thinking about it"), 60, "no reply shown")
        time.sleep(0.2)  # the screen settles: the Esc meets an app at rest
        t0 = time.monotonic()
        os.write(self.master, b"\x1b")
        self.srv.wait_for_disconnect(10, count=before + 1)
        closed = self.srv.disconnects[-1][1] if len(self.srv.disconnects) > before else None
        shown = self._wait(lambda: self._shown_since(t0, STOP_LINE), 10, "no stop line")
        self._wait(lambda: self._shown_since(t0, b"interrupted") or
                   self._shown_since(t0, b"cancelled"), 10, "the turn did not end")
        time.sleep(0.3)
        return {"close_ms": None if closed is None else (closed - t0) * 1000,
                "shown_ms": (shown - t0) * 1000}

    def close(self) -> None:
        super().close()
        self.srv.stop()


def esc_samples(runs: int) -> dict[str, list[float]]:
    """``runs`` Esc presses in each app: at once (agent-tui's default) and with
    Textual's wait (``ESCDELAY=100``), in turn."""
    out: dict[str, list[float]] = {"close": [], "shown": [], "close_ref": [], "shown_ref": []}
    now, waiting = EscSession(None), EscSession("100")
    try:
        for _ in range(runs):
            for session, suffix in ((now, ""), (waiting, "_ref")):
                result = session.one()
                if result["close_ms"] is not None:
                    out["close" + suffix].append(result["close_ms"])
                if result["shown_ms"] is not None:
                    out["shown" + suffix].append(result["shown_ms"])
    finally:
        now.close()
        waiting.close()
    return out
