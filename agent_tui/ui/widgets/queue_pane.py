"""The queue pane: steering and follow-up messages and where each one is.

queued -> applied (injected into the running turn, or started a new one), returned
(the turn was interrupted; the text went back into the input), or removed (taken
back). Hidden while empty; settled entries are cleared when the user starts a new
turn.

Queued items can be changed before they are applied: Shift+Tab from the input (or a
click) selects them; ↑ ↓ pick, Enter or ``e`` edits, ``d`` or Delete removes, Esc goes
back to the input. An edit or removal is only asked of the core (``EditQueued`` /
``RemoveQueued``): the item says "editing…" / "removing…" until the core answers, and
an item the core applied first can no longer be changed (it shows as applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from agent_tui.protocol.states import SteerKind, SteerStatus
from agent_tui.ui.render.safe_text import first_line
from agent_tui.ui.render.states import STEER_LOOKS, Look, role_style


class Pending(StrEnum):
    """What the user asked of a queued item that the core has not answered yet."""

    NONE = "none"
    EDIT = "edit"
    REMOVE = "remove"


WAITING = (SteerStatus.QUEUED, SteerStatus.EDITED)  # not applied yet: can be changed


@dataclass
class QueueItem:
    id: str
    kind: str
    state: str
    text: str
    pending: Pending = Pending.NONE

    @property
    def waiting(self) -> bool:
        return self.state in WAITING


class QueuePane(Static, can_focus=True):
    DEFAULT_CSS = """
    QueuePane { height: auto; max-height: 8; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    QueuePane.-empty { display: none; }
    QueuePane:focus { border-left: thick $accent; }
    """

    BINDINGS = [
        Binding("up", "move(-1)", "previous", show=False),
        Binding("down", "move(1)", "next", show=False),
        Binding("enter,e", "edit", "edit", show=False),
        Binding("d,delete,backspace", "remove", "remove", show=False),
        Binding("escape", "leave", "back to the input", show=False),
    ]

    class EditRequested(Message):
        def __init__(self, item: QueueItem) -> None:
            super().__init__()
            self.item = item

    class RemoveRequested(Message):
        def __init__(self, item: QueueItem) -> None:
            super().__init__()
            self.item = item

    class Leave(Message):
        """Back to the input."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.items: dict[str, QueueItem] = {}
        self.cursor: str | None = None  # the selected item's id

    def on_mount(self) -> None:
        self.border_title = "queued messages"

    def steer_state(self, id: str, kind: str, state: str, text: str) -> QueueItem:
        """The core's news of an item; returns the item as it now is."""
        item = self.items.get(id)
        if item is None:
            item = self.items[id] = QueueItem(id, kind, state, text)
        else:
            item.state = state
            item.text = text or item.text
            item.pending = Pending.NONE  # whatever was asked, the core has answered
        self._render_items()
        return item

    def mark(self, id: str, pending: Pending) -> None:
        item = self.items.get(id)
        if item is not None:
            item.pending = pending
            self._render_items()

    def clear_settled(self) -> None:
        self.items = {k: v for k, v in self.items.items() if v.waiting}
        self._render_items()

    def clear_all(self) -> None:
        self.items = {}
        self._render_items()

    @property
    def queued(self) -> int:
        return sum(1 for item in self.items.values() if item.waiting)

    def newest_waiting(self) -> QueueItem | None:
        waiting = [i for i in self.items.values() if i.waiting and i.pending is Pending.NONE]
        return waiting[-1] if waiting else None

    # -- selecting ------------------------------------------------------------------

    def _waiting_ids(self) -> list[str]:
        return [i.id for i in self.items.values() if i.waiting]

    def on_focus(self) -> None:
        ids = self._waiting_ids()
        if self.cursor not in ids:
            self.cursor = ids[-1] if ids else None
        self._render_items()

    def on_blur(self) -> None:
        self._render_items()

    def action_move(self, step: int) -> None:
        ids = self._waiting_ids()
        if not ids:
            return
        at = ids.index(self.cursor) if self.cursor in ids else len(ids) - 1
        self.cursor = ids[max(0, min(len(ids) - 1, at + step))]
        self._render_items()

    def _selected(self) -> QueueItem | None:
        item = self.items.get(self.cursor) if self.cursor else None
        return item if item is not None and item.waiting and item.pending is Pending.NONE else None

    def action_edit(self) -> None:
        item = self._selected()
        if item is not None:
            self.post_message(self.EditRequested(item))

    def action_remove(self) -> None:
        item = self._selected()
        if item is not None:
            self.post_message(self.RemoveRequested(item))

    def action_leave(self) -> None:
        self.post_message(self.Leave())

    # -- drawing ------------------------------------------------------------------------

    def _render_items(self) -> None:
        self.set_class(not self.items, "-empty")
        variables = self.app.theme_variables
        out = Text(no_wrap=True, overflow="ellipsis")
        looks = {id: self._look(item) for id, item in self.items.items()}
        width = max((len(look.word) for look in looks.values()), default=0)
        for item in self.items.values():
            look = looks[item.id]
            if out:
                out.append("\n")
            selected = self.has_focus and item.id == self.cursor
            out.append("› " if selected else "  ", style="bold")
            out.append(f"{look.symbol} {look.word:<{width}}", style=role_style(variables, look.role, bold=True))
            out.append("  ")
            out.append("follow-up" if item.kind == SteerKind.FOLLOW_UP else "steer    ", style="bold")
            out.append("  ")
            out.append(first_line(item.text, 300), style="reverse" if selected else "")
        self.update(out)
        waiting = self.queued
        hint = " · Shift+Tab to edit" if waiting and not self.has_focus else (
            " · ↑↓ pick, e edit, d remove, esc back" if self.has_focus else "")
        self.border_title = (f"queued messages: {waiting} waiting" if waiting else "queued messages") + hint

    @staticmethod
    def _look(item: QueueItem) -> Look:
        if item.pending is Pending.EDIT:
            return STEER_LOOKS["editing"]
        if item.pending is Pending.REMOVE:
            return STEER_LOOKS["removing"]
        return STEER_LOOKS.get(item.state) or STEER_LOOKS["queued"]
