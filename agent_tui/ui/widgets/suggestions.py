"""The menu above the input: slash commands as ``/`` is typed, files after ``@``.

Never focused: the input keeps the keys and hands ↑ ↓ Tab Enter Esc here while the
menu is open (see ``ui/completion.py``); a click picks an item too. Hidden when closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Suggestion:
    value: str  # what goes into the input
    prompt: Text  # how the menu shows it
    data: Any = None


class SuggestionList(OptionList, can_focus=False):
    DEFAULT_CSS = """
    SuggestionList {
        height: auto;
        max-height: 12;
        border: round $accent 60%;
        padding: 0 1;
        margin: 0 0;
    }
    SuggestionList.-closed { display: none; }
    """

    class Picked(Message):
        """An item was clicked."""

        def __init__(self, suggestion: Suggestion) -> None:
            super().__init__()
            self.suggestion = suggestion

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-closed")
        self.items: list[Suggestion] = []
        self.empty_text = ""

    @property
    def is_open(self) -> bool:
        return not self.has_class("-closed")

    def show(self, items: list[Suggestion], *, title: str, empty: str) -> None:
        """Open with ``items`` (the first highlighted), or ``empty`` when there are none."""
        self.items = list(items)
        self.empty_text = empty
        self.clear_options()
        if items:
            self.add_options([Option(item.prompt, id=str(i)) for i, item in enumerate(items)])
            self.highlighted = 0
        else:
            self.add_option(Option(Text(empty, style="dim italic"), disabled=True))
        self.border_title = title
        self.remove_class("-closed")

    def close(self) -> None:
        self.add_class("-closed")
        self.items = []

    def move(self, step: int) -> None:
        if not self.items:
            return
        at = self.highlighted if self.highlighted is not None else -1
        self.highlighted = max(0, min(len(self.items) - 1, at + step))

    @property
    def current(self) -> Suggestion | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Picked(self.items[int(event.option.id)]))
