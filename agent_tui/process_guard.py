"""What other processes of the same user may see of the agent process.

The API key is in the agent's own environment (the SDK reads it from there), and any
process of the same user can read ``/proc/<agent pid>/environ``, including a command
the model runs. Marking the process not dumpable (``prctl(PR_SET_DUMPABLE, 0)``)
makes its ``/proc`` files owned by root and refuses ptrace to other processes of the
user, so that file is closed to them; the agent itself is unaffected, and children
are dumpable again after their ``exec``. It also means no core dump, and no
``py-spy``-style attaching: ``AGENT_TUI_DEBUGGABLE=1`` leaves the process as it is.
Root can read it either way.
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
OPT_OUT_ENV = "AGENT_TUI_DEBUGGABLE"


def prctl(option: int, arg: int = 0) -> int:
    """Linux ``prctl(option, arg)`` through the C library already loaded; raises
    OSError / AttributeError where there is none."""
    return int(ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0))


def keep_environ_private() -> bool:
    """Mark this process not dumpable (Linux); True if it now is not."""
    if not sys.platform.startswith("linux") or os.environ.get(OPT_OUT_ENV) == "1":
        return False
    try:
        return prctl(PR_SET_DUMPABLE, 0) == 0
    except (OSError, AttributeError):
        return False  # no libc prctl: nothing to do, nothing lost


def dumpable() -> bool | None:
    """Whether this process is dumpable (None where that cannot be asked)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return prctl(PR_GET_DUMPABLE) != 0
    except (OSError, AttributeError):
        return None
