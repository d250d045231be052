"""How times are shown: the rewind menu's message times, a tool call's duration."""

from __future__ import annotations

import time


def default_format_time(epoch: float) -> str:
    """Local time: "14:03" today, "Mar 02 14:03" on another day."""
    then = time.localtime(epoch)
    now = time.localtime()
    if then[:3] == now[:3]:
        return time.strftime("%H:%M", then)
    return time.strftime("%b %d %H:%M", then)


def format_duration(seconds: float) -> str:
    """"0.4s", "12s", "3m05s", "1h02m": short, and as precise as is worth reading."""
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f}s"
    if seconds < 60:
        return f"{int(seconds)}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
