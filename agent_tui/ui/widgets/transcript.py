"""The transcript: user messages, streamed model text, a compact line per tool call,
and how each turn ended.

A tool call's line expands (Enter or a click when focused, Ctrl+O for the latest)
to show the tail of its output so far and, once it ended, its result. After a rewind
of the conversation, what is no longer in it is dimmed and a divider says so.

Model text is buffered and rendered as Markdown only when the app flushes (about
every 50 ms), so a fast stream costs one render per flush, not one per delta; and
only its live tail is rendered again (see :class:`AssistantEntry`), so a flush costs
the same however long the answer grows. Text is cleaned of control sequences first
and never parsed as markup.
"""

from __future__ import annotations

import re

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual, visualize
from textual.widget import Widget
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


# Model text not yet settled is re-rendered on every flush; past this many characters
# it is settled at a line end even inside a paragraph, so that a flush costs the same
# however long the answer grows.
LIVE_LIMIT = 2000

# A fence line (CommonMark): up to 3 spaces, then ``` or ~~~ (3 or more), then an
# info string (no backtick in it for a backtick fence).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$")


# Where text may be settled: after a blank line, at a line that starts a paragraph,
# a heading or a code fence, and not after a table or a rule. Lists, quotes, tables
# and rules render with blank lines of their own (and an indented line or a list
# item may continue the list above), so they stay in one piece with their
# neighbours: then the pieces look like the whole text rendered at once.
_STARTS_PLAIN_BLOCK = re.compile(r"(?!\d+[.)](\s|$)|[-*+](\s|$)|[>|<]|([-*_])\s*\3\s*\3)[^\s]")
_ENDS_WITH_RULE = re.compile(r"\s*([|]|([-*_])\s*\2\s*\2)")


def _markdown(text: str) -> RenderableType:
    # rich.markdown (with markdown-it and, for code, pygments) is imported when the
    # first model text is shown, not before the first frame.
    from rich.markdown import Markdown

    return Markdown(text, hyperlinks=False)


class SettledText(Widget):
    """The settled part of an :class:`AssistantEntry`: Markdown pieces, each rendered
    once (at the current width and style) into lines that are kept. One widget
    however many pieces, so a longer answer costs no more to lay out or to draw."""

    DEFAULT_CSS = """
    SettledText { height: auto; }
    SettledText.-empty { display: none; }
    """

    def __init__(self) -> None:
        super().__init__(classes="-empty")
        self.pieces: list[tuple[str, bool]] = []  # (Markdown, a blank line before it)
        self._lines: list[Strip] = []
        self._rendered = 0  # pieces rendered into _lines
        self._key: tuple[int, VisualStyle] | None = None

    def add(self, source: str, *, gap: bool) -> None:
        self.pieces.append((source, gap))
        self.remove_class("-empty")
        self.refresh(layout=True)

    def _lines_for(self, width: int) -> list[Strip]:
        style = self.visual_style
        if (width, style) != self._key:  # resized or restyled: render them all again
            self._key, self._lines, self._rendered = (width, style), [], 0
        for source, gap in self.pieces[self._rendered :]:
            if gap and self._lines:
                self._lines.append(Strip.blank(width, style.rich_style))
            visual = visualize(self, _markdown(source), markup=False)
            self._lines.extend(Visual.to_strips(self, visual, width, None, style))
        self._rendered = len(self.pieces)
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines_for(width)) if width else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self._lines_for(width)
        if 0 <= y < len(lines):
            return lines[y]
        return Strip.blank(width, self.visual_style.rich_style)


class AssistantBlock(Static):
    """The live tail of an :class:`AssistantEntry`, rendered again on each flush."""

    DEFAULT_CSS = """
    AssistantBlock.-gap { margin: 1 0 0 0; }
    AssistantBlock.-empty { display: none; }
    """


