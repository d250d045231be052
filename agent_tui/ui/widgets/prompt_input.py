"""The multi-line input: Enter sends, Ctrl+J adds a line, Ctrl+F sends a follow-up,
Ctrl+G (Ctrl+Enter) sends now, Ctrl+X Ctrl+E opens the draft in the user's editor.

Enter is taken in the input's own key handler, before the TextArea would turn it
into a newline, and in order with the characters typed before it (a priority binding
would run ahead of them). Ctrl+J is the newline key every terminal sends (Shift+Enter
too, where the terminal tells it apart).

Up on the first line recalls the messages sent before, newest first (on an empty
input while messages are queued, the newest queued one comes back first); Down on the
last line goes back towards what was being typed, which is kept meanwhile. Page Up and Page
Down are not the input's: they scroll the transcript (:class:`PromptInput.Page`).

A line that starts with ``!`` is a command for the shell (bash mode): the input's
border takes the warning colour and its title says so, while the ``!`` is there.

In vim mode (:meth:`PromptInput.set_vim`, ``ui/input/vim.py``) the keys go to vim first
and the border's subtitle shows the mode.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from agent_tui.ui.input.keys import (
    FOLLOW_UP_KEYS,
    INPUT_BINDINGS,
    NEWLINE_KEYS,
    SEND_NOW_KEYS,
    SUBMIT_KEYS,
)
from agent_tui.ui.input.vim import Vim, VimMode


class SendMode(StrEnum):
    """How a message is sent (the key that sent it)."""

    MESSAGE = "message"  # Enter: a new turn when idle, a steer while one runs
    FOLLOW_UP = "follow_up"  # after the agent stops on its own
    SEND_NOW = "send_now"  # at once: running commands move to the background


class Completer(Protocol):
    """A menu that follows the input (``ui/input/completion.py``)."""

    def update(self) -> None:
        """The text or the cursor moved."""

    def key(self, key: str) -> bool:
        """True when the open menu took ``key``."""


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
    PromptInput.-bash-mode { border: round $warning 50%; border-title-color: $warning; }
    PromptInput.-bash-mode:focus { border: round $warning; }
    """

    BASH_MODE_TITLE = "! bash mode: Enter runs the command"

    BINDINGS = INPUT_BINDINGS

    class Submitted(Message):
        """The user sent the input's text, the way ``mode`` says."""

        def __init__(self, prompt: PromptInput, text: str, mode: SendMode = SendMode.MESSAGE) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.mode = mode

    class EditorRequested(Message):
        """Ctrl+X Ctrl+E: the draft in the user's editor."""

    class Page(Message):
        """Page Up (``step`` -1) or Page Down (1) while typing: for the transcript."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, *, id: str | None = None, cursor_blink: bool = False) -> None:
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
        self._chord = False  # Ctrl+X was pressed: Ctrl+E opens the editor
        self.user_keys: dict[str, str] = {}  # keybindings.json's input keys: key -> action
        self.completer: Completer | None = None
        # Up on an empty input: the app's first (the newest queued message back);
        # True when it took the key.
        self.on_up_when_empty: Callable[[], bool] | None = None
        self.sent: list[str] = []  # messages sent (what Up recalls), oldest first
        self._recalled: int | None = None  # the index shown, None: the draft
        self._draft = ""
        self.vim: Vim | None = None  # vim mode, when on

    def set_vim(self, on: bool) -> None:
        """Turn vim mode on (in insert mode) or off; the subtitle shows the mode."""
        def show(mode: VimMode) -> None:
            self.border_subtitle = f"-- {mode.upper()} --"

        self.vim = Vim(show) if on else None
        self.border_subtitle = "-- INSERT --" if on else None

    def remember(self, text: str) -> None:
        """Add ``text`` to what Up recalls (a sent message, or one of a resumed session)."""
        if text.strip() and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._recalled = None

    def _recall(self, step: int) -> bool:
        """Show the message ``step`` away in the history; False if there is none."""
        if not self.sent:
            return False
        if self._recalled is None:
            if step > 0:
                return False
            self._draft = self.text
            at = len(self.sent) - 1
        else:
            at = self._recalled + step
        if at < 0:
            return True  # the oldest is shown: stay
        if at >= len(self.sent):
            self._recalled = None
            self.text = self._draft
            self.move_cursor(self.document.end)
            return True
        self._recalled = at
        self.text = self.sent[at]
        self.move_cursor((0, 0) if step < 0 else self.document.end)
        return True

    @property
    def bash_mode(self) -> bool:
        """The text is a command for the shell (``!cmd``)."""
        return self.text.startswith("!")

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        bash = self.bash_mode
        if bash != self.has_class("-bash-mode"):
            self.set_class(bash, "-bash-mode")
            self.border_title = self.BASH_MODE_TITLE if bash else None
        if self.completer is not None:
            self.completer.update()

    def on_text_area_selection_changed(self, _event: TextArea.SelectionChanged) -> None:
        if self.completer is not None:
            self.completer.update()

    async def _on_key(self, event: events.Key) -> None:
        if self._chord:
            self._chord = False
            if event.key == "ctrl+e":
                event.stop()
                event.prevent_default()
                self.post_message(self.EditorRequested())
                return
        elif event.key == "ctrl+x" and self.selection.is_empty:  # with a selection: cut
            self._chord = True
            event.stop()
            event.prevent_default()
            return
        if self.completer is not None and self.completer.key(event.key):
            event.stop()
            event.prevent_default()
            return
        if self.vim is not None and self.vim.key(self, event.key, event.character):
            event.stop()
            event.prevent_default()
            return
        if event.key in ("pageup", "pagedown"):
            event.stop()
            event.prevent_default()
            self.post_message(self.Page(-1 if event.key == "pageup" else 1))
            return
        if event.key == "up" and not self.text and self.on_up_when_empty is not None and self.on_up_when_empty():
            event.stop()
            event.prevent_default()
            return
        row = self.cursor_location[0]
        if (event.key == "up" and row == 0 and self._recall(-1)) or (
            event.key == "down" and row == self.document.line_count - 1 and self._recall(1)
        ):
            event.stop()
            event.prevent_default()
            return
        if (bound := self.user_keys.get(event.key)) is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(bound)
            return
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

    def _send(self, mode: SendMode) -> None:
        text = self.text
        if not text.strip():
            return
        # Submitted goes before the clearing's Changed: what hangs on the text (the
        # attachments) is read with the message before the empty input drops it.
        self.post_message(self.Submitted(self, text.strip("\n"), mode))
        self.clear()
        self.remember(text.strip("\n"))
        if self.vim is not None:  # the next message is typed
            self.vim.set_mode(VimMode.INSERT)

    def action_submit(self) -> None:
        self._send(SendMode.MESSAGE)

    def action_follow_up(self) -> None:
        self._send(SendMode.FOLLOW_UP)

    def action_send_now(self) -> None:
        self._send(SendMode.SEND_NOW)

    def action_newline(self) -> None:
        self.insert("\n")

    def action_paste_image(self) -> None:
        """Ctrl+V: the clipboard's image as a chip, or its text (``ui/input/clipboard.py``)."""
        from agent_tui.ui.input.clipboard import paste_into

        self.run_worker(paste_into(self, self.app), group="clipboard", exclusive=True)  # type: ignore[arg-type]

    async def _on_paste(self, event: events.Paste) -> None:
        from agent_tui.ui.input.clipboard import pasted_image

        if not pasted_image(self, self.app, event.text):  # type: ignore[arg-type]
            await super()._on_paste(event)

    def action_external_editor(self) -> None:  # a key the user bound (keybindings.json)
        self.post_message(self.EditorRequested())

    def put_back(self, text: str) -> None:
        """Return ``text`` to the input, before whatever is being typed now."""
        current = self.text
        self.text = text if not current.strip() else f"{text}\n{current}"
        self.move_cursor(self.document.end)
