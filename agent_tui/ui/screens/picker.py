"""A list to choose one item from (a model, a saved session, a theme): ↑ ↓ move,
typing filters, Enter chooses, Esc closes without a choice. Dismissed with the
chosen item's id, or None."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class PickItem:
    id: str
    prompt: Text
    search: str = ""  # what typing matches against (the prompt's text when empty)


class PickerScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > #dialog {
        width: 96%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    PickerScreen #intro { color: $text-muted; }
    PickerScreen #filter { margin: 1 0 0 0; }
    PickerScreen #items { height: auto; max-height: 16; margin: 1 0 0 0; }
    PickerScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("escape", "close", "close", show=False),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
    ]

    def __init__(self, title: str, intro: str, items: list[PickItem], *, empty: str = "nothing to choose from",
                 current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.intro = intro
        self.items = list(items)
        self.empty = empty
        self.current = current
        self.shown: list[PickItem] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.intro), id="intro")
            yield Input(placeholder="type to filter", id="filter")
            yield OptionList(id="items")
            yield Static(Text("↑↓ choose   enter pick   esc close"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = self.title_text
        self._fill("")
        self.query_one("#filter", Input).focus()

    def _fill(self, query: str) -> None:
        q = query.lower().strip()
        self.shown = [i for i in self.items if q in (i.search or i.prompt.plain).lower()]
        options = self.query_one("#items", OptionList)
        if not self.shown:
            options.set_options([Option(Text(self.empty if not q else "nothing matches", style="dim"),
                                        disabled=True)])
            return
        options.set_options([Option(item.prompt, id=item.id) for item in self.shown])
        at = next((k for k, item in enumerate(self.shown) if item.id == self.current), 0)
        options.highlighted = at

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def action_move(self, step: int) -> None:
        options = self.query_one("#items", OptionList)
        if self.shown:
            at = options.highlighted if options.highlighted is not None else -1
            options.highlighted = max(0, min(len(self.shown) - 1, at + step))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one("#items", OptionList)
        if self.shown and options.highlighted is not None:
            self.dismiss(self.shown[options.highlighted].id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
