"""Process trees for the bench, and how we see them: by a unique marker in argv.

"Gone" is checked against the real process table, independent of what the code
under test claims. A zombie counts as gone (it runs nothing; its parent reaps it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import psutil

from tests.trees.procs import procs_with  # one definition of "our marked processes"

TREES = ("term_exits", "term_ignored", "setsid_escape")


def new_marker() -> str:
    return f"atuibench-{uuid.uuid4().hex[:12]}"


def tree_command(kind: str, marker: str) -> tuple[str, int]:
    """A bash command line for one tree, and how many marked processes it makes.

    - ``term_exits``: bash and two sleeps, all end on SIGTERM.
    - ``term_ignored``: the same with ``trap '' TERM`` (inherited: the sleeps ignore it too).
    - ``setsid_escape``: bash, one sleep in the group, one that left it with setsid.
    Every process carries the marker in argv (``exec -a``, or the bash -c string).
    """
    if kind == "term_exits":
        return (f"exec -a {marker}-a sleep 1000 & exec -a {marker}-b sleep 1000 & wait", 3)
    if kind == "term_ignored":
        return (
            f"trap '' TERM; exec -a {marker}-a sleep 1000 & exec -a {marker}-b sleep 1000 & wait",
            3,
        )
    if kind == "setsid_escape":
        return (
            f"exec -a {marker}-a sleep 1000 & "
            f"setsid -f bash -c 'exec -a {marker}-escaped sleep 1000'; wait",
            3,
        )
    raise ValueError(kind)


def wait_for_procs(marker: str, count: int, timeout: float = 5.0) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while True:
        found = procs_with(marker)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie or a missing PID does not). Cheap: one read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X", b"x")


def wait_all_gone(pids: list[int], timeout: float, poll: float = 0.001) -> float | None:
    """Poll until none of ``pids`` runs; the monotonic time it was first seen, or None."""
    deadline = time.monotonic() + timeout
    while True:
        now = time.monotonic()
        if not any(running(p) for p in pids):
            return now
        if now > deadline:
            return None
        time.sleep(poll)


def kill_marked(marker: str, *, reap: bool = False) -> int:
    """Clean-up after a measurement: SIGKILL what still carries the marker; how many.
    ``reap`` also reaps our zombie children (only when no ProcessRun of ours is live:
    it reaps its own leaders and must find them unreaped)."""
    left = procs_with(marker)
    for proc in left:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    if reap:
        time.sleep(0.01)
        reap_children()
    return len(left)


def reap_children() -> None:
    """Reap zombie children of ours that no one else waits for (escapees reparented to
    us as subreaper, in the reference runs). Only exited ones: never blocks."""
    try:
        kids = psutil.Process(os.getpid()).children()
    except psutil.Error:
        return
    for kid in kids:
        try:
            if kid.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(kid.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError, OSError):
            pass


def reference_kill(kind: str, timeout: float = 5.0) -> float:
    """The floor: the same tree started directly, every process group it occupies
    killed with killpg(SIGKILL), the leader reaped. Seconds until every process is gone."""
    marker = new_marker()
    command, count = tree_command(kind, marker)
    proc = subprocess.Popen(
        ["bash", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        found = wait_for_procs(marker, count, timeout)
        pids = [p.pid for p in found]
        groups = set()
        for pid in pids:
            try:
                groups.add(os.getpgid(pid))
            except OSError:
                pass
        t0 = time.monotonic()
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        proc.wait()
        gone = wait_all_gone(pids, timeout)
        return (gone if gone is not None else time.monotonic()) - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_marked(marker, reap=True)
