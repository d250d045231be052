"""The menu above the input: slash commands as ``/`` is typed, files after ``@``.

Never focused: the input keeps the keys and hands ↑ ↓ Tab Enter Esc here while the
menu is open (see ``ui/input/completion.py``); a click picks an item too. Hidden when closed.

The first screenful of items is laid out and painted first, the rest right after:
measuring every option before the first paint would double the time to first results.
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

    FIRST = 12  # items laid out before the first paint (the menu shows 10 at most)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="-closed")
        self.items: list[Suggestion] = []
        self.empty_text = ""
        self._shown = 0  # which show() the options are of (a later one drops the rest)

    @property
    def is_open(self) -> bool:
        return not self.has_class("-closed")

    def show(self, items: list[Suggestion], *, title: str, empty: str) -> None:
        """Open with ``items`` (the first highlighted), or ``empty`` when there are none."""
        if (self.is_open and [i.value for i in items] == [i.value for i in self.items]
                and (title, empty) == (self.border_title, self.empty_text)):
            return  # the same again (a listing that ended): no new layout, the highlight stays
        self.items = list(items)
        self.empty_text = empty
        self.clear_options()
        self._shown += 1
        if items:
            self.add_options(self._options_of(0, self.FIRST))
            self.highlighted = 0
            if len(items) > self.FIRST:
                self.call_after_refresh(self._add_rest, self._shown)
        else:
            self.add_option(Option(Text(empty, style="dim italic"), disabled=True))
        self.border_title = title
        self.remove_class("-closed")

    def _options_of(self, start: int, end: int | None) -> list[Option]:
        return [Option(item.prompt, id=str(i)) for i, item in enumerate(self.items[start:end], start)]

    def _add_rest(self, shown: int) -> None:
        if shown == self._shown and self.items:
            self.add_options(self._options_of(self.FIRST, None))

    def close(self) -> None:
        self.add_class("-closed")
        self.items = []
        self._shown += 1

    def move(self, step: int) -> None:
        if not self.items:
            return
        at = self.highlighted if self.highlighted is not None else -1
        self.highlighted = max(0, min(self.option_count - 1, at + step))  # (all laid out, or soon)

    @property
    def current(self) -> Suggestion | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Picked(self.items[int(event.option.id)]))
