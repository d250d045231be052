"""A note to the user when a long turn ends (or a call waits for approval) while the
terminal is not in focus: the terminal's bell, or a desktop notification where the
terminal speaks OSC 9 (iTerm2, WezTerm, ghostty, Windows Terminal) or OSC 777 (urxvt,
foot, Konsole). Focus comes from the terminal's focus reports (Textual turns them on;
a terminal that never reports counts as focused, so it is never notified).

The text is ours alone ("turn completed after 2m05s"), never the model's or a tool's:
a notification reaches the desktop, where nothing the model wrote belongs.

Chosen with ``AGENT_TUI_NOTIFY`` = ``auto`` (the default of the ``agent-tui`` command),
``bell``, ``osc9``, ``osc777`` or ``off``; ``AGENT_TUI_NOTIFY_AFTER`` is the least turn
length in seconds (default 30). The app itself defaults to off (tests, embeddings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_AFTER_S = 30.0
TITLE = "agent-tui"


class NotifyMode(StrEnum):
    OFF = "off"
    AUTO = "auto"
    BELL = "bell"
    OSC9 = "osc9"
    OSC777 = "osc777"


_OSC9_TERMINALS = ("iTerm.app", "WezTerm", "ghostty", "vscode")
_OSC777_TERMS = ("rxvt", "foot")


def pick(mode: NotifyMode, environ: Mapping[str, str]) -> NotifyMode:
    """What ``auto`` means in this terminal (inside tmux or screen: the bell, which
    they pass on; an OSC they would swallow)."""
    if mode is not NotifyMode.AUTO:
        return mode
    if environ.get("TMUX") or environ.get("STY"):
        return NotifyMode.BELL
    program = environ.get("TERM_PROGRAM", "")
    if program in _OSC9_TERMINALS or environ.get("WT_SESSION"):
        return NotifyMode.OSC9
    term = environ.get("TERM", "")
    if any(name in term for name in _OSC777_TERMS) or environ.get("KONSOLE_VERSION"):
        return NotifyMode.OSC777
    return NotifyMode.BELL


def _plain(text: str) -> str:
    """Our own words, kept to what an OSC string may hold (no control characters, no ';'
    that would split OSC 777's fields)."""
    return "".join(c for c in text if c.isprintable() and c != ";")[:120]


def sequence(mode: NotifyMode, body: str) -> str:
    match mode:
        case NotifyMode.OSC9:
            return f"\x1b]9;{_plain(TITLE + ': ' + body)}\x07"
        case NotifyMode.OSC777:
            return f"\x1b]777;notify;{_plain(TITLE)};{_plain(body)}\x07"
        case NotifyMode.BELL:
            return "\x07"
        case NotifyMode.OFF | NotifyMode.AUTO:
            return ""


@dataclass(frozen=True)
class NotifySettings:
    mode: NotifyMode = NotifyMode.OFF
    after_s: float = DEFAULT_AFTER_S

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> tuple[NotifySettings, str]:
        """The settings, and a problem to tell the user ("" when none)."""
        problem = ""
        raw = environ.get("AGENT_TUI_NOTIFY", "auto").strip().lower() or "auto"
        try:
            mode = NotifyMode(raw)
        except ValueError:
            mode = NotifyMode.AUTO
            problem = (f"AGENT_TUI_NOTIFY={raw!r} is not one of "
                       f"{', '.join(m.value for m in NotifyMode)}: using auto")
        after = DEFAULT_AFTER_S
        raw_after = environ.get("AGENT_TUI_NOTIFY_AFTER", "").strip()
        if raw_after:
            try:
                after = max(0.0, float(raw_after))
            except ValueError:
                problem = problem or f"AGENT_TUI_NOTIFY_AFTER={raw_after!r} is not a number of seconds: using 30"
        return cls(pick(mode, environ), after), problem


class Notifier:
    """When to notify: a turn that ran ``after_s`` or longer ended, or a call waits
    for approval, while the terminal is not in focus. Returns what to write."""

    def __init__(self, settings: NotifySettings) -> None:
        self.settings = settings
        self._started: float | None = None
        self.sent: list[str] = []  # what was written (for tests and diagnostics)

    def turn_started(self, now: float) -> None:
        self._started = now

    def turn_ended(self, now: float, status: str, focused: bool) -> str:
        from agent_tui.ui.render.times import format_duration

        started, self._started = self._started, None
        if started is None or focused or now - started < self.settings.after_s:
            return ""
        return self._send(f"turn {status} after {format_duration(now - started)}")

    def approval_waiting(self, focused: bool) -> str:
        return "" if focused else self._send("a tool call waits for your approval")

    def _send(self, body: str) -> str:
        out = sequence(self.settings.mode, body)
        if out:
            self.sent.append(out)
        return out
