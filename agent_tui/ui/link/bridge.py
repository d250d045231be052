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
        delta = _delta(event)
        if delta is not None and out and delta[0] == _key(out[-1]):
            run.append(delta[1])
            continue
        if run:
            close_run()
        out.append(event)
        if delta is not None:
            run.append(delta[1])
    if run:
        close_run()
    return out


def _delta(event: Event) -> tuple[tuple[str, str, str | None], str] | None:
    """A delta's run key (its kind, and its turn and parent, or its call) and its text;
    None for an event that never merges."""
    if event.type == "text_delta" or event.type == "thinking_delta":
        return (event.type, event.turn_id, event.parent_tool_use_id), event.text
    if event.type == "tool_output":
        return (event.type, event.tool_use_id, None), event.text
    return None


def _key(event: Event) -> tuple[str, str, str | None] | None:
    delta = _delta(event)
    return delta[0] if delta is not None else None
