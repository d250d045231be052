"""Processes an earlier agent process of this session left running (it crashed or
was killed): found by their cgroups (the earlier agent's ``agent-tui-OWNER/run-*``)
and by the runner's owner tag, listed, and ended when the user asks: a cgroup by
``cgroup.kill`` until the kernel says it is empty, then removed; a tagged process
with its descendants.

They are shown as background jobs (``left_PID``): the user can stop each one. They
are not ended on quit without being asked: the user has been told they exist.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterable
from pathlib import Path

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a process is first looked at (about 10 ms)
    import psutil

from agent_tui.protocol import BackgroundJobChanged, Event
from agent_tui.runtime.process.cgroup import folder_pids, kill_folder, populated, remove_folder
from agent_tui.runtime.process.cgroup_tree import earlier_agents, tree
from agent_tui.runtime.process.discovery import Found, cmdline_of, found_pid, is_gone, scan, send
from agent_tui.runtime.process.tags import OWNER_ENV
from agent_tui.runtime.process.terminate import Members, terminate_now

GRACE_S = 2.0


class Leftover:
    """One thing left running: a command's cgroup (``folder``), or a tagged process
    tree (``root``). ``pid`` and ``cmdline`` name it for the user."""

    def __init__(self, root: Found, folder: Path | None = None) -> None:
        self.root = root
        self.folder = folder
        self.pid = root.pid
        self.cmdline = root.cmdline


def find_leftovers(owners: Iterable[str]) -> list[Leftover]:
    """What earlier agent processes (``owners``) left: their commands' cgroups that
    still hold processes, then the topmost tagged processes outside those.

    Each process is kept as found (a psutil handle that knows the process's start
    time), so ending it later can never signal another process that got its PID.
    """
    owners = set(owners)
    out = _cgroup_leftovers(owners)
    inside = {pid for left in out if left.folder is not None for pid in folder_pids(left.folder)}
    found: dict[int, Found] = {}
    for owner in owners:
        for f in scan(OWNER_ENV, owner, leader=None, leader_alive=False, group=None):
            if f.pid not in inside:
                found.setdefault(f.pid, f)
    for pid in sorted(found):
        import psutil  # a new session, or one whose earlier processes all ended: none found

        try:
            parent = found[pid].proc.ppid()
        except psutil.Error:
            continue
        if parent not in found:
            out.append(Leftover(found[pid]))
    return out


def _cgroup_leftovers(owners: set[str]) -> list[Leftover]:
    cgroups = tree()
    if cgroups is None:
        return []
    out = []
    for owner, folders in earlier_agents(cgroups).items():
        if owner not in owners:
            continue
        for folder in folders:
            if folder.parent != cgroups.v2.parent:
                remove_folder(folder)  # a v1 limit folder: nothing to list, only to tidy
                continue
            for run in sorted(p for p in folder.iterdir() if p.is_dir()):
                pids = folder_pids(run)
                root = next((f for f in map(found_pid, sorted(pids)) if f is not None), None)
                if root is not None:
                    out.append(Leftover(root, run))
            remove_folder(folder)  # the empty ones go now; the rest once ended
    return out



class _CgroupOf:
    """A left-over command's cgroup as a terminate.Target: TERM to each process in
    it, then cgroup.kill; gone when the kernel says it is empty."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def members(self) -> list[Found]:
        return [f for f in map(found_pid, folder_pids(self.folder)) if f is not None]

    def signal_whole(self, sig: int) -> bool:
        if sig == signal.SIGKILL:
            kill_folder(self.folder)
            return populated(self.folder)
        members = self.members()
        for f in members:
            send(f, sig)
        return bool(members)

    def covered(self, found: Found) -> bool:
        return True

    def whole_gone(self) -> bool:
        return not populated(self.folder)

    def member_gone(self, found: Found) -> bool:
        return is_gone(found.proc)


def _end(left: Leftover) -> bool:
    """TERM, a grace, then KILL (the cgroup, or the process and its descendants);
    True when gone."""
    import psutil
    if left.folder is not None:
        gone = not terminate_now(_CgroupOf(left.folder), GRACE_S).residue
        gone = gone and not populated(left.folder)
        remove_folder(left.folder)
        remove_folder(left.folder.parent)  # the earlier agent's folder, once empty
        return gone
    root = left.root

    def tree_of_root() -> list[Found]:
        if is_gone(root.proc, reap=False):
            return []
        try:
            below = root.proc.children(recursive=True)
        except psutil.Error:
            below = []
        return [root, *(Found(p, cmdline_of(p)) for p in below)]

    return not terminate_now(Members(tree_of_root, reap=True), GRACE_S).residue


class Leftovers:
    """A BackgroundWork over the processes found at resume."""

    def __init__(self, found: list[Leftover], emit: Callable[[Event], None]) -> None:
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
