"""The bounds of one run: grace before SIGKILL, pipe drain, output kept and streamed,
and what its cgroup allows (processes, memory) where commands run in cgroups."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

#: SIGTERM -> SIGKILL. Programs people run end within milliseconds of TERM (measured
#: here: a Python and a Node HTTP server 3 ms, pytest mid-test 7 ms, make mid-recipe
#: 1 ms); the grace is for one that saves its state first. A second Esc ends it at once.
DEFAULT_GRACE_S = 1.0
#: The most grace a settings file may give (``limits.graceSeconds``).
MAX_GRACE_S = 30.0
DEFAULT_DRAIN_S = 0.5
#: Tasks (processes and threads) one command may have at once: a fork bomb stops
#: there, far below the machine's PID space; a parallel build stays well under it.
DEFAULT_PIDS = 4096


def default_memory() -> int:
    """Memory one command may use: three quarters of the machine's, so a runaway
    command is killed in its cgroup before the machine (and the agent) run out."""
    try:  # the total psutil reads (MemTotal), without importing psutil (about 10 ms)
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = -1
    if total <= 0:
        import psutil

        total = psutil.virtual_memory().total
    return total * 3 // 4


class _Configured:
    """The per-command cgroup limits of this agent process (from settings ``limits``)."""

    pids: int | None = DEFAULT_PIDS
    memory: int | None = None  # None here: default_memory()
    memory_unlimited = False
    grace_s: float = DEFAULT_GRACE_S


def configure_limits(pids: int | str | None, memory: int | str | None,
                     grace_s: float | None = None) -> None:
    """Set the defaults every new run takes: a number, ``"max"`` (no limit) or None
    (the built-in default); the grace in seconds, or None (the default). Called once
    when a session is built from its settings."""
    _Configured.pids = None if pids == "max" else int(pids) if pids is not None else DEFAULT_PIDS
    _Configured.memory_unlimited = memory == "max"
    _Configured.memory = int(memory) if isinstance(memory, int) else None
    _Configured.grace_s = DEFAULT_GRACE_S if grace_s is None else grace_s


def _grace() -> float:
    return _Configured.grace_s


def _pids() -> int | None:
    return _Configured.pids


def _memory() -> int | None:
    if _Configured.memory_unlimited:
        return None
    return _Configured.memory or default_memory()


class RunLimits(BaseModel):
    """The bounds of one run. grace + kill_confirm + drain must fit the core's budget."""

    model_config = ConfigDict(frozen=True)

    grace_s: float = Field(default_factory=_grace)  # SIGTERM -> SIGKILL
    kill_confirm_s: float = 1.0  # after SIGKILL, how long before it is called residue
    drain_s: float = DEFAULT_DRAIN_S  # after the leader is gone, how long the pipe may stay open
    head_bytes: int = 32 * 1024
    tail_bytes: int = 32 * 1024
    emit_interval_s: float = 0.05  # at most one output event per interval
    emit_max_bytes: int = 16 * 1024  # at most this much text per output event
    pids: int | None = Field(default_factory=_pids)  # tasks in its cgroup; None: no limit
    memory: int | None = Field(default_factory=_memory)  # bytes; None: no limit
