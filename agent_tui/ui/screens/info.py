"""A page to read (/cost, /permissions, /mcp, the help): it scrolls (arrows, PgUp /
PgDn, the wheel), Esc closes it."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class InfoScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    InfoScreen { align: center middle; }
    InfoScreen > #info {
        width: 100;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    BINDINGS = [Binding("escape,q,enter", "close", "close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="info"):
            yield Static(self.body, id="body")
            yield Static(Text("esc closes this page", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#info").border_title = self.title_text

    def plain(self) -> str:
        body = self.body
        return body.plain if isinstance(body, Text) else str(body)

    def action_close(self) -> None:
        self.dismiss(None)
