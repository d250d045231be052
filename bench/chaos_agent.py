"""The agent process of a crash trial, started from a fork server with the agent preloaded.

``python -m agent_tui.cli`` spends seconds importing the SDK and the core; ten
thousand trials cannot pay that twice each. So every trial worker keeps one
multiprocessing fork server that has imported all of the agent once
(``PRELOAD``), and each agent process of a trial is forked from it and runs exactly
what the command line runs: ``agent_tui.cli.main(argv)``, with the trial's own
environment, working folder, stdin, stdout and crash-point channel, in a process
group of its own (so a kill takes git with it, as a power cut would). Nothing else
of the trial's process is inherited: the fork server never ran a thread.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from multiprocessing import reduction
from typing import Any

# Everything the agent imports lazily on its way to the first request, and the bench's
# own main module (a forked child runs it again: cheap once its imports are loaded).
PRELOAD = [
    "bench.chaos_agent",
    "bench.chaos",
    "bench.chaos_warm",
    "anthropic",
    "agent_tui.cli",
    "agent_tui.headless",
    "agent_tui.core.session",
    "agent_tui.core.subagent",
    "agent_tui.providers.anthropic",
    "agent_tui.tools.registry",
    "agent_tui.tools.mcp",
    "agent_tui.tools.leftovers",
    "agent_tui.tools.process.orphans",
    "agent_tui.checkpoints",
    "agent_tui.permissions",
    "agent_tui.settings",
]


class Fd:
    """A file descriptor handed to the forked agent (through the fork server's socket)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> Any:
        return (_inherited, (reduction.DupFd(self.fd),))


def _inherited(dup: Any) -> int:
    return dup.detach()


# A forked child re-runs the main module, which is loaded already; runpy says so.
warnings.filterwarnings("ignore", category=RuntimeWarning, module="runpy")


def share_ssl_context() -> None:
    """One CA bundle load per process, not per client (40 ms each): every client of a
    trial talks plain HTTP to 127.0.0.1 and never uses it. Done in the workers and in
    the fork server, so the forked agents inherit it."""
    import httpcore2

    context = httpcore2.default_ssl_context()
    httpcore2.default_ssl_context = lambda **_: context


def fork_context() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def agent_main(argv: list[str], env: dict[str, str], cwd: str, stdin: int, stdout: int,
               stderr: int, channel: tuple[int, int] | None) -> None:
    """The forked agent: the trial's fds as 0/1/2, its environment, then the CLI."""
    try:
        os.setpgrp()
    except OSError:
        pass
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(env)
    if channel is not None:
        for fd in channel:
            os.set_inheritable(fd, False)  # for the agent alone, not its commands
        os.environ["AGENT_TUI_CRASH_POINTS"] = f"{channel[0]},{channel[1]}"
    os.chdir(cwd)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    from agent_tui.cli import main

    code = 1
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        atexit._run_exitfuncs()  # what an interpreter does on its way out
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(code)


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
