"""How times are shown (the rewind menu's message times)."""

from __future__ import annotations

import time


def default_format_time(epoch: float) -> str:
    """Local time: "14:03" today, "Mar 02 14:03" on another day."""
    then = time.localtime(epoch)
    now = time.localtime()
    if then[:3] == now[:3]:
        return time.strftime("%H:%M", then)
    return time.strftime("%b %d %H:%M", then)
