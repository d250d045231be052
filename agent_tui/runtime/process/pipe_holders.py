"""Who holds a run's output pipe: the processes with a descriptor on its inode."""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a process is first looked at (about 10 ms)
    import psutil

from agent_tui.core.calls.tool import Residue
from agent_tui.runtime.process.discovery import cmdline_of


def _pipe_holders(inode: int) -> list[Residue]:
    """Processes (other than us) with a descriptor on the pipe ``inode``."""
    import psutil
    me = os.getpid()
    holders: list[Residue] = []
    for pid in psutil.pids():
        if pid != me and _holds(pid, inode):
            try:
                holders.append(Residue(pid=pid, cmdline=cmdline_of(psutil.Process(pid))))
            except psutil.Error:
                pass
    return holders


def _holds(pid: int, inode: int) -> bool:
    """Whether ``pid`` has a descriptor on the pipe ``inode``."""
    target = f"pipe:[{inode}]"
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"{fd_dir}/{fd}") == target:
                return True
        except OSError:
            continue
    return False
