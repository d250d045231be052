"""One bounded reader for every configuration file a workspace or the user can hold.

Settings files, ``.mcp.json``, ``~/.claude.json``, command files and the trust record
all go through :func:`read_config`: a FIFO, a device or a symlink to ``/dev/zero``
planted in a cloned repository must neither hang start-up nor fill memory. The file
is opened without blocking, checked to be a regular file with ``fstat`` (on the
descriptor, so a swap between check and read changes nothing) and read up to a bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Bigger than any sane configuration file (``~/.claude.json`` grows with history:
#: callers that read it pass a larger bound).
MAX_BYTES = 1 << 20


class Unreadable(OSError):
    """The file exists but is not a configuration file we will read; ``str()`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def read_config(path: Path, *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``; FileNotFoundError when absent, :class:`Unreadable` when it
    is a folder, a special file (FIFO, device, socket) or bigger than ``limit``, any
    other OSError when it cannot be opened."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise Unreadable("is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(f"is a {_kind(st.st_mode)}, not a regular file (not read)")
        if st.st_size > limit:
            raise Unreadable(f"too big ({st.st_size} bytes; the limit is {limit})")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise Unreadable(f"too big (over {limit} bytes)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_config_text(path: Path, *, limit: int = MAX_BYTES) -> str:
    """:func:`read_config` decoded as UTF-8 (a BOM dropped); UnicodeDecodeError as is."""
    return read_config(path, limit=limit).decode("utf-8-sig")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"
