"""Sizes for people: the one byte formatter (binary units, as the limits are set)."""

from __future__ import annotations


def format_bytes(n: int) -> str:
    """``512 bytes``, ``1.5 KiB``, ``2 MiB``, ``3.2 GiB``: one decimal, none when whole."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"
