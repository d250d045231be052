"""The help screen: every key and what it does (from ``ui.keys.HELP``), then every
slash command; it scrolls (arrows, PgUp / PgDn, the wheel) where the terminal is too
small to show it whole."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.ui.keys import HELP


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > #help {
        width: 90;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    BINDINGS = [Binding("escape,q,f1,question_mark", "close", "close")]

    def __init__(self, commands: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        super().__init__()
        self.commands = list(commands)  # (usage, what it does)

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for keys, what in HELP:
            table.add_row(Text(keys), Text(what))
        with VerticalScroll(id="help"):
            yield Static(table)
            if self.commands:
                commands = Table.grid(padding=(0, 2))
                commands.add_column(style="bold", no_wrap=True)
                commands.add_column()
                for usage, what in self.commands:
                    commands.add_row(Text(usage), Text(what))
                yield Static(Text("\ncommands (type / in the input, or Ctrl+P)", style="bold"))
                yield Static(commands)
            yield Static(Text("esc closes this help", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "keys"

    def action_close(self) -> None:
        self.dismiss(None)
