"""The queue pane: steering and follow-up messages and where each one is.

queued -> applied (injected into the running turn, or started a new one) or
returned (the turn was interrupted; the text went back into the input). Hidden
while empty; settled entries are cleared when the user starts a new turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from agent_tui.ui.safe_text import first_line
from agent_tui.ui.states import STEER_LOOKS, role_style


@dataclass
class QueueItem:
    id: str
    kind: str
    state: str
    text: str


class QueuePane(Static):
    DEFAULT_CSS = """
    QueuePane { height: auto; max-height: 8; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    QueuePane.-empty { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.items: dict[str, QueueItem] = {}

    def on_mount(self) -> None:
        self.border_title = "queued messages"

    def steer_state(self, id: str, kind: str, state: str, text: str) -> None:
        item = self.items.get(id)
        if item is None:
            self.items[id] = QueueItem(id, kind, state, text)
        else:
            item.state = state
            item.text = text or item.text
        self._render_items()

    def clear_settled(self) -> None:
        self.items = {k: v for k, v in self.items.items() if v.state == "queued"}
        self._render_items()

    def clear_all(self) -> None:
        self.items = {}
        self._render_items()

    @property
    def queued(self) -> int:
        return sum(1 for item in self.items.values() if item.state == "queued")

    def _render_items(self) -> None:
        self.set_class(not self.items, "-empty")
        variables = self.app.theme_variables
        out = Text(no_wrap=True, overflow="ellipsis")
        width = max((len(STEER_LOOKS[i.state].word) for i in self.items.values()), default=0)
        for item in self.items.values():
            look = STEER_LOOKS.get(item.state) or STEER_LOOKS["queued"]
            if out:
                out.append("\n")
            out.append(f"{look.symbol} {look.word:<{width}}", style=role_style(variables, look.role, bold=True))
            out.append("  ")
            out.append("follow-up" if item.kind == "follow_up" else "steer    ", style="bold")
            out.append("  ")
            out.append(first_line(item.text, 300))
        self.update(out)
        waiting = self.queued
        self.border_title = f"queued messages: {waiting} waiting" if waiting else "queued messages"
