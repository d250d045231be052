"""The session's emit, guarded: a front end whose emit raises loses that event, never
the turn. Without the guard, the first event a broken front end chokes on would
escape from wherever the core emitted it (a stream read, a tool's end, the turn's
own error notice) and leave a turn that never records how it ended.

The user is told once per kind of event, through the same emit (a front end that
chokes on one kind of event usually takes the others); if that raises too, nothing
more can be told and the session goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_tui.protocol import Event, Notice, NoticeLevel


class GuardedEmit:
    def __init__(self, emit: Callable[[Event], None]) -> None:
        self.inner = emit
        self.failures = 0  # events a front end could not take
        self._told: set[str] = set()  # kinds of event already reported
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        try:
            self.inner(event)
        except Exception as exc:  # the front end's bug: the core goes on
            self._failed(event, exc)

    def _failed(self, event: Event, exc: Exception) -> None:
        kind = getattr(event, "type", type(event).__name__)
        with self._lock:
            self.failures += 1
            if kind in self._told:
                return
            self._told.add(kind)
        text = (f"a front end failed to show a {kind} event ({exc!r}); the session goes "
                "on and the journal keeps the whole story")
        try:
            self.inner(Notice(level=NoticeLevel.ERROR, text=text))
        except Exception:
            pass  # it cannot take notices either: nothing more can be told


def guarded(emit: Callable[[Event], None]) -> GuardedEmit:
    """``emit`` guarded, once (guarding a guarded emit returns it)."""
    return emit if isinstance(emit, GuardedEmit) else GuardedEmit(emit)
