"""Crash points: the moments a crash trial may kill the agent, told on a side channel.

Off unless ``AGENT_TUI_CRASH_POINTS`` holds two inherited file descriptors, ``W,R``.
Then at each point (a journal write or fsync, a checkpoint's git command or atomic
file write, a compaction's summary request) the agent writes the point's name and a
newline to ``W`` and waits for one byte on ``R``: the trial (``bench/chaos_crash.py``)
answers, or SIGKILLs the agent right there. A channel that fails is dropped, and the
agent goes on.
"""

from __future__ import annotations

import os
import threading

ENV = "AGENT_TUI_CRASH_POINTS"

_lock = threading.Lock()
_channel: tuple[int, int] | None = None
_looked_in = 0  # the process that read the variable (a forked agent reads it again)


def reached(name: str) -> None:
    """Say ``name`` is about to happen; return once the trial lets it."""
    global _channel, _looked_in
    if _looked_in != os.getpid():
        _channel, _looked_in = _parse(os.environ.get(ENV, "")), os.getpid()
    if _channel is None:
        return
    with _lock:  # journal and checkpoint threads share the one channel
        channel = _channel
        if channel is None:
            return
        try:
            os.write(channel[0], name.encode("utf-8", "replace") + b"\n")
            os.read(channel[1], 1)
        except OSError:
            _channel = None


def _parse(value: str) -> tuple[int, int] | None:
    try:
        w, r = (int(part) for part in value.split(","))
    except ValueError:
        return None
    return w, r
