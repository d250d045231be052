"""Reading a run's output pipe on the event loop, in few large pieces under a flood.

:class:`PipeReader` owns the read end of the pipe that the run's stdout and stderr
share: it hands every chunk to ``on_data``, pauses between wake-ups so a flood is read
in a few large reads, and knows whether end of file was reached (``complete``) or the
pipe was closed on us while someone still held the write end.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import time
from collections.abc import Callable

_READ_CHUNK = 1 << 20
# After a wake-up the reader waits before reading again, so the pipe fills meanwhile:
# a flood is read in a few large pieces, not thousands of 8 KB ones (each wake-up is
# Python code competing with the UI for the interpreter). The wait is the time the
# writer, at the rate just seen, takes to half-fill the pipe, at most _READ_PAUSE: a
# fast writer is never blocked on a full pipe, and output shows at most that late.
_READ_PAUSE = 0.005
_MIN_PAUSE = 0.0002
_F_GETPIPE_SZ = 1032
_PIPE_SIZE = 1 << 20  # a bigger pipe means fewer wake-ups under a flood
_F_SETPIPE_SZ = 1031


def open_pipe() -> tuple[int, int]:
    """A pipe for a run's output (read end, write end), made as large as allowed."""
    read_fd, write_fd = os.pipe()
    try:
        fcntl.fcntl(write_fd, _F_SETPIPE_SZ, _PIPE_SIZE)
    except OSError:
        pass  # the default size works, only slower under a flood
    return read_fd, write_fd


class PipeReader:
    """The read end of a run's output pipe, read on ``loop``. See the module docstring."""

    def __init__(
        self,
        read_fd: int,
        loop: asyncio.AbstractEventLoop,
        on_data: Callable[[bytes], None],
        on_close: Callable[[], None],
    ) -> None:
        self._fd: int | None = read_fd
        self._loop = loop
        self._on_data = on_data
        self._on_close = on_close
        self._resume: asyncio.TimerHandle | None = None
        self.inode = os.fstat(read_fd).st_ino
        self.eof: asyncio.Future[None] = loop.create_future()
        self.complete = False  # end of file was read: nothing was cut off
        try:
            self._size = fcntl.fcntl(read_fd, _F_GETPIPE_SZ)
        except OSError:
            self._size = 1 << 16
        self._last_wake = time.monotonic()
        os.set_blocking(read_fd, False)
        loop.add_reader(read_fd, self._on_readable)

    def _on_readable(self) -> None:
        fd = self._fd
        assert fd is not None
        got = 0
        for _ in range(4):  # a few reads per wake-up, then let others run
            try:
                data = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.close(eof=True)
                return
            got += len(data)
            self._on_data(data)
        now = time.monotonic()
        elapsed, self._last_wake = now - self._last_wake, now
        pause = _READ_PAUSE if got * _READ_PAUSE <= elapsed * self._size / 2 \
            else self._size / 2 * elapsed / got
        if pause >= _MIN_PAUSE:
            self._loop.remove_reader(fd)
            self._resume = self._loop.call_later(pause, self._resume_reading)

    def _resume_reading(self) -> None:
        self._resume = None
        if self._fd is not None:
            self._loop.add_reader(self._fd, self._on_readable)

    def close(self, *, eof: bool) -> None:
        """Stop reading and close our end (``eof``: because end of file was read)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        self._loop.remove_reader(fd)
        os.close(fd)
        self.complete = eof
        self._on_close()
        if not self.eof.done():
            self.eof.set_result(None)
