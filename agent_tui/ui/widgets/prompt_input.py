"""The multi-line input: Enter sends, Ctrl+J adds a line, Ctrl+F sends a follow-up,
Ctrl+G (Ctrl+Enter) sends now.

Enter is taken in the input's own key handler, before the TextArea would turn it
into a newline, and in order with the characters typed before it (a priority binding
would run ahead of them). Ctrl+J is the newline key every terminal sends (Shift+Enter
too, where the terminal tells it apart).
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from agent_tui.ui.keys import (
    FOLLOW_UP_KEYS,
    INPUT_BINDINGS,
    NEWLINE_KEYS,
    SEND_NOW_KEYS,
    SUBMIT_KEYS,
)


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $primary 50%;
        padding: 0 1;
    }
    PromptInput:focus { border: round $primary; }
    """

    BINDINGS = INPUT_BINDINGS

    class Submitted(Message):
        """The user sent the input's text (``follow_up``: with the follow-up key;
        ``send_now``: with the send-now key)."""

        def __init__(
            self, prompt: PromptInput, text: str, follow_up: bool = False, send_now: bool = False
        ) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.follow_up = follow_up
            self.send_now = send_now

    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=False,
            highlight_cursor_line=False,
            placeholder="Type a message. Enter sends, Ctrl+J adds a line, F1 lists keys.",
        )
        self.cursor_blink = cursor_blink

    async def _on_key(self, event: events.Key) -> None:
        action = None
        if event.key in SUBMIT_KEYS:
            action = self.action_submit
        elif event.key in FOLLOW_UP_KEYS:
            action = self.action_follow_up
        elif event.key in SEND_NOW_KEYS:
            action = self.action_send_now
        elif event.key in NEWLINE_KEYS:
            action = self.action_newline
        if action is None:
            await super()._on_key(event)
            return
        event.stop()
        event.prevent_default()
        action()

    def _send(self, *, follow_up: bool = False, send_now: bool = False) -> None:
        text = self.text
        if not text.strip():
            return
        self.clear()
        self.post_message(self.Submitted(self, text.strip("\n"), follow_up, send_now))

    def action_submit(self) -> None:
        self._send()

    def action_follow_up(self) -> None:
        self._send(follow_up=True)

    def action_send_now(self) -> None:
        self._send(send_now=True)

    def action_newline(self) -> None:
        self.insert("\n")

    def put_back(self, text: str) -> None:
        """Return ``text`` to the input, before whatever is being typed now."""
        current = self.text
        self.text = text if not current.strip() else f"{text}\n{current}"
        self.move_cursor(self.document.end)
