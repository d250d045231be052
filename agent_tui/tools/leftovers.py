"""Processes an earlier agent process of this session left running (it crashed or
was killed): found by the runner's owner tag, listed, and ended when the user asks.

They are shown as background jobs (``left_PID``): the user can stop each one. They
are not ended on quit without being asked: the user has been told they exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

import psutil

from agent_tui.core.events import BackgroundJobChanged, Event
from agent_tui.tools.process.discovery import Found, cmdline_of, is_gone, scan
from agent_tui.tools.process.tags import OWNER_ENV
from agent_tui.tools.process.terminate import Members, terminate_now

GRACE_S = 2.0


def find_leftovers(owners: Iterable[str]) -> list[Found]:
    """The topmost processes left running (each is ended with its descendants).

    Each is kept as found (a psutil handle that knows the process's start time), so
    ending it later can never signal another process that got its PID meanwhile.
    """
    found: dict[int, Found] = {}
    for owner in owners:
        for f in scan(OWNER_ENV, owner, leader=None, leader_alive=False, group=None):
            found.setdefault(f.pid, f)
    roots = []
    for pid in sorted(found):
        try:
            parent = found[pid].proc.ppid()
        except psutil.Error:
            continue
        if parent not in found:
            roots.append(found[pid])
    return roots


def _end(root: Found) -> bool:
    """TERM to the process and its descendants, a grace, then KILL; True when gone."""

    def tree() -> list[Found]:
        if is_gone(root.proc, reap=False):
            return []
        try:
            below = root.proc.children(recursive=True)
        except psutil.Error:
            below = []
        return [root, *(Found(p, cmdline_of(p)) for p in below)]

    return not terminate_now(Members(tree, reap=True), GRACE_S).residue


class Leftovers:
    """A BackgroundWork over the processes found at resume."""

    def __init__(self, found: list[Found], emit: Callable[[Event], None]) -> None:
        self.found = {f"left_{f.pid}": f for f in found}
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
        root = self.found[job_id]
        pid = root.pid

        async def stop() -> None:
            gone = await asyncio.to_thread(_end, root)
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
