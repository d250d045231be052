"""The bridge between the core's thread and the UI's loop.

The core calls :meth:`EventInbox.emit` on its own thread. Events are kept in order in
a locked list; the first event after a drain posts one :class:`CoreEventsReady`
message to the app, so a burst of events costs the UI one message and never queues
up ahead of keystrokes. Text and output deltas post nothing: they are shown only when
the app flushes (a few times a second), and the flush drains the inbox first, so a
stream wakes the UI at that pace however fast it runs. Every other event (a state
change, a prompt) wakes it at once, and drains the deltas before it, in order. On
the UI side :meth:`EventInbox.drain` takes the batch and merges neighbouring text and
output deltas.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from agent_tui.protocol import Event


class CoreEventsReady(Message):
    """Events from the core are waiting in the inbox (posted from the core's thread)."""


# Events that wait for the app's next flush instead of waking the UI.
QUIET = frozenset({"text_delta", "thinking_delta", "tool_output"})


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
            if self._nudged or event.type in QUIET:
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
    """Merge runs of text or thinking deltas (same turn and parent) and of tool output
    (same call).

    Events are told apart by their ``type`` tag (the UI does not import the core's
    models before its first frame); a run's texts are joined once, at its end.
    """
    out: list[Event] = []
    run: list[str] = []  # the texts of the run that ends with out[-1]

    def close_run() -> None:
        if len(run) > 1:
            out[-1] = out[-1].model_copy(update={"text": "".join(run)})
        run.clear()

    for event in events:
        last = out[-1] if out else None
        kind = event.type
        if last is not None and kind == last.type and (
            (kind in ("text_delta", "thinking_delta") and last.turn_id == event.turn_id
             and last.parent_tool_use_id == event.parent_tool_use_id)
            or (kind == "tool_output" and last.tool_use_id == event.tool_use_id)
        ):
            run.append(event.text)
            continue
        if run:
            close_run()
        out.append(event)
        if kind in ("text_delta", "thinking_delta", "tool_output"):
            run.append(event.text)
    if run:
        close_run()
    return out
