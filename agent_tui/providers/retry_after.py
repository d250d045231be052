"""How long a server asks us to wait before trying again (``retry-after-ms``, or
``retry-after`` in seconds or as an HTTP date), for every wire format."""

from __future__ import annotations

import email.utils
import time
from typing import Any


def retry_after(headers: Any) -> float | None:
    """The wait in seconds the headers ask for (None: they do not say)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None  # neither seconds nor a date: not a wait we can honour
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None
