"""The tools pane: every tool call of the current turn with its live state.

One row per call: symbol and state word, how long it has run (or ran), tool name,
summary; under it the last line of output and how it ended (exit code, signal, why
denied, "checked by hook" while a hook decides about it, or for searches and fetches
the result's headline: "Found 12 matching lines in 3 files"). Calls of a sub-agent are
indented under the ``task`` call they belong to. Hidden until the turn has a call.
Times are the UI's clock from when the call was seen running to when it was seen
ending; a call that never ran has none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from agent_tui.cancel import CancelReason
from agent_tui.core.calls.state import TERMINAL_TOOL_STATES
from agent_tui.protocol import ToolState
from agent_tui.ui.render.safe_text import clean, first_line, one_line, short_summary
from agent_tui.ui.render.states import exit_words, role_style, shows_headline, tool_look
from agent_tui.ui.render.times import format_duration


OUTPUT_LOOKBACK = 4096  # characters of a batch of output searched for its last line


@dataclass
class ToolRow:
    tool_use_id: str
    name: str
    state: str = ToolState.QUEUED
    summary: str = ""
    detail: str = ""
    last_line: str = ""
    exit_code: int | None = None
    signal: str | None = None
    residue: int = 0
    headline: str = ""  # the result's first line, for a tool that shows_headline
    parent: str | None = None
    started: float | None = None  # when it was seen running (the pane's clock)
    ended: float | None = None  # when it was seen ending, if it ran
    checking: bool = False  # a PreToolUse hook is deciding about it

    def elapsed(self, now: float) -> str:
        if self.started is None:
            return ""
        return format_duration((self.ended if self.ended is not None else now) - self.started)

    def add_output(self, text: str) -> None:
        # Only the end can hold the last line: a flood of output arrives in batches of
        # megabytes, and cleaning all of it on the UI thread would stall the screen.
        line = one_line(text[-OUTPUT_LOOKBACK:])
        if line:
            self.last_line = line

    def ending(self) -> str:
        if self.checking:
            return "checked by hook"
        bits = exit_words(self.signal, self.exit_code)
        if self.residue:
            bits.append(f"{self.residue} process(es) left running")
        if self.detail and not bits:
            bits.append(first_line(self.detail, 160))
        if self.headline and not bits:
            bits.append(self.headline)
        return ", ".join(bits)


class ToolsPane(VerticalScroll):
    DEFAULT_CSS = """
    ToolsPane {
        height: auto;
        max-height: 12;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    ToolsPane.-empty { display: none; }
    ToolsPane > Static { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    can_focus = False

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id=id, classes="-empty")
        self.clock = clock
        self.rows: dict[str, ToolRow] = {}
        self._body = Static("")
        self._dirty = False
        self._shown: Text | None = None
        self._cleared: set[str] = set()  # ids of the rows of turns gone by

    def compose(self) -> ComposeResult:
        yield self._body

    def on_mount(self) -> None:
        self.border_title = "tool calls"
        self.anchor()

    def clear(self) -> None:
        # A call an interrupted turn left stopping ends later: its end goes to the
        # transcript, not to the next turn's pane.
        self._cleared.update(self.rows)
        self.rows.clear()
        self._dirty = True
        self.add_class("-empty")

    def tool_state(
        self,
        tool_use_id: str,
        name: str,
        state: str,
        *,
        summary: str = "",
        detail: str = "",
        exit_code: int | None = None,
        signal: str | None = None,
        residue: int = 0,
        parent: str | None = None,
        result: str | None = None,
        ended_by: CancelReason | None = None,
    ) -> None:
        row = self.rows.get(tool_use_id)
        if row is None and tool_use_id in self._cleared:
            return
        if row is None:
            row = self.rows[tool_use_id] = ToolRow(tool_use_id, name, parent=parent)
        now = self.clock()
        if state == ToolState.RUNNING and row.started is None:
            row.started = now
        elif state in TERMINAL_TOOL_STATES and row.started is not None and row.ended is None:
            row.ended = now
        row.state = state
        row.summary = summary or row.summary
        row.detail = detail or row.detail
        if exit_code is not None:
            row.exit_code = exit_code
        if signal:
            row.signal = signal
        if residue:
            row.residue = residue
        if result and shows_headline(name) and state == ToolState.SUCCEEDED:
            row.headline = first_line(result, 160)
        if ended_by is CancelReason.SEND_TO_BACKGROUND:
            row.last_line = ""  # its output goes on in the job: a frozen line would mislead
        self._dirty = True
        self.remove_class("-empty")

    def hook_check(self, tool_use_id: str, *, running: bool) -> None:
        """A hook started (or ended) deciding about a call."""
        row = self.rows.get(tool_use_id)
        if row is not None and row.checking != running:
            row.checking = running
            self._dirty = True

    def tool_output(self, tool_use_id: str, text: str) -> None:
        row = self.rows.get(tool_use_id)
        if row is not None:
            row.add_output(text)
            self._dirty = True

    def tick(self) -> None:
        """Running calls' times move on (the app calls this about once a second)."""
        if any(r.started is not None and r.ended is None for r in self.rows.values()):
            self._dirty = True

    def flush(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        rows, shown = self.render_rows(), self._shown
        if shown is None or rows.plain != shown.plain or rows.spans != shown.spans:
            # Lines do not wrap: the same number of lines is the same height, and a
            # repaint is enough (a layout costs this screen a frame or two more).
            same_height = shown is not None and rows.plain.count("\n") == shown.plain.count("\n")
            self._body.update(rows, layout=not same_height)
            self._shown = rows
        live = sum(1 for r in self.rows.values() if r.state not in TERMINAL_TOOL_STATES)
        total = len(self.rows)
        title = f"tool calls: {total}" + (f", {live} not finished" if live else "")
        if title != self.border_title:
            self.border_title = title

    def render_rows(self) -> Text:
        variables = self.app.theme_variables
        muted = role_style(variables, "text-muted")
        out = Text(no_wrap=True, overflow="ellipsis")
        children: dict[str | None, list[ToolRow]] = {}
        for row in self.rows.values():
            parent = row.parent if row.parent in self.rows else None
            children.setdefault(parent, []).append(row)
        width = max((len(tool_look(r.state).word) for r in self.rows.values()), default=0)
        now = self.clock()
        times = {r.tool_use_id: r.elapsed(now) for r in self.rows.values()}
        time_width = max((len(t) for t in times.values()), default=0)

        def emit(row: ToolRow, depth: int) -> None:
            look = tool_look(row.state)
            indent = "  " * depth + ("↳ " if depth else "")
            if out:
                out.append("\n")
            out.append(indent)
            out.append(f"{look.symbol} {look.word:<{width}}", style=role_style(variables, look.role, bold=True))
            out.append(" ")
            if time_width:
                out.append(f"{times[row.tool_use_id]:>{time_width}}  ", style=muted)
            out.append(clean(row.name), style="bold")
            summary = short_summary(row.name, row.summary)
            if summary:
                out.append("  ")
                out.append(summary)
            tail = [t for t in (row.last_line, row.ending()) if t]
            if tail:
                out.append("\n")
                out.append(" " * len(indent) + "    └ ", style=muted)
                if row.last_line:
                    out.append(row.last_line, style=muted)
                if row.ending():
                    if row.last_line:
                        out.append("  · ", style=muted)
                    out.append(row.ending(), style=role_style(variables, look.role))
            for child in children.get(row.tool_use_id, []):
                emit(child, depth + 1)

        for row in children.get(None, []):
            emit(row, 0)
        return out