class AssistantEntry(Vertical):
    """Model text of one stretch of a turn (until a tool call or user message).

    Streaming is incremental: text up to the last blank line outside a code fence is
    *settled* (:class:`SettledText`: rendered as Markdown once); only the live tail
    after it is rendered again on each flush (and, inside a code fence, without syntax
    colours until the fence is closed). Text is settled only where Markdown starts a
    new block, so the pieces together look like the whole text rendered at once; only
    a paragraph or code block longer than ``LIVE_LIMIT`` is split at a line end.
    """

    DEFAULT_CSS = """
    AssistantEntry { height: auto; margin: 1 0 0 0; padding: 0 1; }
    AssistantEntry.-rewound > SettledText { text-opacity: 45%; }
    """

    def __init__(self) -> None:
        settled = SettledText()
        live = AssistantBlock("", classes="-empty")
        super().__init__(settled, live)
        self._settled = settled
        self._live = live
        self.text = ""  # all of it, cleaned
        self._dirty = False
        self._ended = False
        self._done = 0  # text[:_done] is settled
        self._reopen = ""  # a fence line the live tail continues (split inside a fence)
        self._joined = False  # the live tail continues the settled piece before it
        # The line scanner: lines of text[:_scan] are scanned.
        self._scan = 0
        self._fence: str | None = None  # the open fence's marker (``` or ~~~~ ...)
        self._fence_line = ""  # and its line
        self._fence_at = -1  # where that line starts in text (-1: before _done)
        self._prev_blank = False
        self._prev_line = ""  # the last line that was not blank
        self._boundary = 0  # the latest block start after a blank line, outside fences

    def append(self, text: str) -> None:
        self.text += clean(text)
        self._dirty = True

    def close(self) -> None:
        """The stretch ended: show the tail as settled (code in colour)."""
        if not self._ended:
            self._ended = True
            self._dirty = True
        self.flush()

    def flush(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self._scan_lines()
        if self._boundary > self._done:
            self._settle(self._boundary, joined_after=False)
        if len(self._reopen) + len(self.text) - self._done > LIVE_LIMIT:
            self._split_long_tail()
        self._render_live()

    # -- settling ------------------------------------------------------------------

    def _scan_lines(self) -> None:
        text = self.text
        end = text.rfind("\n") + 1  # only whole lines
        i = self._scan
        while i < end:
            j = text.index("\n", i)
            line = text[i:j]
            if self._fence is not None:
                close = line.strip()
                if close.startswith(self._fence) and close.strip(self._fence[0]) == "" \
                        and len(line) - len(line.lstrip(" ")) < 4:
                    self._fence = None
                self._prev_blank = False
            elif not line.strip():
                self._prev_blank = True
            else:
                if self._prev_blank and _STARTS_PLAIN_BLOCK.match(line) \
                        and not _ENDS_WITH_RULE.match(self._prev_line):
                    self._boundary = i
                self._prev_blank = False
                self._prev_line = line
                match = _FENCE.match(line)
                if match and not (match[1][0] == "`" and "`" in match[2]):
                    self._fence, self._fence_line, self._fence_at = match[1], line, i
            i = j + 1
        self._scan = end

    def _split_long_tail(self) -> None:
        """Settle a tail longer than LIVE_LIMIT at its last line end (a long paragraph
        or code block); a code block is closed there and opened again after."""
        text = self.text
        cut = self._scan
        if cut <= self._done:  # no line end: cut a paragraph at a space, else anywhere
            if self._fence is not None:
                return
            space = text.rfind(" ", self._done, len(text) - 1)
            cut = space + 1 if space >= self._done else self._done + LIVE_LIMIT
        if self._fence is not None:
            marker = self._fence
            self._settle(cut, joined_after=True, suffix=marker[0] * len(marker) + "\n")
            self._reopen = self._fence_line + "\n"
            self._fence_at = -1
        else:  # after a blank line the next block starts anyway: no join
            self._settle(cut, joined_after=not text.endswith("\n\n", 0, cut))

    def _settle(self, end: int, *, joined_after: bool, suffix: str = "") -> None:
        source = self._reopen + self.text[self._done : end] + suffix
        if source.strip():
            self._settled.add(source, gap=not self._joined)
        self._done = end
        self._reopen = ""
        self._joined = joined_after
        if self._fence_at < end:
            self._fence_at = -1

    def _render_live(self) -> None:
        source = self._reopen + self.text[self._done :]
        live = self._live
        live.set_class(not source.strip(), "-empty")
        live.set_class(bool(self._settled.pieces) and not self._joined, "-gap")
        if not source.strip():
            return
        if self._fence is not None and not self._ended:
            # An open code block: no syntax colours until it is closed (colouring
            # costs far more than the rest of a render).
            line = self._fence_line
            plain = line[: len(line) - len(line.lstrip(" "))] + self._fence
            if self._fence_at >= 0:
                at = len(self._reopen) + self._fence_at - self._done
                source = source[:at] + plain + source[at + len(line) :]
            else:
                source = plain + source[len(line) :]
        live.update(_markdown(source))


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
            self._text.close()
            self._text = None

    def end_text(self) -> None:
        """The turn ended: its last text is complete."""
        self._close_text()

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
