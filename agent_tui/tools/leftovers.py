"""Processes an earlier agent process of this session left running (it crashed or
was killed): found by the runner's owner tag, listed, and ended when the user asks.

They are shown as background jobs (``left_PID``): the user can stop each one. They
are not ended on quit without being asked: the user has been told they exist.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Iterable

import psutil

from agent_tui.protocol import BackgroundJobChanged, Event
from agent_tui.core.tool import Residue
from agent_tui.tools.process import processes_of_owner

GRACE_S = 2.0


def find_leftovers(owners: Iterable[str]) -> list[Residue]:
    """The topmost processes left running (each is ended with its descendants)."""
    found: dict[int, Residue] = {}
    for owner in owners:
        for residue in processes_of_owner(owner):
            found.setdefault(residue.pid, residue)
    roots = []
    for pid in sorted(found):
        try:
            parent = psutil.Process(pid).ppid()
        except psutil.Error:
            continue
        if parent not in found:
            roots.append(found[pid])
    return roots


def _gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _end(pid: int) -> bool:
    """TERM to the process and its descendants, a grace, then KILL; True when gone."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return True
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 1.0)):
        for proc in procs:
            try:
                os.kill(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            procs = [p for p in procs if not _gone(p)]
            if not procs:
                return True
            time.sleep(0.02)
    return not procs


class Leftovers:
    """A BackgroundWork over the processes found at resume."""

    def __init__(self, found: list[Residue], emit: Callable[[Event], None]) -> None:
        self.found = {f"left_{r.pid}": r for r in found}
        self.emit = emit
        self._stopping: set[asyncio.Task[None]] = set()

    def announce(self) -> None:
        for job_id, residue in self.found.items():
            self._changed(job_id, "running", "left running by an earlier run of this session")

    def _changed(self, job_id: str, state: str, detail: str) -> None:
        self.emit(BackgroundJobChanged(
            id=job_id, kind="shell", description=self.found[job_id].cmdline, state=state,
            detail=detail,
        ))

    def request_stop(self, job_id: str) -> bool:
        if job_id not in self.found:
            return False
        pid = self.found[job_id].pid

        async def stop() -> None:
            gone = await asyncio.to_thread(_end, pid)
            self._changed(job_id, "killed" if gone else "running",
                          "" if gone else f"pid {pid} could not be ended")

        task = asyncio.get_running_loop().create_task(stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        return True

    async def shutdown(self) -> None:
        # Finish the stops the user asked for; the others were announced, and ending
        # them is the user's call.
        if self._stopping:
            await asyncio.wait(set(self._stopping))
