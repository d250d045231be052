"""The status line: the turn's state with the core's honest detail, and the latest
notice or hint ("stopping: 1 tool call running", "press Ctrl+C again to quit")."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent_tui.ui.safe_text import first_line
from agent_tui.ui.states import NOTICE_ROLES, TURN_LOOKS, role_style


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.state = "idle"
        self.detail = ""
        self.notice_level = ""
        self.notice_text = ""
        self.hint = ""

    def on_mount(self) -> None:
        self._redraw()

    def set_turn(self, state: str, detail: str = "") -> None:
        self.state, self.detail = state, detail
        self._redraw()

    def set_notice(self, level: str, text: str) -> None:
        self.notice_level, self.notice_text = level, text
        self._redraw()

    def clear_notice(self) -> None:
        self.set_notice("", "")

    def set_hint(self, text: str) -> None:
        """A transient instruction (shown before the notice, cleared by the app)."""
        self.hint = text
        self._redraw()

    def plain(self) -> str:
        return self.render_line_text().plain

    def render_line_text(self) -> Text:
        variables = self.app.theme_variables
        look = TURN_LOOKS.get(self.state) or TURN_LOOKS["idle"]
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(f"{look.symbol} {look.word}", style=role_style(variables, look.role, bold=True))
        if self.detail:
            out.append(": ")
            out.append(first_line(self.detail.replace("_", " "), 200))
        if self.hint:
            out.append("  │  ", style=role_style(variables, "text-muted"))
            out.append(self.hint, style=role_style(variables, "warning", bold=True))
        if self.notice_text:
            role = NOTICE_ROLES.get(self.notice_level, "text")
            out.append("  │  ", style=role_style(variables, "text-muted"))
            if self.notice_level in ("warning", "error"):
                out.append(f"{self.notice_level}: ", style=role_style(variables, role, bold=True))
            out.append(first_line(self.notice_text, 300), style=role_style(variables, role))
        return out

    def _redraw(self) -> None:
        if self.is_attached:
            self.update(self.render_line_text())
