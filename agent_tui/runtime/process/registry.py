"""The live runs of this agent process, and the synchronous last resort that ends them.

A run registers itself when it starts and leaves when it is cleaned up. The registry
knows runs only as :class:`LiveRun` (a PID and a group signal), so it imports nothing
of the run unit. ``kill_all_runs()`` is for atexit and signal handlers: it finds every
process of ours by the owner tag, so escapees of runs whose objects are gone, and stdio
MCP servers, are ended too. :func:`install_atexit` is the one atexit hook.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from typing import Protocol


from agent_tui.core.calls.tool import Residue
from agent_tui.runtime.process.cgroup import folder_pids, kill_folder, populated, remove_folder
from agent_tui.runtime.process.cgroup_tree import tree
from agent_tui.runtime.process.discovery import Found, found_pid, is_gone, scan
from agent_tui.runtime.process.tags import OWNER_ENV, owner_id
from agent_tui.runtime.process.terminate import terminate_now

#: The grace the atexit hook gives what is still running (MCP servers, escapees).
AT_EXIT_GRACE_S = 0.5


class LiveRun(Protocol):
    """What the registry needs of a run."""

    @property
    def pid(self) -> int | None: ...

    def signal_group(self, sig: int) -> bool: ...


_LIVE: dict[str, LiveRun] = {}
_LIVE_LOCK = threading.Lock()
_atexit_installed = False


def _after_fork() -> None:
    """A forked child started none of its parent's runs: they are not its to end."""
    global _LIVE_LOCK
    _LIVE_LOCK = threading.Lock()
    _LIVE.clear()


os.register_at_fork(after_in_child=_after_fork)


def register(run_id: str, run: LiveRun) -> None:
    install_atexit()
    with _LIVE_LOCK:
        _LIVE[run_id] = run


def unregister(run_id: str) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(run_id, None)


def live_runs() -> list[LiveRun]:
    """Runs started and not yet cleaned up."""
    with _LIVE_LOCK:
        return list(_LIVE.values())


class _Everything:
    """Every process of this agent: the live runs' groups, all owner-tagged ones, and
    everything in the agent's cgroups."""

    def __init__(self) -> None:
        self._leaders = {run.pid for run in live_runs()}  # their runs reap them, not us
        cgroups = tree()
        self._folder = cgroups.v2 if cgroups is not None else None

    def members(self) -> list[Found]:
        found = scan(OWNER_ENV, owner_id(), leader=None, leader_alive=False, group=None)
        if self._folder is not None:
            seen = {f.pid for f in found}
            for pid in folder_pids(self._folder):
                if pid not in seen and (f := found_pid(pid)) is not None:
                    found.append(f)
        return found

    def signal_whole(self, sig: int) -> bool:
        sent = [run.signal_group(sig) for run in live_runs()]
        if sig == signal.SIGKILL and self._folder is not None and folder_pids(self._folder):
            kill_folder(self._folder)
            sent.append(True)
        return any(sent)

    def covered(self, found: Found) -> bool:
        return False

    def whole_gone(self) -> bool:
        return self._folder is None or not populated(self._folder)

    def member_gone(self, found: Found) -> bool:
        return is_gone(found.proc, reap=found.pid not in self._leaders)


def kill_all_runs(grace_s: float = 0.0) -> list[Residue]:
    """End every process of ours now, synchronously: for atexit and signal handlers.

    SIGTERM first when ``grace_s`` > 0, then a SIGKILL sweep (a rescan: late forks
    too). Returns the residue.
    """
    target = _Everything()
    first = terminate_now(target, grace_s) if grace_s > 0 else None
    last = terminate_now(target, 0.0)
    residue = last.residue + (first.residue if first else [])
    seen: set[int] = set()
    out = []
    for f in residue:
        if f.pid not in seen and not target.member_gone(f):
            seen.add(f.pid)
            out.append(f.residue())
    return out


def _at_exit() -> None:
    kill_all_runs(AT_EXIT_GRACE_S)
    cgroups = tree()
    if cgroups is not None:
        for folder in cgroups.folders():
            remove_folder(folder)


def install_atexit() -> None:
    """The one atexit hook of the process layer: whatever of ours still runs is ended."""
    global _atexit_installed
    with _LIVE_LOCK:
        if _atexit_installed:
            return
        _atexit_installed = True
    atexit.register(_at_exit)
