"""The one way agent-tui replaces a file: whole or not at all, and durably.

The new content goes to a temporary file beside the target (``.agent-tui.<hex>.tmp``,
created exclusively and never through a symlink), is written out and fsynced, and is
renamed over the target; then the folder is fsynced so the rename survives a crash.
A reader sees the old file or the new one, never a part. A symlink at the target is
replaced, never written through: rename does not follow it. A process killed mid-write
leaves only its temporary file, which names the writer's pid: the checkpoint layer's
next snapshot removes such files once their writer is gone.

The folder may be given as an open directory descriptor: then every step is relative
to it (``dir_fd``), so a folder swapped for a link while we work cannot redirect the
write. This is how the file tools stay inside the workspace (``files/workspace.py``).
Given as a path, the folder is opened once and used the same way.
"""

from __future__ import annotations

import fnmatch
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_tui import crash_points

#: The temporary files, as an ignore pattern (snapshots leave them out).
TMP_PATTERN = ".agent-tui.*.tmp"
_WRITER = re.compile(r"\.agent-tui\.(\d+)\.[0-9a-f]+\.tmp")

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_atomic(
    folder: Path | int,
    name: str,
    data: bytes,
    *,
    mode: int = 0o600,
    exact_mode: bool = False,
) -> None:
    """Replace (or create) ``name`` in ``folder`` with ``data``.

    The file is created with ``mode`` less the umask; with ``exact_mode`` it gets
    ``mode`` itself (to keep the bits of the file it replaces).
    """
    with _folder(folder) as dir_fd:
        tmp = _tmp_name()
        fd = os.open(tmp, _CREATE, mode, dir_fd=dir_fd)
        try:
            try:
                if exact_mode:
                    os.fchmod(fd, mode)  # the umask applied at creation
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            crash_points.reached(f"atomic:{name}")  # a crash here leaves only the temp file
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            _discard(tmp, dir_fd)
            raise
        _fsync_folder(dir_fd)


def link_atomic(folder: Path | int, name: str, target: str) -> None:
    """Replace (or create) ``name`` in ``folder`` with a symlink to ``target``."""
    with _folder(folder) as dir_fd:
        tmp = _tmp_name()
        os.symlink(target, tmp, dir_fd=dir_fd)
        try:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            _discard(tmp, dir_fd)
            raise
        _fsync_folder(dir_fd)


def _tmp_name() -> str:
    # short (any valid name still fits), and names its writer: a crash leaves it behind
    return f".agent-tui.{os.getpid()}.{secrets.token_hex(6)}.tmp"


def is_temp(name: str) -> bool:
    """Whether ``name`` (a path's last part) is one of our temporary files."""
    return fnmatch.fnmatchcase(name.rpartition("/")[2], TMP_PATTERN)


def left_by_dead_process(name: str) -> bool:
    """A temporary file whose writer is gone (killed mid-write): safe to remove.

    Names without a writer's pid, or of a writer still alive, are never taken for stale.
    """
    match = _WRITER.fullmatch(name.rpartition("/")[2])
    if match is None or int(match.group(1)) == os.getpid():
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


@contextmanager
def _folder(folder: Path | int) -> Iterator[int]:
    if isinstance(folder, int):
        yield folder
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def _discard(tmp: str, dir_fd: int) -> None:
    try:
        os.unlink(tmp, dir_fd=dir_fd)
    except OSError:
        pass


def _fsync_folder(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)  # make the rename durable; best effort (some file systems refuse)
    except OSError:
        pass
