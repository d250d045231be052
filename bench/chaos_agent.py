"""The agent process of a crash trial: forked with the agent preloaded
(:mod:`bench.forked_agent`), with the trial's stdin, stdout and crash-point channel, in
a process group of its own (so a kill takes git with it, as a power cut would)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.forked_agent import Fd, agent_main


class AgentRun:
    """One agent process of a trial: ops in (stdin), events out (stdout), crash points.

    ``on_point(name, n)`` is asked at the agent's n-th crash point: None lets it go on;
    a number kills the agent (its whole process group, SIGKILL) that many seconds after
    letting it go on, and 0 kills it right there, before it may go on.
    """

    def __init__(self, ctx: Any, argv: list[str], env: dict[str, str], cwd: str,
                 stderr_path: str,
                 on_point: Callable[[str, int], float | None] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.points: list[str] = []
        self.killed_at: str | None = None  # the crash point (or "timer") it was killed at
        self._cond = threading.Condition()
        self._eof = False
        self._on_point = on_point
        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        to_trial_r, to_trial_w = os.pipe()
        to_agent_r, self._to_agent_w = os.pipe()
        self.proc = ctx.Process(target=agent_main, args=(
            argv, env, cwd, Fd(in_r), Fd(out_w), Fd(err), (Fd(to_trial_w), Fd(to_agent_r)),
        ))
        try:
            self.proc.start()
        finally:
            for fd in (in_r, out_w, err, to_trial_w, to_agent_r):
                os.close(fd)
        self.pid = self.proc.pid
        self._threads = [
            threading.Thread(target=self._read_events, args=(out_r,), daemon=True),
            threading.Thread(target=self._answer_points, args=(to_trial_r,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # -- ops in -----------------------------------------------------------------------

    def send(self, op: dict[str, Any]) -> None:
        try:
            os.write(self._in_w, (json.dumps(op) + "\n").encode())
        except OSError:
            pass  # the agent is gone

    def close_stdin(self) -> None:
        with self._cond:  # from the driver's thread or the trial's: closed once
            fd, self._in_w = self._in_w, -1
        if fd >= 0:
            os.close(fd)

    # -- events out -------------------------------------------------------------------

    def _read_events(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as out:
            for line in out:
                try:
                    event = json.loads(line)
                except ValueError:
                    event = {"type": "unparsable_output", "text": line.decode(errors="replace")}
                with self._cond:
                    self.events.append(event)
                    self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def next_event(self, index: int, timeout: float) -> dict[str, Any] | None:
        """Event number ``index`` once it has arrived; None at end of output or timeout."""
        with self._cond:
            self._cond.wait_for(lambda: len(self.events) > index or self._eof, timeout)
            return self.events[index] if len(self.events) > index else None

    def stream(self, timeout: float) -> Iterator[dict[str, Any]]:
        """Events as they arrive, until the end of output or ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        index = 0
        while time.monotonic() < deadline:
            event = self.next_event(index, deadline - time.monotonic())
            if event is None:
                return
            index += 1
            yield event

    def of(self, kind: str) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if e.get("type") == kind]

    # -- crash points -----------------------------------------------------------------

    def _answer_points(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as points:
            for line in points:
                name = line.decode(errors="replace").strip()
                self.points.append(name)
                delay = self._on_point(name, len(self.points)) if self._on_point else None
                if delay == 0:
                    self.kill(name)
                    return
                if delay is not None:
                    threading.Timer(delay, self.kill, args=(name,)).start()
                try:
                    os.write(self._to_agent_w, b"c")
                except OSError:
                    return

    def kill(self, why: str) -> None:
        if self.killed_at is None:
            self.killed_at = why
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass

    def wait(self, timeout: float) -> int | None:
        """The exit code (negative: the signal), or None if it still runs."""
        self.proc.join(timeout)
        if self.proc.exitcode is None:
            return None
        for thread in self._threads:
            thread.join(5)
        self.close_stdin()
        fd, self._to_agent_w = self._to_agent_w, -1
        if fd >= 0:  # once: a second close could hit a descriptor reused since
            try:
                os.close(fd)
            except OSError:
                pass
        return self.proc.exitcode
