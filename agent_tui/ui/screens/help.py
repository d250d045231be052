"""The help screen: every key and what it does (from ``ui.input.keys.HELP``), then every
slash command; a page like the others (``info.py``), so it scrolls where the terminal
is too small to show it whole."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.binding import Binding

from agent_tui.ui.input.keys import HELP
from agent_tui.ui.screens.info import InfoScreen


def _table(rows: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for left, right in rows:
        table.add_row(Text(left), Text(right))
    return table


class HelpScreen(InfoScreen):
    BINDINGS = [Binding("escape,q,f1,question_mark", "close", "close")]

    def __init__(self, commands: Sequence[tuple[str, str]] = ()) -> None:
        parts: list[RenderableType] = [_table(HELP)]
        if commands:  # (usage, what it does)
            parts += [Text("\ncommands (type / in the input, or Ctrl+P)", style="bold"), _table(list(commands))]
        super().__init__("keys", Group(*parts))
