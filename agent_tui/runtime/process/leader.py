"""A run's leader: the one process we spawned, watched until it is reaped.

:class:`Leader` confirms the leader's exit by reaping it (pidfd, or a thread that
waits without reaping where there is no pidfd), keeps its raw wait status, and signals
its process group only while it is unreaped, so the group id is still ours.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time


class Leader:
    """The leader of a run, from spawn to reaping. See the module docstring."""

    def __init__(self, popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._popen = popen
        self._loop = loop
        self.pid = popen.pid
        self.started = time.monotonic()
        self.ended = 0.0  # monotonic time of the reaping
        self.status: int | None = None  # raw wait status; None if someone else reaped it
        self.exited: asyncio.Future[None] = loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            # No pidfd: a thread waits for the exit *without* reaping (WNOWAIT), so the
            # loop stays the only place that reaps, and killpg stays safe until then.
            threading.Thread(target=self._wait_thread, daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._on_exit)

    @property
    def reaped(self) -> bool:
        return self.exited.done()

    def _wait_thread(self) -> None:
        try:
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            pass
        try:
            self._loop.call_soon_threadsafe(self._on_exit)
        except RuntimeError:
            pass  # loop closed

    def _on_exit(self) -> None:
        if self.exited.done():
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, None  # someone else reaped it: the status is lost
        if pid == 0:
            return  # spurious wake-up
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self.status = status
        # Tell Popen it is reaped, or it would waitpid a possibly reused PID later.
        self._popen.returncode = os.waitstatus_to_exitcode(status) if status is not None else -1
        self.ended = time.monotonic()
        self.exited.set_result(None)

    def signal_group(self, sig: int) -> bool:
        """Signal the leader's process group, only while the leader is unreaped (so the
        group id is still ours). Thread-safe. True if the signal was sent."""
        if self.reaped:
            return False
        try:
            os.killpg(self.pid, sig)
            if sig == signal.SIGTERM:
                os.killpg(self.pid, signal.SIGCONT)  # a stopped process cannot act on TERM
        except OSError:
            return False
        return True

    def decode(self) -> tuple[int | None, str | None]:
        """(exit code, signal name) from the wait status; (None, None) if unknown."""
        status = self.status
        if status is None:
            return None, None
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                return None, signal.Signals(sig).name
            except ValueError:
                return None, f"signal {sig}"
        if os.WIFEXITED(status):
            return os.WEXITSTATUS(status), None
        return None, None
