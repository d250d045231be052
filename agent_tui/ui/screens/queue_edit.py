"""Editing a queued steer or follow-up: its text in an input like the main one (Enter
saves, Ctrl+J adds a line, Esc leaves it as it was). Dismissed with the new text, or
None."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.ui.widgets.prompt_input import PromptInput


class QueueEditScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    QueueEditScreen { align: center middle; }
    QueueEditScreen > #dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    QueueEditScreen #keys { color: $text-muted; }
    """

    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, item_id: str, kind: str, text: str) -> None:
        super().__init__()
        self.item_id = item_id
        self.kind = kind
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(f"Change the queued {'follow-up' if self.kind == 'follow_up' else 'steer'} "
                              "before it is applied."), id="intro")
            yield PromptInput(id="edit", cursor_blink=False)
            yield Static(Text("enter saves   ctrl+j new line   esc leaves it as it was"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = "edit queued message"
        editor = self.query_one("#edit", PromptInput)
        editor.text = self.text
        editor.move_cursor(editor.document.end)
        editor.focus()

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()  # not the main input's: nothing is sent
        self.dismiss(event.text)

    def action_cancel(self) -> None:
        self.dismiss(None)
