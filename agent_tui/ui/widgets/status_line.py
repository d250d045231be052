"""The status line: the turn's state with the core's honest detail, then what else is
true now: a journal that could not be written (sticky until writes succeed again), a
model request waiting to be retried (with a countdown), running background jobs, the
model, the context in use and the session's tokens and cost, and the latest notice or
hint ("stopping: 1 tool call running", "press Ctrl+C again to quit")."""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum

from rich.text import Text
from textual.widgets import Static

from agent_tui.protocol.states import NoticeCode, PermissionMode
from agent_tui.ui.render.safe_text import first_line
from agent_tui.ui.render.states import NOTICE_ROLES, TURN_LOOKS, role_style
from agent_tui.ui.render.usage import UsageTally, money, tokens_short

JOURNAL_ERROR_PREFIX = "journal not saved"

#: How each permission mode but ask looks: (words, theme role).
MODE_LOOKS: dict[PermissionMode, tuple[str, str]] = {
    PermissionMode.ACCEPT_EDITS: ("⏵⏵ accept edits", "accent"),
    PermissionMode.PLAN: ("⏸ plan mode: read-only", "warning"),
    PermissionMode.AUTO: ("⚠ auto: nothing asked", "error"),
    PermissionMode.DONT_ASK: ("⊘ don't ask: unallowed calls refused", "warning"),
}


