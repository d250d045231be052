"""The terminal closing (SIGHUP) or a plain ``kill`` (SIGTERM) ends the agent as quitting
does: the core stops what runs (TERM, a grace, KILL) and records how each call ended.
Past a deadline, or on a second signal, every process of ours is ended at once and the
process exits. Without this, Python's default action for both signals ends the agent
and leaves its commands, hooks and MCP servers running with nobody to stop them.

Installed by each front end around its run: the TUI (``run_tui``, around ``App.run``),
print mode and the Agent SDK's protocol (a script's ``timeout``, the SDK's ``close``);
the exit code is 128 + the signal's number.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

#: What ``signal.signal`` returns: the handler it replaced.
PreviousHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

SIGNALS = (signal.SIGHUP, signal.SIGTERM)
#: How long a print run's graceful way out may take (its calls' cleanup budget, 6 s, and
#: the session's end, with room) before every process of ours is ended at once.
PRINT_DEADLINE_S = 15.0


class Hangup:
    """One agent process's answer to SIGHUP and SIGTERM (``hard_exit``: ends every process
    of ours, synchronously; :meth:`install` gives the graceful way out, called on the
    running loop with the signal's number, and how long it may take)."""

    def __init__(self, hard_exit: Callable[[], object] | None) -> None:
        self._hard_exit = hard_exit
        self._quit: Callable[[int], object] = lambda _signum: None
        self._deadline_s = 0.0
        self._previous: dict[int, PreviousHandler] = {}
        self.signum: int | None = None

    @property
    def exit_code(self) -> int | None:
        """128 + the signal's number once one came, else None."""
        return None if self.signum is None else 128 + self.signum

    def install(self, quit: Callable[[int], object], deadline_s: float) -> None:
        """Answer both signals from now on: ``quit`` on the running loop, every process
        of ours ended at once past ``deadline_s`` or at a second signal."""
        self._quit, self._deadline_s = quit, deadline_s
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._on_signal)

    def uninstall(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # a second one: no more waiting
            self._end_now(signum)
            return
        self.signum = signum
        threading.Thread(target=self._deadline, name="hangup-deadline", daemon=True).start()
        try:
            loop = asyncio.get_running_loop()  # the handler runs on the main thread, the loop's
        except RuntimeError:
            self._end_now(signum)  # no app loop yet (or any more): nothing quits gracefully
            return
        loop.call_soon_threadsafe(self._quit, signum)

    def exit_now(self) -> None:
        """Leave at once, after the last-resort sweep (for a closed terminal, once the core
        has stopped: the app's own teardown would wait on a terminal that is gone)."""
        self._end_now(self.signum or signal.SIGHUP)

    def _deadline(self) -> None:
        time.sleep(self._deadline_s)
        self._end_now(self.signum or signal.SIGTERM)

    def _end_now(self, signum: int) -> None:
        try:
            if self._hard_exit is not None:
                self._hard_exit()
        finally:
            os._exit(128 + signum)
