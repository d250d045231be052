"""The user's status line under the input: the first line their ``statusLine`` command
printed, with its colours (the command's runner has stripped every other escape).
Hidden while there is nothing to show."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class StatusCommandLine(Static):
    DEFAULT_CSS = """
    StatusCommandLine { height: 1; padding: 0 1; display: none; }
    """

    def show(self, text: str) -> None:
        self.display = bool(text)
        self.update(Text.from_ansi(text, no_wrap=True, overflow="ellipsis", end=""))