class HintSlot(StrEnum):
    """Whose transient hint: each is set and cleared on its own (in this order shown)."""

    CHORD = "1-chord"  # a chord's pending keys (ui/input/chords.py)
    QUIT = "2-quit"  # "press Ctrl+C again to quit", and the app's own


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] | None = None) -> None:
        super().__init__("", id=id)
        self._clock = clock
        self._fresh()

    def _fresh(self) -> None:
        self.state = "idle"
        self.detail = ""
        self.notice_level = ""
        self.notice_text = ""
        self.notice_code = NoticeCode.GENERAL
        self.hints: dict[HintSlot, str] = {}  # each its own: one never wipes another's
        self.journal_error = ""  # sticky: once a journal write failed, it stays shown
        self.background_running = 0
        self.retry_attempt = 0  # the number of the request that will be tried next
        self.retry_at = 0.0  # clock time of that attempt
        self.retry_reason = ""
        self.model = ""
        self.thinking = ""
        self.usage_text = ""  # "context 45k/200k 23% · 120k tokens · $0.42"
        self.badges: list[str] = []  # what the session runs in, when it is worth saying ("sandbox")
        self.mode = PermissionMode.ASK  # shown unless it is ask

    def on_mount(self) -> None:
        self._redraw()

    def reset(self) -> None:
        """Another session: nothing of this one's stays (not even a journal failure)."""
        self._fresh()
        self._redraw()

    def set_turn(self, state: str, detail: str = "") -> None:
        self.state, self.detail = state, detail
        self._redraw()

    def set_notice(self, level: str, text: str, code: NoticeCode = NoticeCode.GENERAL) -> None:
        if code is NoticeCode.JOURNAL_WRITE_FAILED:
            self.journal_error = first_line(text, 200)
        elif code is NoticeCode.JOURNAL_WRITE_RECOVERED:
            self.journal_error = ""
        self.notice_level, self.notice_text, self.notice_code = level, text, code
        self._redraw()

    def clear_notice(self) -> None:
        self.notice_level, self.notice_text, self.notice_code = "", "", NoticeCode.GENERAL
        self._redraw()

    def set_hint(self, text: str, slot: HintSlot = HintSlot.QUIT) -> None:
        """A transient instruction (shown before the notice, cleared by whoever set it:
        a chord's keys and Ctrl+C's "press again" each have their own slot)."""
        self.hints[slot] = text
        self._redraw()

    @property
    def hint(self) -> str:
        return "  ".join(text for _slot, text in sorted(self.hints.items()) if text)

    def set_background(self, running: int) -> None:
        self.background_running = running
        self._redraw()

    def set_model(self, model: str, thinking: str = "") -> None:
        self.model, self.thinking = model, thinking
        self._redraw()

    def set_mode(self, mode: PermissionMode) -> None:
        self.mode = mode
        self._redraw()

    def set_badges(self, badges: list[str]) -> None:
        self.badges = [first_line(b, 20) for b in badges if b]
        self._redraw()

    def set_usage(self, tally: UsageTally) -> None:
        parts = []
        context = tally.context
        if context is not None:
            if context.window:
                share = round(100 * context.used / context.window)
                parts.append(f"context {tokens_short(context.used)}/{tokens_short(context.window)} {share}%")
            else:
                parts.append(f"context {tokens_short(context.used)}")
        total = tally.total()
        if total.requests:
            parts.append(f"{tokens_short(total.tokens)} tokens")
            parts.append(money(total))
        self.usage_text = " · ".join(parts)
        self._redraw()

    def set_retry(self, attempt: int, delay: float, reason: str) -> None:
        """The failed request ``attempt`` - 1 will be tried again in ``delay`` seconds."""
        now = self._clock() if self._clock else 0.0
        self.retry_attempt, self.retry_at, self.retry_reason = attempt, now + delay, reason
        self._redraw()

    def clear_retry(self) -> None:
        if self.retry_attempt:
            self.retry_attempt = 0
            self._redraw()

    def tick(self) -> None:
        """Redraw the retry countdown (the app calls this about once a second)."""
        if self.retry_attempt:
            self._redraw()

    def plain(self) -> str:
        return self.render_line_text().plain

    def render_line_text(self) -> Text:
        variables = self.app.theme_variables
        muted = role_style(variables, "text-muted")
        look = TURN_LOOKS.get(self.state) or TURN_LOOKS["idle"]
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(f"{look.symbol} {look.word}", style=role_style(variables, look.role, bold=True))
        if self.detail:
            out.append(": ")
            out.append(first_line(self.detail.replace("_", " "), 200))
        for badge in self.badges:
            out.append("  │  ", style=muted)
            out.append(f"⛨ {badge}", style=role_style(variables, "success", bold=True))
        if self.mode is not PermissionMode.ASK:
            words, role = MODE_LOOKS[self.mode]
            out.append("  │  ", style=muted)
            out.append(words, style=role_style(variables, role, bold=True))
            out.append(" (shift+tab)", style=muted)
        if self.journal_error:
            out.append("  │  ", style=muted)
            out.append("✗ journal not saved", style=role_style(variables, "error", bold=True))
            if self._notice_is_journal_error():
                # The latest notice is the failure itself: show its detail here, once.
                rest = first_line(self.notice_text, 300)[len(JOURNAL_ERROR_PREFIX):].lstrip()
                out.append(" " + rest if rest.startswith("(") else ": " + rest, style=role_style(variables, "error"))
        if self.retry_attempt:
            now = self._clock() if self._clock else self.retry_at
            left = max(0, math.ceil(self.retry_at - now))
            out.append("  │  ", style=muted)
            when = f"retrying in {left}s" if left else "retrying now"
            out.append(f"↻ {when} (attempt {self.retry_attempt})", style=role_style(variables, "warning", bold=True))
            if self.retry_reason:
                out.append(": " + first_line(self.retry_reason, 120), style=role_style(variables, "warning"))
        if self.background_running:
            out.append("  │  ", style=muted)
            out.append(f"⚙ {self.background_running} background", style=role_style(variables, "accent", bold=True))
        if self.model or self.usage_text:
            out.append("  │  ", style=muted)
            if self.model:
                out.append(first_line(self.model, 60), style=muted)
                if self.thinking:
                    out.append(f" (thinking {first_line(self.thinking, 20)})", style=muted)
                if self.usage_text:
                    out.append(" · ", style=muted)
            out.append(self.usage_text, style=muted)
        if self.hint:
            out.append("  │  ", style=muted)
            out.append(self.hint, style=role_style(variables, "warning", bold=True))
        if self.notice_text and not self._notice_is_journal_error():
            role = NOTICE_ROLES.get(self.notice_level, "text")
            out.append("  │  ", style=muted)
            if self.notice_level in ("warning", "error"):
                out.append(f"{self.notice_level}: ", style=role_style(variables, role, bold=True))
            out.append(first_line(self.notice_text, 300), style=role_style(variables, role))
        return out

    def _notice_is_journal_error(self) -> bool:
        return self.notice_code is NoticeCode.JOURNAL_WRITE_FAILED

    def _redraw(self) -> None:
        if self.is_attached:
            self.update(self.render_line_text())
