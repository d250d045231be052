"""A lone Esc, told at once: the stop key never waits for a sequence that is not coming.

Textual reads the terminal on its own thread and, after an ``ESC`` byte that ends what
one read returned, waits ``ESCAPE_DELAY`` for more bytes before it calls it the Esc key:
it cannot yet tell Esc from the start of an escape sequence (an arrow key, Alt+key).
Its input thread only looks at that deadline when ``select`` returns, at the latest
every 0.1 s, so an Esc pressed alone waited up to a tenth of a second, whatever the
delay was set to.

A terminal writes a key's whole escape sequence at once, so one read returns it whole;
an ``ESC`` that ends a read is the Esc key. With no delay the parser says so as soon as
the read is parsed (as crossterm and Ink decide: Codex's and Claude Code's terminals).
A user who sets ``ESCDELAY`` (a slow link that splits sequences) keeps Textual's wait.
"""

from __future__ import annotations

from collections.abc import Mapping


def lone_escape_at_once(environ: Mapping[str, str]) -> bool:
    """Make a lone ``ESC`` the Esc key at once, unless ``ESCDELAY`` chose a wait;
    returns whether it did."""
    if environ.get("ESCDELAY"):
        return False
    from textual import constants

    setattr(constants, "ESCAPE_DELAY", 0.0)  # read at each ESC by Textual's parser
    return True
