"""Where every key goes: the bindings of the main screen and the double-press rules.

Esc interrupts the running turn (``Interrupt``); at a permission prompt it denies that
call and stops the turn (a note typed after Tab denies and lets the turn go on). Enter sends: a new turn when idle, a steer while a turn runs. The
follow-up key queues a message for after the agent stops on its own; the send-now key
delivers at once (running commands move to the background). Esc Esc on an empty
input while idle opens the rewind menu (also while the input holds just the message
a rewind put back, so that the rewind can be undone). Ctrl+B lists background jobs,
Ctrl+O opens the latest tool call's output or the model's thinking, Ctrl+P the
command palette. Ctrl+C twice quits, Ctrl+Q at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.binding import Binding, BindingType

# How close two presses must be to count as a double press (seconds).
DOUBLE_ESC_WINDOW = 0.6
CTRL_C_WINDOW = 2.0

APP_BINDINGS: list[BindingType] = [
    Binding("escape", "interrupt", "interrupt", key_display="esc"),
    Binding("ctrl+c", "ctrl_c", "quit (twice)", key_display="^c", priority=True),
    Binding("ctrl+q", "quit_soon", "quit", show=False, priority=True),
    Binding("ctrl+b", "background_jobs", "jobs", key_display="^b"),
    Binding("ctrl+o", "toggle_last_output", "output", key_display="^o"),
    Binding("f1", "help", "help", key_display="f1"),
    Binding("question_mark", "help", "help", show=False),
]

# Not priority bindings: a priority binding runs as soon as the key arrives, ahead of
# the characters typed just before it that still wait in the input's queue (text and
# Enter sent in one burst would send an empty message). PromptInput handles these keys
# in its own key handler, in order; the bindings are here for the footer.
SUBMIT_KEYS = ("enter",)
FOLLOW_UP_KEYS = ("ctrl+f", "alt+enter")
# Ctrl+Enter only arrives where the terminal speaks the kitty keyboard protocol;
# Ctrl+G (BEL) is sent by every terminal and is used neither for flow control (as
# Ctrl+S / Ctrl+Q are) nor by Textual.
SEND_NOW_KEYS = ("ctrl+enter", "ctrl+g")
NEWLINE_KEYS = ("ctrl+j", "shift+enter")

INPUT_BINDINGS: list[BindingType] = [
    Binding("enter", "submit", "send", key_display="enter", show=False),
    Binding("ctrl+f,alt+enter", "follow_up", "follow-up", key_display="^f"),
    Binding("ctrl+g,ctrl+enter", "send_now", "send now", key_display="^g"),
    Binding("ctrl+j,shift+enter", "newline", "newline", key_display="^j", show=False),
    Binding("ctrl+v", "paste_image", "paste image", key_display="^v", show=False),
    Binding("shift+tab", "app.cycle_mode", "mode", key_display="⇧tab", show=False),
    Binding("alt+up", "app.focus_queue", "queued", key_display="alt+↑", show=False),
]

# What the help screen lists: (keys, what they do).
HELP: list[tuple[str, str]] = [
    ("Enter", "send the message; while a turn runs, queue it as a steer"),
    ("Ctrl+G  (Ctrl+Enter)", "send now: running commands move to the background, the message goes in at once"),
    ("Ctrl+F  (Alt+Enter)", "queue a follow-up: runs after the agent stops on its own"),
    ("Ctrl+J  (Shift+Enter)", "new line in the input"),
    ("Ctrl+X Ctrl+E", "write the message in $VISUAL / $EDITOR (the screen comes back with it)"),
    ("Ctrl+V", "paste the clipboard's image as [Image #1] (or its text)"),
    ("↑ / ↓", "in the input: the messages sent before (on its first / last line)"),
    ("↑ on an empty input", "while messages are queued: the newest one back into the input"),
    ("Shift+Tab", "the permission mode: ask → accept edits → plan (read-only) → ask (and auto, "
                  "when the session started in it)"),
    ("Alt+↑", "the queued messages: ↑ ↓ pick, e / Enter edit, d / Del remove, Esc back"),
    ("PgUp / PgDn", "scroll the transcript (at the end it follows new text again)"),
    ("Esc", "interrupt the running turn (running tools are stopped; background jobs are not)"),
    ("Esc Esc", "on an empty input while idle (or one holding just the message a rewind put back): "
                "rewind to an earlier message, or undo a rewind"),
    ("/vim", "vim mode in the input: Esc leaves insert mode; on an empty input Esc still interrupts"),
    ("Ctrl+B", "background jobs: k stops the selected one"),
    ("Ctrl+O", "show or hide the latest tool call's output (an edit's diff) or the model's thinking"),
    ("Tab, ↑ ↓, Enter", "focus the transcript, pick a tool call, show or hide its output (or click it)"),
    ("/", "at the start of the input: the command menu (Tab or Enter completes, Esc closes)"),
    ("!", "at the start of the input: bash mode, Enter runs the rest as a shell command at "
          "once (no model request; Esc stops it; your next message tells the model)"),
    ("@", "at the start of a word: pick a file or folder to attach (@src/ lists a folder)"),
    ("Ctrl+P", "command palette: the commands, themes, jobs, help"),
    ("1 / y", "permission prompt: yes, this call once (↑↓ and Enter choose too)"),
    ("2 / a", "permission prompt: yes, and don't ask again (the rule it names) or for the session"),
    ("3 / n / Esc", "permission prompt: no, deny this call and stop the turn (then say what to do)"),
    ("Tab / d", "permission prompt: edit the command, or a note to go with the answer chosen (d: with no)"),
    ("Ctrl+E", "permission prompt: explain the call in plain words (the rules' reading, not a model's)"),
    ("PgUp / PgDn", "permission prompt: scroll the transcript behind it (the wheel too)"),
    ("Ctrl+C Ctrl+C", "quit (running tools are stopped first)"),
    ("Ctrl+Q", "quit at once, the same way (running tools are stopped first)"),
    ("F1  (?)", "this help"),
]


class DoublePress:
    """Detects a second press within ``window`` seconds of the first."""

    def __init__(self, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self._first: float | None = None

    def press(self) -> bool:
        """Register a press; True when it completes a double press (which resets)."""
        now = self.clock()
        if self._first is not None and now - self._first <= self.window:
            self._first = None
            return True
        self._first = now
        return False

    def reset(self) -> None:
        self._first = None

    @property
    def armed(self) -> bool:
        """A first press happened and the window is still open."""
        return self._first is not None and self.clock() - self._first <= self.window
