"""The bounds of one run: grace before SIGKILL, pipe drain, output kept and streamed."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DEFAULT_GRACE_S = 2.0
DEFAULT_DRAIN_S = 0.5


class RunLimits(BaseModel):
    """The bounds of one run. grace + kill_confirm + drain must fit the core's budget."""

    model_config = ConfigDict(frozen=True)

    grace_s: float = DEFAULT_GRACE_S  # SIGTERM -> SIGKILL
    kill_confirm_s: float = 1.0  # after SIGKILL, how long before it is called residue
    drain_s: float = DEFAULT_DRAIN_S  # after the leader is gone, how long the pipe may stay open
    head_bytes: int = 32 * 1024
    tail_bytes: int = 32 * 1024
    emit_interval_s: float = 0.05  # at most one output event per interval
    emit_max_bytes: int = 16 * 1024  # at most this much text per output event
