"""Finding and ending the processes of stdio MCP servers.

Each server process gets two tags in its environment: the process layer's owner tag
(so the app-wide last resort, ``kill_all_runs``, ends it too) and a tag of its own
(``AGENT_TUI_MCP_SERVER``), by which we find its PID and anything it left behind.
The SDK ends a server at session close (stdin closed, grace, SIGTERM to its process
group, grace, SIGKILL); :func:`end_tagged` is our sweep after that, for descendants
that left the group, with the same TERM -> grace -> KILL escalation.
"""

from __future__ import annotations

import atexit
import os
import signal
import time

import psutil

from agent_tui.tools.process import OWNER_ENV, OWNER_ID

SERVER_TAG_ENV = "AGENT_TUI_MCP_SERVER"

_live_tags: set[str] = set()
_atexit_installed = False


def tag_env(tag: str) -> dict[str, str]:
    return {OWNER_ENV: OWNER_ID, SERVER_TAG_ENV: tag}


def remember(tag: str) -> None:
    """Track a started server so that a quit without shutdown still ends it."""
    global _atexit_installed
    _live_tags.add(tag)
    if not _atexit_installed:
        _atexit_installed = True
        atexit.register(_end_all_at_exit)


def forget(tag: str) -> None:
    _live_tags.discard(tag)


def find_tagged(tag: str, *, children_only: bool = False) -> list[psutil.Process]:
    """Processes whose environment carries ``tag`` (our children only, if asked)."""
    me = os.getpid()
    if children_only:
        try:
            candidates = psutil.Process(me).children(recursive=False)
        except psutil.Error:
            return []
    else:
        candidates = []
        for pid in psutil.pids():
            if pid == me:
                continue
            try:
                candidates.append(psutil.Process(pid))
            except psutil.Error:
                continue
    found = []
    for proc in candidates:
        try:
            if proc.environ().get(SERVER_TAG_ENV) == tag:
                found.append(proc)
        except psutil.Error:
            continue  # gone, a zombie, or not ours to read
    return found


def end_tagged(tags: set[str] | list[str], grace_s: float = 1.0) -> list[int]:
    """SIGTERM every live process carrying one of ``tags``, wait ``grace_s``, SIGKILL the rest.

    Synchronous (psutil); returns the PIDs that survived even SIGKILL (residue).
    """
    procs = [p for tag in tags for p in find_tagged(tag)]
    procs = [p for p in procs if _running(p)]
    if not procs:
        return []
    for proc in procs:
        _signal(proc, signal.SIGTERM)
        _signal(proc, signal.SIGCONT)  # a stopped process cannot act on TERM
    alive = _wait(procs, grace_s)
    for proc in alive:
        _signal(proc, signal.SIGKILL)
    return [p.pid for p in _wait(alive, 1.0)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal(proc: psutil.Process, sig: int) -> None:
    try:
        proc.send_signal(sig)  # psutil checks the PID was not reused
    except psutil.Error:
        pass


def _wait(procs: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while True:
        procs = [p for p in procs if _running(p)]
        if not procs or time.monotonic() >= deadline:
            return procs
        time.sleep(0.02)


def _end_all_at_exit() -> None:
    if _live_tags:
        end_tagged(set(_live_tags), grace_s=0.5)
