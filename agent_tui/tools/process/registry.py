"""The live runs of this agent process, and the synchronous last resort that ends them.

``kill_all_runs()`` is for atexit and signal handlers: it finds every process of ours
by the owner tag, so escapees of runs whose objects are gone are ended too.
"""

from __future__ import annotations

import atexit
import signal
import threading
import time
from typing import TYPE_CHECKING

from agent_tui.core.tool import Residue
from agent_tui.tools.process.discovery import _POLL_S, _Found, _gone, _scan, _send
from agent_tui.tools.process.tags import OWNER_ENV, OWNER_ID

if TYPE_CHECKING:
    from agent_tui.tools.process.run import ProcessRun

_LIVE: dict[str, ProcessRun] = {}
_LIVE_LOCK = threading.Lock()
_atexit_installed = False


def live_runs() -> list[ProcessRun]:
    """Runs started and not yet cleaned up."""
    with _LIVE_LOCK:
        return list(_LIVE.values())


def kill_all_runs(grace_s: float = 0.0) -> list[Residue]:
    """End every process of ours now, synchronously: for atexit and signal handlers.

    SIGTERM first when ``grace_s`` > 0, then SIGKILL. Runs are found by the owner tag,
    so escapees of runs whose objects are gone are ended too. Returns the residue.
    """

    def sweep(sig: int) -> list[_Found]:
        for run in live_runs():
            run.signal_group(sig)
        found = _scan(OWNER_ENV, OWNER_ID, leader=None, leader_alive=False, group=None)
        for f in found:
            _send(f, sig)
        return found

    def wait_gone(procs: list[_Found], seconds: float) -> list[_Found]:
        leaders = {run.pid for run in live_runs()}  # their runs reap them, not us
        deadline = time.monotonic() + seconds
        while True:
            procs = [f for f in procs if not _gone(f, reap=f.pid not in leaders)]
            if not procs or time.monotonic() >= deadline:
                return procs
            time.sleep(_POLL_S)

    alive: list[_Found] = []
    if grace_s > 0:
        alive = wait_gone(sweep(signal.SIGTERM), grace_s)
    seen = {f.pid for f in alive}
    alive += [f for f in sweep(signal.SIGKILL) if f.pid not in seen]  # a rescan: late forks too
    return [f.residue() for f in wait_gone(alive, 1.0)]


def _install_atexit() -> None:
    global _atexit_installed
    if not _atexit_installed:
        _atexit_installed = True
        atexit.register(kill_all_runs)
