"""The transcript: user messages, streamed model text, a compact line per tool call,
and how each turn ended.

Model text is buffered and rendered as Markdown only when the app flushes (about
every 50 ms), so a fast stream costs one render per flush, not one per delta. Text is
cleaned of control sequences first and never parsed as markup.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from agent_tui.ui.safe_text import clean, first_line, safe_text, short_summary
from agent_tui.ui.states import role_style, tool_look


class UserEntry(Static):
    DEFAULT_CSS = """
    UserEntry {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $boost;
    }
    UserEntry.-steer { border-left: thick $warning; }
    """

    def __init__(self, text: str, *, label: str = "") -> None:
        body = Text()
        if label:
            body.append(label + " ", style="bold")
        body.append_text(safe_text(text))
        super().__init__(body)
        if label:
            self.add_class("-steer")


class AssistantEntry(Static):
    """Model text of one stretch of a turn (until a tool call or user message)."""

    DEFAULT_CSS = """
    AssistantEntry { margin: 1 0 0 0; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.text = ""
        self._dirty = False

    def append(self, text: str) -> None:
        self.text += clean(text)
        self._dirty = True

    def flush(self) -> None:
        if self._dirty:
            self._dirty = False
            self.update(self._renderable())

    def _renderable(self) -> RenderableType:
        return Markdown(self.text, hyperlinks=False)


class ToolEntry(Static):
    """One tool call as a compact line: state symbol and word, name, summary."""

    DEFAULT_CSS = """
    ToolEntry { padding: 0 1 0 3; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, tool_use_id: str, name: str) -> None:
        super().__init__("")
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.state = "queued"
        self.summary = ""
        self.detail = ""

    def set_state(self, state: str, summary: str, detail: str) -> None:
        self.state = state
        self.summary = summary or self.summary
        self.detail = detail or self.detail
        self.refresh_line()

    def refresh_line(self) -> None:
        look = tool_look(self.state)
        variables = self.app.theme_variables
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{look.symbol} {look.word}", style=role_style(variables, look.role, bold=True))
        line.append("  ")
        line.append(clean(self.tool_name), style="bold")
        summary = short_summary(self.tool_name, self.summary)
        if summary:
            line.append("  ")
            line.append(summary)
        if self.detail:
            line.append("  · ")
            line.append(first_line(self.detail, 120), style=role_style(variables, "text-muted"))
        self.update(line)


class TurnEndEntry(Static):
    """How a turn ended, when that is worth a line (cancelled, failed)."""

    DEFAULT_CSS = """
    TurnEndEntry { margin: 1 0 0 0; padding: 0 1; }
    """


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    Transcript > #welcome { color: $text-muted; padding: 1 1 0 1; }
    """

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text: AssistantEntry | None = None
        self._tools: dict[str, ToolEntry] = {}

    def on_mount(self) -> None:
        self.anchor()

    def add_welcome(self, text: str) -> None:
        self.mount(Static(Text(text), id="welcome"))

    def _close_text(self) -> None:
        if self._text is not None:
            self._text.flush()
            self._text = None

    def add_user(self, text: str, *, label: str = "") -> None:
        self._close_text()
        self.mount(UserEntry(text, label=label))

    def append_text(self, text: str) -> None:
        if self._text is None:
            self._text = AssistantEntry()
            self.mount(self._text)
        self._text.append(text)

    def tool_state(self, tool_use_id: str, name: str, state: str, summary: str, detail: str) -> None:
        entry = self._tools.get(tool_use_id)
        if entry is None:
            entry = ToolEntry(tool_use_id, name)
            self._tools[tool_use_id] = entry
            self._close_text()  # text after a tool call starts a new block
            self.mount(entry)
        entry.set_state(state, summary, detail)

    def add_turn_end(self, text: Text) -> None:
        self._close_text()
        self.mount(TurnEndEntry(text))

    def flush(self) -> None:
        if self._text is not None:
            self._text.flush()
