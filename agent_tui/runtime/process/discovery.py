"""Finding a run's processes and ending what was found.

A run's processes are those carrying its tag, those in its process group while the
leader is unreaped, and their descendants. Found processes are signalled, checked for
being gone, and reaped when they were reparented to us. Also the processes another
agent process left behind (``processes_of_owner``).

Reaping rule: only PIDs found tagged as ours (orphans reparented to us by the
subreaper) are reaped here, never ``waitpid(-1)``.
"""

from __future__ import annotations

import os
import signal

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a process is first looked at (about 10 ms)
    import psutil

from agent_tui.core.calls.tool import Residue
from agent_tui.runtime.process.tags import OWNER_ENV

POLL_S = 0.02


class Found:
    """A process of the run, with its command line captured while it was alive."""

    __slots__ = ("proc", "cmdline")

    def __init__(self, proc: psutil.Process, cmdline: str) -> None:
        self.proc = proc
        self.cmdline = cmdline

    @property
    def pid(self) -> int:
        return self.proc.pid

    def residue(self) -> Residue:
        return Residue(pid=self.proc.pid, cmdline=self.cmdline)


def found_pid(pid: int) -> Found | None:
    """The process ``pid`` as found now (None if it is gone)."""
    import psutil
    try:
        proc = psutil.Process(pid)
    except psutil.Error:
        return None
    return Found(proc, cmdline_of(proc))


def cmdline_of(proc: psutil.Process) -> str:
    import psutil
    try:
        return " ".join(proc.cmdline()) or f"[{proc.name()}]"
    except psutil.Error:
        return "?"


def _tag_matches(proc: psutil.Process, key: str, value: str) -> bool:
    import psutil
    try:
        return proc.environ().get(key) == value
    except psutil.Error:
        return False  # gone, a zombie, or not ours to read


def scan(
    key: str, value: str, *, leader: int | None, leader_alive: bool, group: int | None
) -> list[Found]:
    """Every process of a run: tagged, in its process group, or descended from either.

    ``group`` is only given while the leader is unreaped: then the group id cannot
    have been reused by someone else. The leader itself is never returned.
    """
    import psutil
    me = os.getpid()
    procs: dict[int, psutil.Process] = {}
    children: dict[int, list[int]] = {}
    roots: set[int] = set()
    for pid in psutil.pids():
        if pid == me or pid == leader:
            if pid == leader and leader_alive:
                roots.add(pid)
            continue
        try:
            proc = psutil.Process(pid)
            ppid = proc.ppid()
        except psutil.Error:
            continue
        procs[pid] = proc
        children.setdefault(ppid, []).append(pid)
        if _tag_matches(proc, key, value):
            roots.add(pid)
        elif group is not None:
            try:
                if os.getpgid(pid) == group:
                    roots.add(pid)
            except OSError:
                pass
    # Descendants that dropped the tag (env -i) still belong to whoever spawned them.
    ours: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in ours:
            continue
        ours.add(pid)
        todo.extend(children.get(pid, ()))
    ours.discard(leader if leader is not None else -1)
    ours.discard(me)
    return [Found(procs[pid], cmdline_of(procs[pid])) for pid in sorted(ours) if pid in procs]


def is_gone(proc: psutil.Process, *, reap: bool = True) -> bool:
    """The one "is it gone" test: True once the process no longer runs (exited, a
    zombie, or its PID now names another process). Reaps it if it is a zombie child of
    ours (an orphan the subreaper adopted).

    ``reap=False`` where the exit status belongs to someone else: a run's leader (its
    own watcher) or a child another library spawned and waits for.
    """
    import psutil
    try:
        if not proc.is_running():
            return True
        if proc.status() != psutil.STATUS_ZOMBIE:
            return False
        if not reap or proc.ppid() != os.getpid():
            return True  # not running; whoever owns its status collects it
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False
    # A tagged orphan that reparented to us (subreaper): its status is ours to collect.
    try:
        os.waitpid(proc.pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return True


def send(found: Found, sig: int) -> None:
    """Signal a found process, never a reused PID (psutil checks its identity)."""
    import psutil
    try:
        found.proc.send_signal(sig)  # psutil checks the PID was not reused
        if sig == signal.SIGTERM:
            found.proc.send_signal(signal.SIGCONT)  # a stopped process cannot act on TERM
    except psutil.Error:
        pass


def processes_of_owner(owner_id: str) -> list[Residue]:
    """Processes tagged by another agent process (``owner_id``) and their descendants:
    what an agent that crashed or was killed left running."""
    return [f.residue() for f in scan(OWNER_ENV, owner_id, leader=None, leader_alive=False,
                                       group=None)]
