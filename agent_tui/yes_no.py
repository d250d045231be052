"""A yes or no a person typed: the one table of words read as true and as false."""

from __future__ import annotations

YES = ("true", "yes", "y", "1", "on")
NO = ("false", "no", "n", "0", "off")


def yes_no(text: str) -> bool | None:
    """True or False for a word of :data:`YES` or :data:`NO` (any case); None otherwise."""
    word = text.lower()
    return True if word in YES else False if word in NO else None
