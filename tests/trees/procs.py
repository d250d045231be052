"""Find test processes by a unique marker in their argv, with psutil (no OS mocks).

Every test tree puts its marker into each process's argv (``exec -a MARKER-x sleep``
or ``bash -c SCRIPT MARKER``), so "nothing left" is checked against the real process
table, independent of what the code under test claims.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator

import psutil
import pytest


def new_marker() -> str:
    return f"atuitest-{uuid.uuid4().hex[:12]}"


def procs_with(marker: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose command line mentions ``marker``.

    The command lines are read from /proc directly (a zombie's is empty), and only the
    matches become psutil processes: a scan costs about 2 ms, not 15.
    """
    needle = marker.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        if needle not in raw:
            continue
        try:
            proc = psutil.Process(int(entry.name))
            status = proc.status()
        except psutil.Error:
            continue
        if status == psutil.STATUS_ZOMBIE:
            continue
        parts = [p.decode(errors="replace") for p in raw.rstrip(b"\0").split(b"\0")]
        proc.info = {"cmdline": parts, "status": status}  # as process_iter would set it
        found.append(proc)
    return found


def named(name: str) -> list[psutil.Process]:
    """Live processes whose argv[0] is exactly ``name`` (set with ``exec -a``)."""
    return [p for p in procs_with(name) if p.info["cmdline"][0] == name]


def wait_for_procs(
    marker: str, count: int, timeout: float = 5.0, *, exact: bool = False
) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while True:
        found = named(marker) if exact else procs_with(marker)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def kill_marked(marker: str) -> list[str]:
    """Teardown: SIGKILL whatever still carries the marker; return their command lines."""
    left = procs_with(marker)
    lines = []
    for proc in left:
        try:
            lines.append(" ".join(proc.cmdline()))
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    return lines


def our_zombies() -> list[int]:
    """Zombie children of this process: exit statuses nobody collected."""
    me = psutil.Process(os.getpid())
    out = []
    for kid in me.children():
        try:
            if kid.status() == psutil.STATUS_ZOMBIE:
                out.append(kid.pid)
        except psutil.Error:
            pass
    return out


def rss() -> int:
    return psutil.Process(os.getpid()).memory_info().rss


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique argv marker; the test fails if any marked process outlives it,
    or if it leaves zombie children of the test process behind."""
    zombies_before = set(our_zombies())
    m = new_marker()
    yield m
    left = kill_marked(m)
    assert not left, f"processes left behind: {left}"
    new_zombies = set(our_zombies()) - zombies_before
    assert not new_zombies, f"zombie children left unreaped: {sorted(new_zombies)}"
