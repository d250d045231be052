"""The transcript: user messages, streamed model text, a compact line per tool call,
and how each turn ended.

A tool call's line expands (Enter or a click when focused, Ctrl+O for the latest)
to show the tail of its output so far and, once it ended, its result. After a rewind
of the conversation, what is no longer in it is dimmed and a divider says so.

Model text is buffered and rendered as Markdown only when the app flushes (about
every 50 ms), so a fast stream costs one render per flush, not one per delta. Text is
cleaned of control sequences first and never parsed as markup.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from agent_tui.ui.output_tail import OutputTail
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

    def __init__(self, text: str, *, label: str = "", turn_id: str | None = None) -> None:
        body = Text()
        if label:
            body.append(label + " ", style="bold")
        body.append_text(safe_text(text))
        super().__init__(body)
        self.turn_id = turn_id
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


class ToolEntry(Vertical):
    """One tool call: a compact line (state symbol and word, name, summary) that
    expands to the tail of its output and its result."""

    DEFAULT_CSS = """
    ToolEntry { height: auto; padding: 0 1 0 1; }
    ToolEntry > .head { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ToolEntry > .body {
        display: none;
        height: auto;
        margin: 0 0 0 4;
        padding: 0 1;
        border-left: solid $primary 50%;
    }
    ToolEntry.-expanded > .body { display: block; }
    ToolEntry:focus { background: $boost; }
    """

    BINDINGS = [Binding("enter,space", "toggle", "show output", show=False)]
    can_focus = True

    def __init__(self, tool_use_id: str, name: str, depth: int = 0) -> None:
        super().__init__()
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.depth = depth  # > 0: a call of a sub-agent, under its task call
        self.state = "queued"
        self.summary = ""
        self.detail = ""
        self.output = OutputTail()
        self.result = OutputTail()
        self.expanded = False
        self._dirty = False
        self._head = Static("", classes="head")
        self._body = Static("", classes="body")

    def compose(self) -> ComposeResult:
        yield self._head
        yield self._body

    def set_state(self, state: str, summary: str, detail: str, result: str | None = None) -> None:
        self.state = state
        self.summary = summary or self.summary
        self.detail = detail or self.detail
        if result is not None and not self.result:
            self.result.append(result)
        self._dirty = True
        self.refresh_line()

    def add_output(self, text: str) -> None:
        self.output.append(text)
        self._dirty = True

    def refresh_line(self) -> None:
        look = tool_look(self.state)
        variables = self.app.theme_variables
        muted = role_style(variables, "text-muted")
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.depth:
            line.append("  " * self.depth + "↳ ", style=muted)
        line.append("▾ " if self.expanded else "▸ ", style=muted)
        line.append(f"{look.symbol} {look.word}", style=role_style(variables, look.role, bold=True))
        line.append("  ")
        line.append(clean(self.tool_name), style="bold")
        summary = short_summary(self.tool_name, self.summary)
        if summary:
            line.append("  ")
            line.append(summary)
        if self.detail:
            line.append("  · ")
            line.append(first_line(self.detail, 120), style=muted)
        self._head.update(line)

    def flush(self) -> None:
        """Render the expanded output if it changed (the app flushes every 50 ms)."""
        if self.expanded and self._dirty:
            self._dirty = False
            self._body.update(self.render_body())

    def render_body(self) -> Text:
        muted = role_style(self.app.theme_variables, "text-muted")
        out = Text()
        text, cut = self.output.tail()
        if cut:
            out.append(f"… earlier output not shown (last {self.output.max_lines} lines or "
                       f"{self.output.max_chars // 1024} KB kept)\n", style=muted)
        if text:
            out.append(text)
        elif self.state in ("queued", "streaming", "awaiting_approval"):
            out.append("not started", style=muted)
        else:
            out.append("no output", style=muted)
        if self.result:
            result, cut = self.result.tail()
            out.append("\n── result", style=muted)
            out.append(" (tail)" if cut else "", style=muted)
            out.append(" ──\n", style=muted)
            out.append(result)
        return out

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.set_class(self.expanded, "-expanded")
        self._dirty = True
        self.flush()
        self.refresh_line()

    def action_toggle(self) -> None:
        self.toggle()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.toggle()


class TurnEndEntry(Static):
    """How a turn ended, when that is worth a line (cancelled, failed)."""

    DEFAULT_CSS = """
    TurnEndEntry { margin: 1 0 0 0; padding: 0 1; }
    """


class RewindEntry(Static):
    """A divider where the conversation was rewound, saying what was restored."""

    DEFAULT_CSS = """
    RewindEntry {
        margin: 1 0 0 0;
        padding: 0 1;
        border-top: dashed $warning;
        border-title-color: $warning;
        border-title-style: bold;
    }
    """


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    Transcript > #welcome { color: $text-muted; padding: 1 1 0 1; }
    Transcript > .-rewound, Transcript > .-rewound > Static { text-opacity: 45%; }
    Transcript > UserEntry.-rewound { border-left: thick $panel; }
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

    def add_user(self, text: str, *, label: str = "", turn_id: str | None = None) -> None:
        self._close_text()
        self.mount(UserEntry(text, label=label, turn_id=turn_id))

    def append_text(self, text: str) -> None:
        if self._text is None:
            self._text = AssistantEntry()
            self.mount(self._text)
        self._text.append(text)

    def tool_state(
        self, tool_use_id: str, name: str, state: str, summary: str, detail: str,
        result: str | None = None, parent: str | None = None,
    ) -> None:
        entry = self._tools.get(tool_use_id)
        if entry is None:
            above = self._tools.get(parent) if parent else None
            entry = ToolEntry(tool_use_id, name, depth=above.depth + 1 if above else 0)
            self._tools[tool_use_id] = entry
            self._close_text()  # text after a tool call starts a new block
            self.mount(entry)
        entry.set_state(state, summary, detail, result)

    def tool_output(self, tool_use_id: str, text: str) -> None:
        entry = self._tools.get(tool_use_id)
        if entry is not None:
            entry.add_output(text)

    def toggle_last_tool(self) -> ToolEntry | None:
        """Expand or fold the latest tool call (Ctrl+O); None when there is none."""
        entries = list(self.query(ToolEntry))
        if not entries:
            return None
        entry = entries[-1]
        entry.toggle()
        if entry.expanded:
            self.call_after_refresh(self._show_end_of, entry)
        return entry

    def _show_end_of(self, entry: ToolEntry) -> None:
        """Scroll so the end of ``entry`` (the output's tail and the result) is in view."""
        bottom = entry.virtual_region.bottom
        height = self.scrollable_content_region.height
        self.release_anchor()
        self.scroll_to(y=max(0, bottom - height), animate=False, immediate=True)

    def mark_rewound(self, turn_id: str) -> bool:
        """Dim everything from the user message of ``turn_id`` on: it is no longer in
        the conversation. False when that message is not shown here."""
        start = next(
            (e for e in self.query(UserEntry) if e.turn_id == turn_id and not e.has_class("-steer")),
            None,
        )
        if start is None:
            return False
        self._close_text()
        dim = False
        for child in self.children:
            dim = dim or child is start
            if dim:
                child.add_class("-rewound")
        return True

    def add_rewind(self, title: str, body: Text) -> None:
        self._close_text()
        entry = RewindEntry(body)
        entry.border_title = title
        self.mount(entry)

    def add_turn_end(self, text: Text) -> None:
        self._close_text()
        self.mount(TurnEndEntry(text))

    def flush(self) -> None:
        if self._text is not None:
            self._text.flush()
        for entry in self._tools.values():
            entry.flush()
