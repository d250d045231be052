"""Reaping the orphans the subreaper adopts and nobody else waits for.

As child subreaper (``subreaper.py``) the agent becomes the parent of every orphaned
descendant: the escapees of its runs (which the runs end and reap), but also processes
no run knows, such as a daemon an MCP server starts or a ``git gc`` that detaches.
When one of those exits, nobody waits for it and it stays a zombie until the agent
exits. :class:`OrphanReaper` collects them.

It must never take an exit status someone else waits for (a ``subprocess`` call
would read a wrong return code): a zombie is reaped only if it is not the leader of a
live run (runs keep their leader unreaped on purpose, to hold its group) and it was
already a zombie one whole scan earlier. Whoever spawned a child waits for it within
milliseconds of its exit; a zombie that stays one for ``SCAN_EVERY`` seconds has no
one waiting.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from agent_tui.runtime.process.registry import live_runs

SCAN_EVERY = 5.0  # seconds between scans; a zombie is reaped on the second one


def _children(pid: int) -> set[int]:
    """This process's children, from /proc/PID/task/*/children (or a full scan)."""
    tasks = Path(f"/proc/{pid}/task")
    found: set[int] = set()
    try:
        for task in tasks.iterdir():
            try:
                found.update(int(p) for p in (task / "children").read_text().split())
            except (FileNotFoundError, ProcessLookupError):
                continue  # the thread ended meanwhile
    except FileNotFoundError:
        return _children_by_scan(pid)
    except PermissionError:
        return _children_by_scan(pid)
    return found


def _children_by_scan(pid: int) -> set[int]:
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        if stat is not None and stat[1] == pid:
            found.add(int(entry.name))
    return found


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of ``pid``, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], int(fields[1])


class OrphanReaper:
    """Reaps zombie children that no one else waits for (see the module docstring)."""

    def __init__(self, owned: Callable[[], set[int]], interval: float = SCAN_EVERY) -> None:
        self._owned = owned  # pids someone else will reap (the live runs' leaders)
        self.interval = interval
        self._suspects: set[int] = set()  # zombies seen on the last scan
        self.reaped: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def scan(self) -> list[int]:
        """One scan: reap the zombies that were already zombies last time."""
        me = os.getpid()
        zombies = {pid for pid in _children(me) if (_stat(pid) or ("?", 0))[0] == "Z"}
        zombies -= self._owned()
        reaped: list[int] = []
        for pid in zombies & self._suspects:
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue  # someone else took it after all
            if done == pid:
                reaped.append(pid)
        self._suspects = zombies - set(reaped)
        self.reaped += reaped
        return reaped

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agent-orphan-reaper", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.scan()
            except Exception:  # noqa: BLE001 - a failed scan is retried next time
                pass


_reaper: OrphanReaper | None = None
_reaper_lock = threading.Lock()


def start_orphan_reaper() -> OrphanReaper:
    """The process's reaper, started once. The agent's front ends start it when they
    open a session; a process that spawns children it waits for only later (a test
    suite) must not run it."""
    global _reaper
    with _reaper_lock:
        if _reaper is None:
            _reaper = OrphanReaper(lambda: {run.pid for run in live_runs() if run.pid is not None})
            _reaper.start()
        return _reaper
