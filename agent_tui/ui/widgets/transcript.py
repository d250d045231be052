"""The transcript: user messages, streamed model text, a compact line per tool call,
and how each turn ended.

One widget however long the session grows (Textual's line API): entries are
:mod:`transcript_blocks` objects, not widgets, so a new line of text costs no layout
of the screen, and a frame draws only the lines in view. The top line of every block
is kept (recomputed from the first block whose height changed); a line on screen is
found by bisecting them. Rendered lines are kept for the ``KEEP_RENDERED`` blocks shown
or measured last; older ones keep only their height and render again when scrolled
back into view, so memory stays bounded in a session of thousands of messages.

Model text is buffered and rendered when the app flushes (every ``FLUSH_INTERVAL``),
so a fast stream costs one render per flush, not one per delta; and only its live tail
is rendered again (see :mod:`markdown_stream`), so a flush costs the same however long
the answer grows. A tool call's line expands (Enter or Space on it, a click, Ctrl+O for
the latest) to the tail of its output so far and, once it ended, its result. After a
rewind of the conversation, what is no longer in it is drawn faint.

A tool call's row is keyed by its place in the journal (its turn and its id), not by
the id alone: a provider may hand out an id again (after a rewind, or in a sub-agent),
and a new call must never overwrite an old row.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.timer import Timer

from agent_tui.ui.render.diffs import FileDiff
from agent_tui.ui.widgets.read_fold import join
from agent_tui.ui.widgets.thinking_block import ThinkingBlock
from agent_tui.ui.widgets.transcript_bar import TranscriptBar
from agent_tui.ui.widgets.transcript_input import TranscriptInput
from agent_tui.ui.widgets.transcript_blocks import (
    Block,
    NoteBlock,
    Painter,
    RewindBlock,
    TextBlock,
    ToolBlock,
    UserBlock,
    WelcomeBlock,
)

# Blocks whose rendered lines are kept (the rest keep their height only).
KEEP_RENDERED = 400
# After a resize or a theme change the blocks out of view are measured again a few at
# a time: at most MEASURE_BUDGET seconds of work every MEASURE_EVERY seconds, and none
# within MEASURE_AFTER_INPUT seconds of a key or a click.
MEASURE_BUDGET = 0.008
MEASURE_EVERY = 0.016
MEASURE_AFTER_INPUT = 0.5


class Transcript(TranscriptInput, ScrollView, can_focus=True):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
    }
    """

    # A click (to open a call, or to select text) leaves the focus in the input, so
    # typing after it goes where the user expects; Tab focuses the transcript.
    FOCUS_ON_CLICK = False

    BINDINGS = [
        Binding("enter,space", "toggle_block", "show output", show=False),
        Binding("up", "select(-1)", "previous call", show=False),
        Binding("down", "select(1)", "next call", show=False),
    ]

    def __init__(self, *, id: str | None = None, last_input: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__(id=id)
        self._last_input = last_input  # when the user last typed or clicked (monotonic)
        self.blocks: list[Block] = []
        self._tops: list[int] = []  # the first line of each block
        self._total = 0  # lines of all blocks
        self._stale_from = 0  # tops from this block on need recomputing
        # (line, block): since the last sync the lines above ``line`` stay as drawn.
        self._dirty: tuple[int, int] | None = None
        self._text: TextBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[tuple[str, str], ToolBlock] = {}  # (turn id, tool id) -> its row
        self._latest: dict[str, ToolBlock] = {}  # tool id -> the latest row with it
        self._new_output: dict[int, ToolBlock] = {}  # calls with output since the last flush
        self._index: dict[int, int] = {}  # id(block) -> its index in blocks
        self._kept: OrderedDict[int, Block] = OrderedDict()  # rendered, oldest first
        self._painter: Painter | None = None
        self._sync_pending = False
        self._frame: tuple[Painter | None, int] | None = None  # while a frame is drawn
        self._placed = {}
        self._measurer: Timer | None = None
        self._measured_from = 0  # the first block whose height the measurer changed
        self.cursor: ToolBlock | None = None  # the selected tool call (when focused)
        # Following the end: new lines scroll into view. Scrolling up stops it,
        # scrolling back to the end starts it again.
        self.following = True

    # -- what the app adds ------------------------------------------------------------

    def add_welcome(self, text: str) -> None:
        self._add(WelcomeBlock(text))

    def end_text(self) -> None:
        """The turn ended: its last text is complete."""
        self._close_text()

    def add_user(self, text: str, *, label: str = "", turn_id: str | None = None,
                 images: Sequence[str] = ()) -> None:
        self._close_text()
        self._add(UserBlock(text, label=label, turn_id=turn_id, images=images))

    def append_thinking(self, text: str) -> None:
        """The model's thinking, streamed: a block of its own, folded."""
        if self._thinking is None:
            self._close_text()
            self._thinking = ThinkingBlock()
            self._add(self._thinking)
        self._thinking.append(text)

    def append_text(self, text: str) -> None:
        self._close_thinking()
        if self._text is None:
            self._text = TextBlock()
            self._add(self._text)
        self._text.append(text)

    def tool_state(
        self, tool_use_id: str, name: str, state: str, summary: str, detail: str,
        result: str | None = None, parent: str | None = None, *, turn_id: str = "",
    ) -> None:
        block = self._tools.get((turn_id, tool_use_id))
        if block is None:
            above = self._latest.get(parent) if parent else None  # the task call runs now
            block = ToolBlock(tool_use_id, name, depth=above.depth + 1 if above else 0)
            from agent_tui.protocol import BASH_MODE_ID_PREFIX  # not for the first frame

            # The user's own ! command: its output is what they asked to see.
            block.expanded = tool_use_id.startswith(BASH_MODE_ID_PREFIX)
            self._tools[(turn_id, tool_use_id)] = block
            self._latest[tool_use_id] = block
            self._close_text()  # text after a tool call starts a new block
            run = join(self.blocks, block)
            self._add(block)
            if run is not None:
                self._changed(run.blocks[0])
        block.set_state(state, summary, detail, result)
        self._changed(block)
        if block.run is not None and block.run.hides:
            self._changed(block.run.blocks[0])  # the run's line shows its state

    def tool_diff(self, tool_use_id: str, diff: FileDiff) -> None:
        """The change an edit makes (shown under its call, folded when long)."""
        block = self._latest.get(tool_use_id)
        if block is not None:
            block.set_diff(diff)
            self._changed(block)

    def tool_output(self, tool_use_id: str, text: str, *, turn_id: str = "") -> None:
        block = self._tools.get((turn_id, tool_use_id))
        if block is not None:
            block.add_output(text)
            self._new_output[id(block)] = block

    def add_turn_end(self, text: Text) -> None:
        self._close_text()
        self._add(NoteBlock(text))

    def add_rewind(self, title: str, body: Text) -> None:
        self._close_text()
        self._add(RewindBlock(title, body))

    def mark_rewound(self, turn_id: str) -> bool:
        """Draw faint everything from the user message of ``turn_id`` on: it is no
        longer in the conversation. False when that message is not shown here."""
        start = next((i for i, b in enumerate(self.blocks) if isinstance(b, UserBlock)
                      and b.turn_id == turn_id and not b.is_steer), None)
        if start is None:
            return False
        self._close_text()
        for block in self.blocks[start:]:
            block.set_rewound(True)
        self._changed(self.blocks[start])
        return True

    def clear(self) -> None:
        """Show nothing (another session is opened in its place)."""
        self.blocks, self._tops, self._total, self._stale_from, self._dirty = [], [], 0, 0, None
        self._text, self._thinking, self.cursor = None, None, None
        self._tools, self._new_output, self._index = {}, {}, {}
        self._kept.clear()
        self._placed = {}
        self.following = True
        self._schedule_sync()

    def tool_blocks(self) -> list[ToolBlock]:
        return list(self._tools.values())

    def blocks_of(self, kind: type[Block]) -> Iterator[Block]:
        return (b for b in self.blocks if isinstance(b, kind))

    def plain_text(self) -> str:
        """Every line the transcript shows now, as plain text (what a screen reader or a
        test reads), with trailing spaces removed."""
        painter = self._painter_now()
        if painter is None:
            return ""
        return "\n".join(strip.text.rstrip() for block in self.blocks for strip in block.lines(painter))

    @property
    def text_block(self) -> TextBlock | None:
        """The model text being streamed now, if any."""
        return self._text

    # -- streaming -------------------------------------------------------------------------

    def flush(self) -> None:
        """Show what streamed in since the last flush (the app calls this every
        FLUSH_INTERVAL): the text's new pieces and live tail, expanded output. A
        flush with nothing new draws nothing."""
        if self._text is not None and self._text.advance():
            self._changed(self._text)
        if self._thinking is not None and self._thinking.advance():
            self._changed(self._thinking)
        for block in self._new_output.values():
            if block.advance():
                self._changed(block)
        self._new_output.clear()
        # Nothing new, nothing drawn: a changed block scheduled its own sync (idle, the
        # screen is not written at all).

    def restyle(self) -> None:
        """The theme changed: render every block again (the ones in view at once)."""
        self._painter = None
        self._stale_from = 0
        self._sync()

    # -- geometry ---------------------------------------------------------------------------

    def _close_thinking(self) -> None:
        if self._thinking is not None:
            self._thinking.close()
            self._changed(self._thinking)
            self._thinking = None

    def _close_text(self) -> None:
        self._close_thinking()
        if self._text is not None:
            if self._text.close():
                self._changed(self._text)
            self._text = None

    def _add(self, block: Block) -> None:
        self._index[id(block)] = len(self.blocks)
        self.blocks.append(block)
        self._tops.append(self._total)
        self._stale_from = min(self._stale_from, len(self.blocks) - 1)
        self._mark_dirty(self._total, len(self.blocks) - 1)
        self._schedule_sync()

    def _changed(self, block: Block) -> None:
        i = self._index[id(block)]
        if i < len(self._tops) and self._painter is not None:
            self._mark_dirty(self._tops[i] + block.unchanged_lines(self._painter), i)
        self._stale_from = min(self._stale_from, i)
        self._schedule_sync()

    def _mark_dirty(self, line: int, i: int) -> None:
        if self._dirty is None or line < self._dirty[0]:
            self._dirty = (line, i)

    def _schedule_sync(self) -> None:
        # After the batch of events being handled, not once per event.
        if not self._sync_pending and self.is_attached:
            self._sync_pending = True
            self.call_next(self._sync)

    def _painter_now(self) -> Painter | None:
        width = self.scrollable_content_region.width
        if width <= 0 or not self.is_attached:
            return None
        key = (width, self.visual_style, self.app.theme)
        if self._painter is None or self._painter.key != key:
            self._painter = Painter(self, width, key)
            self._stale_from = 0
        return self._painter

    def _exact_from(self, painter: Painter) -> int:
        """Blocks from this index on are measured at once when the painter changed (the
        ones a view that follows the end shows); those above keep their old height
        as an estimate until :meth:`_measure_some` gets to them."""
        if not self.following:
            return len(self.blocks)
        want = 2 * max(self.scrollable_content_region.height, 1)
        i = len(self.blocks)
        while i > 0 and want > 0:
            i -= 1
            want -= self.blocks[i].height or 1
        return i

    def _ensure_tops(self) -> None:
        painter = self._painter_now()
        if painter is None or self._stale_from >= len(self.blocks):
            return
        tops, blocks = self._tops, self.blocks
        exact_from = self._exact_from(painter)
        top = tops[self._stale_from] if self._stale_from else 0
        estimated = False
        for i in range(self._stale_from, len(blocks)):
            tops[i] = top
            block = blocks[i]
            if block.measured(painter):
                top += block.height
            elif i < exact_from and block.height:
                top += block.height  # measured later, a few blocks at a time
                estimated = True
            else:
                top += block.height_for(painter)
                self._keep(block)
        self._total = top
        self._stale_from = len(blocks)
        if estimated and self._measurer is None:
            self._measured_from = len(blocks)
            self._measurer = self.set_interval(MEASURE_EVERY, self._measure_some)

    def _measure_some(self) -> None:
        """Measure the blocks still estimated, the latest first, for at most
        MEASURE_BUDGET seconds. The new heights are placed once all are measured (one
        redraw, the view kept where it is), not after every step."""
        painter = self._painter_now()
        now = time.monotonic()
        if painter is None or now - self._last_input() < MEASURE_AFTER_INPUT:
            return  # the user is typing: no work that could delay a keystroke
        deadline = now + MEASURE_BUDGET
        i = len(self.blocks)
        while i > 0 and time.monotonic() < deadline:
            i -= 1
            block = self.blocks[i]
            if block.measured(painter):
                continue
            before = block.height
            if block.height_for(painter) != before:
                self._measured_from = min(self._measured_from, i)
            if id(block) not in self._kept:
                block.forget()  # measured, not shown: only its height is needed
        if any(not b.measured(painter) for b in self.blocks[:i]):
            return
        if self._measurer is not None:
            self._measurer.stop()
            self._measurer = None
        if self._measured_from < len(self.blocks):
            self._stale_from = min(self._stale_from, self._measured_from)
            self._measured_from = len(self.blocks)
            self._sync()

    def _anchor(self) -> tuple[int, int] | None:
        """The block at the top of the view and how far into it the view starts (None
        when following the end: then the end stays in view)."""
        if self.following or not self.blocks:
            return None
        line = round(self.scroll_y)
        i = max(0, bisect_right(self._tops, line) - 1)
        return i, line - self._tops[i]

    def _keep(self, block: Block) -> None:
        """``block`` was rendered: keep its lines, and forget those of the block
        rendered longest ago when too many are kept."""
        kept = self._kept
        key = id(block)
        if key in kept:
            kept.move_to_end(key)
            return
        kept[key] = block
        while len(kept) > KEEP_RENDERED:
            _, old = kept.popitem(last=False)
            if old is not self._text:
                old.forget()

    def _sync(self) -> None:
        """Bring the scroll size in line with the blocks; follow the end if following,
        else keep the block at the top of the view where it is (when blocks above it
        change height: a resize, a call folded, an estimate measured)."""
        self._sync_pending = False
        if not self.is_attached:
            return
        following = self.following
        keep = self._anchor()  # from the tops before they change
        dirty, self._dirty = self._dirty, None
        first, painter, scrolled = self._stale_from, self._painter, self.scroll_offset.y
        above = self._tops[first : dirty[1] + 1] if dirty else None
        self._ensure_tops()
        size = Size(self.scrollable_content_region.width, self._total)
        if size != self.virtual_size:
            # Not ``self.virtual_size = size``: that lays out the whole screen, and the
            # transcript's own size does not change with its content. Its scrollbar
            # is updated here (showing it the first time does lay out, once).
            self.set_reactive(Transcript.virtual_size, size)
            self._scroll_update(size)
        if following:
            if self.scroll_y < self.max_scroll_y:
                self.scroll_end(animate=False, immediate=True, x_axis=False)
            self.following = True
        elif keep is not None and keep[0] < len(self.blocks):
            block = self.blocks[keep[0]]
            y = self._tops[keep[0]] + min(keep[1], max(block.height - 1, 0))
            if y != round(self.scroll_y):
                self.scroll_to(y=y, animate=False, immediate=True)
        top, height = self.scroll_offset.y, self.size.height
        self._forget_placed(top - height, top + 2 * height)
        if (dirty is not None and painter is self._painter and scrolled == self.scroll_offset.y
                and self._tops[first : dirty[1] + 1] == above):
            # Only what changed is drawn (a streaming reply grows at its end), not all.
            start = max(dirty[0], self.scroll_offset.y)  # in view, down to its bottom
            if (below := self.scroll_offset.y + self.size.height - start) > 0:
                self.refresh_lines(start, below)
        else:
            self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.following = new_value >= self.max_scroll_y

    def _allotted(self, i: int) -> int:
        """The lines block ``i`` has in the current tops."""
        end = self._tops[i + 1] if i + 1 < len(self.blocks) else self._total
        return end - self._tops[i]

    def on_resize(self, _event: events.Resize) -> None:
        self._stale_from = 0
        self._sync()

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's scrollbar, drawn again only when it looks different (transcript_bar.py)."""
        if self._vertical_scrollbar is None:
            bar = TranscriptBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    # -- drawing -------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame = (self._painter_now(), self.scrollable_content_region.width)  # once a frame
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        painter, width = self._frame or (self._painter_now(), self.scrollable_content_region.width)
        if painter is None:
            return Strip.blank(width, self.rich_style)
        # No _ensure_tops() here: every line of a frame must see the same tops. What
        # changed since the last sync shows in its old place until the next one.
        line = self.scroll_offset.y + y
        i = bisect_right(self._tops, line) - 1
        if not (0 <= i < len(self.blocks)) or line >= self._total:
            return Strip.blank(width, self.rich_style)
        block = self.blocks[i]
        guessed = not block.measured(painter)
        lines = block.lines(painter)
        self._keep(block)
        if guessed and len(lines) != self._allotted(i):
            # Shown before the measurer got to it, and its height was a guess: place
            # the blocks below it again after this frame.
            self._stale_from = min(self._stale_from, i)
            self._schedule_sync()
        row = line - self._tops[i]
        strip = lines[row] if row < len(lines) else painter.blank()
        if block is self.cursor and self.has_focus and row == block.margin_top:
            strip = Strip(Segment.apply_style(strip, post_style=painter.boost), strip.cell_length)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(line)) is not None:
            strip = self._select(strip, *span)
        return self._placed_line(strip, line)  # where a mouse selection starts and ends
