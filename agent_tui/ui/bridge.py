"""The bridge between the core's thread and the UI's loop.

The core calls :meth:`EventInbox.emit` on its own thread. Events are kept in order in
a locked list; the first event after a drain posts one :class:`CoreEventsReady`
message to the app, so a flood of deltas costs the UI one message per batch and
never queues up ahead of keystrokes. On the UI side :meth:`EventInbox.drain` takes
the batch and merges neighbouring text and output deltas.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.message import Message

from agent_tui.core.events import Event, TextDelta, ToolOutput


class CoreEventsReady(Message):
    """Events from the core are waiting in the inbox (posted from the core's thread)."""


class EventInbox:
    def __init__(self, nudge: Callable[[], object]) -> None:
        self._nudge = nudge
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._nudged = False
        self.received = 0  # events emitted so far (for tests and diagnostics)
        self.drained = 0  # events handed to the UI so far, before merging

    def emit(self, event: Event) -> None:
        """Any thread: keep ``event`` and make sure the UI is told once."""
        with self._lock:
            self._events.append(event)
            self.received += 1
            if self._nudged:
                return
            self._nudged = True
        self._nudge()

    def drain(self) -> list[Event]:
        """UI thread: every event since the last drain, in order, deltas merged."""
        with self._lock:
            events, self._events = self._events, []
            self._nudged = False
            self.drained += len(events)
        return coalesce(events)


def coalesce(events: list[Event]) -> list[Event]:
    """Merge runs of text deltas (same turn and parent) and of tool output (same call)."""
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        if (
            isinstance(event, TextDelta)
            and isinstance(last, TextDelta)
            and last.turn_id == event.turn_id
            and last.parent_tool_use_id == event.parent_tool_use_id
        ):
            out[-1] = last.model_copy(update={"text": last.text + event.text})
        elif (
            isinstance(event, ToolOutput)
            and isinstance(last, ToolOutput)
            and last.tool_use_id == event.tool_use_id
        ):
            out[-1] = last.model_copy(update={"text": last.text + event.text})
        else:
            out.append(event)
    return out
