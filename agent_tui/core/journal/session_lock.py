"""One session, one agent: an OS lock on a file in the session's folder.

An agent process that opens a session takes ``flock(LOCK_EX)`` on ``<session>/lock``
and holds it while the session is open (closing the session, or the process ending
in any way, a ``kill -9`` included, lets it go: the kernel drops the lock with the
last descriptor). The descriptor is close-on-exec, so the commands the agent starts
never hold it. The holder writes its pid into the file, for the one who finds the
session taken to name it. The file is never removed: a new file at the same name
while another process holds the old one would let two agents in.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

LOCK_NAME = "lock"
# How long a process that finds the session taken waits for the holder's pid (the
# holder writes it right after it takes the lock).
PID_WAIT_S = 0.5


class SessionHeld(Exception):
    """The session is open in another agent process (``pid``: None when it did not say)."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        self.folder = folder
        self.pid = pid
        who = f"pid {pid}" if pid is not None else "a process that did not say its pid"
        super().__init__(f"session {folder.name} is open in another agent-tui ({who})")


class SessionLock:
    """The lock of one session's folder, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path) -> SessionLock:
        """Take the session's lock, or raise :class:`SessionHeld` naming the holder."""
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        try:
            _take(fd, folder)
        except BaseException:
            os.close(fd)
            raise
        try:
            # One write of a fixed width: a reader sees the old pid or the new one.
            os.pwrite(fd, f"{os.getpid():>10}\n".encode(), 0)
            os.ftruncate(fd, 11)
        except OSError:
            pass  # the lock holds without it; the other process cannot name us
        return cls(folder, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let the session go (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # no pid of a process that no longer holds it
        except OSError:
            pass
        os.close(fd)  # the lock goes with the descriptor


def _take(fd: int, folder: Path) -> None:
    """flock, or SessionHeld with the holder's pid. A holder that has not written its
    pid yet (or is letting go) is waited for a moment, trying the lock again."""
    deadline = time.monotonic() + PID_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
        try:
            text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
        except OSError:
            text = ""
        if text.isdigit():
            raise SessionHeld(folder, int(text))
        if time.monotonic() > deadline:
            raise SessionHeld(folder, None)
        time.sleep(0.01)
