"""Changing the queue from the app (a part of ``ui/app/main.py``): edit or remove a queued
steer or follow-up in the queue pane, and Up on an empty input pulls the newest one
back into the input.

Every change is a request to the core, which alone knows whether the item is still
queued: ``EditQueued`` is answered ``edited`` (or ``applied`` / ``returned`` when it
came too late), ``RemoveQueued`` ``removed``. An edit that came too late is not lost:
its text goes back into the input. A pulled-back item goes into the input only once
the core says it was removed (an item applied first stays applied).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from agent_tui.protocol.states import SteerStatus
from agent_tui.ui.widgets.queue_pane import Pending, QueuePane

if TYPE_CHECKING:
    from agent_tui.protocol import Op, SteerState
    from agent_tui.ui.app.screen_slots import ScreenSlot
    from agent_tui.ui.widgets.prompt_input import PromptInput
    from agent_tui.ui.widgets.status_line import StatusLine


class QueueHost(Protocol):
    """What the queue editor uses of the app."""

    queue_pane: QueuePane
    prompt: PromptInput
    status: StatusLine
    queue_edit_slot: ScreenSlot[Any]

    def submit(self, op: Op) -> None: ...


class QueueEditor:
    """The queue pane's edits and removals, and Up on an empty input."""

    def __init__(self, app: QueueHost) -> None:
        self.app = app
        self.edits: dict[str, str] = {}  # id -> the text an edit asked for, until answered
        self.pulled_back: set[str] = set()  # ids whose removal puts the text into the input

    def edit_requested(self, event: QueuePane.EditRequested) -> None:
        from agent_tui.ui.screens.queue_edit import QueueEditScreen

        item = event.item
        if self.app.queue_edit_slot.is_open:
            return

        def edited(text: str | None) -> None:
            current = self.app.queue_pane.items.get(item.id)
            if text is None or text == item.text:
                self.app.queue_pane.focus()
                return
            if current is None or not current.waiting:
                # Applied (or returned) while it was being edited: keep what was typed.
                self.app.prompt.put_back(text)
                self.app.status.set_notice("info", "that message was applied before the edit: "
                                               "your edit is in the input")
                self.app.prompt.focus()
                return
            self.edits[item.id] = text
            self.app.queue_pane.mark(item.id, Pending.EDIT)
            from agent_tui.protocol import EditQueued

            self.app.submit(EditQueued(id=item.id, text=text))
            self.app.queue_pane.focus()

        self.app.queue_edit_slot.open(QueueEditScreen(item.id, item.kind, item.text), edited)

    def remove_requested(self, event: QueuePane.RemoveRequested) -> None:
        self.app.queue_pane.mark(event.item.id, Pending.REMOVE)
        from agent_tui.protocol import RemoveQueued

        self.app.submit(RemoveQueued(id=event.item.id))

    def focus_queue(self) -> None:
        """Alt+Up: the queued messages, to edit or remove one."""
        if self.app.queue_pane.display:
            self.app.queue_pane.focus()

    def leave(self) -> None:
        self.app.prompt.focus()

    def pull_back_newest(self) -> bool:
        """Up on an empty input: the newest queued item back into it (once the core
        confirms it was taken off the queue). False when nothing is queued."""
        item = self.app.queue_pane.newest_waiting()
        if item is None:
            return False
        self.pulled_back.add(item.id)
        self.app.queue_pane.mark(item.id, Pending.REMOVE)
        from agent_tui.protocol import RemoveQueued

        self.app.submit(RemoveQueued(id=item.id))
        return True

    def answered(self, event: SteerState) -> None:
        """The core's answer about a queued item (after the pane has shown it)."""
        asked = self.edits.pop(event.id, None)
        if event.state is SteerStatus.REMOVED and event.id in self.pulled_back:
            self.pulled_back.discard(event.id)
            self.app.prompt.put_back(event.text)
            self.app.prompt.focus()
        elif event.state in (SteerStatus.APPLIED, SteerStatus.RETURNED):
            self.pulled_back.discard(event.id)
            if asked is not None and asked != event.text and event.state is SteerStatus.APPLIED:
                self.app.prompt.put_back(asked)
                self.app.status.set_notice("info", "that message was applied before the edit reached it: "
                                               "your edit is in the input")
