"""The transcript's keys and mouse (a mixin of ``transcript.py``): with the focus, ↑ ↓
pick a tool call and Enter or Space shows or hides its output (Ctrl+O the latest); a
click on a call (or on the thinking) does the same; a mouse selection copies the text
without the frame (a message's bar, the output's bar, the padding), rendering only the
lines it spans.

A line on screen carries its place (the offsets a selection reads). Those lines are
made for the lines in view and kept in a map of their own, dropped as they scroll away:
:meth:`Strip.apply_offsets` would keep one in every line it was made from, a second
line (and its caches) for every line of the transcript ever shown."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Offset
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from agent_tui.ui.widgets.thinking_block import ThinkingBlock
from agent_tui.ui.widgets.transcript_blocks import Block, ToolBlock

if TYPE_CHECKING:
    from agent_tui.ui.widgets.transcript_blocks import Painter


class TranscriptInput(ScrollView):
    """The transcript's base: what it needs of the transcript is declared here."""

    blocks: list[Block]
    cursor: ToolBlock | None
    _tools: dict[tuple[str, str], ToolBlock]  # (turn id, tool id) -> its row
    _tops: list[int]
    _total: int
    _index: dict[int, int]  # id(block) -> its index in blocks
    # Line -> (the line drawn, it with its offsets), for the lines in view.
    _placed: dict[int, tuple[Strip, Strip]]

    if TYPE_CHECKING:  # the app's own, for the type checker (never shadowing it)
        def tool_blocks(self) -> list[ToolBlock]: ...
        def _ensure_tops(self) -> None: ...
        def _painter_now(self) -> Painter | None: ...
        def _changed(self, block: Block) -> None: ...
        def _sync(self) -> None: ...

    # -- keys and the mouse ------------------------------------------------------------------

    # -- tool output (Ctrl+O, Enter, a click) ---------------------------------------------------------------

    def toggle_last_tool(self) -> Block | None:
        """Expand or fold the latest tool call or thinking (Ctrl+O); None when there is none."""
        block = next((b for b in reversed(self.blocks) if isinstance(b, (ToolBlock, ThinkingBlock))), None)
        if block is None:
            return None
        self.toggle(block)
        return block

    def toggle(self, block: ToolBlock | ThinkingBlock) -> None:
        run = block.run if isinstance(block, ToolBlock) else None
        if run is not None and run.hides:  # a folded run of reads: show its calls
            run.folded = False
            for member in run.blocks:
                member.changed()
                self._changed(member)
            self._sync()
            return
        block.toggle()
        self._changed(block)
        if block.expanded:
            self._sync()
            self._show_end_of(block)

    def _show_end_of(self, block: Block) -> None:
        """Scroll so the end of ``block`` (the output's tail and the result) is in view."""
        self._ensure_tops()
        i = self._index[id(block)]
        bottom = self._tops[i] + block.height
        self.scroll_to(y=max(0, bottom - self.scrollable_content_region.height), animate=False,
                       immediate=True)

    def _show_block(self, block: Block) -> None:
        """Scroll the least that puts ``block``'s first line in view."""
        self._ensure_tops()
        i = self._index[id(block)]
        top = self._tops[i] + block.margin_top
        height = self.scrollable_content_region.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top >= self.scroll_y + height:
            self.scroll_to(y=top - height + 1, animate=False, immediate=True)

    def on_focus(self) -> None:
        if self.cursor is None and self._tools:
            self.cursor = next(reversed(self._tools.values()))
            self._show_block(self.cursor)
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_toggle_block(self) -> None:
        if self.cursor is not None:
            self.toggle(self.cursor)

    def action_select(self, step: int) -> None:
        tools = self.tool_blocks()
        if not tools:
            return
        if self.cursor is None:
            self.cursor = tools[-1]
        else:
            at = tools.index(self.cursor) + step
            self.cursor = tools[max(0, min(len(tools) - 1, at))]
        self._show_block(self.cursor)
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        block = self.block_at(self.scroll_offset.y + offset.y)
        if isinstance(block, ToolBlock):
            event.stop()
            self.cursor = block
            self.toggle(block)
        elif isinstance(block, ThinkingBlock):
            event.stop()
            self.toggle(block)

    def block_at(self, line: int) -> Block | None:
        """The block that line ``line`` of the whole transcript belongs to."""
        self._ensure_tops()
        i = bisect_right(self._tops, line) - 1
        if 0 <= i < len(self.blocks) and line < self._total:
            return self.blocks[i]
        return None

    # -- text selection (the mouse) ------------------------------------------------------------

    def _placed_line(self, strip: Strip, line: int) -> Strip:
        """``strip`` as line ``line`` of the transcript (what Strip.apply_offsets makes),
        made once while the line stays in view."""
        placed = self._placed.get(line)
        if placed is not None and placed[0] is strip:
            return placed[1]
        x = 0
        segments: list[Segment] = []
        for text, style, _ in strip:
            offset = Style.from_meta({"offset": (x, line)})
            segments.append(Segment(text, style + offset if style else offset))
            x += len(text)
        out = Strip(segments, strip.cell_length)
        self._placed[line] = (strip, out)
        return out

    def _forget_placed(self, first: int, last: int) -> None:
        """Drop the placed lines outside ``first`` to ``last`` (a few screens of them)."""
        if len(self._placed) > 3 * max(last - first, 1):
            self._placed = {k: v for k, v in self._placed.items() if first <= k <= last}

    def _select(self, strip: Strip, start: int, end: int) -> Strip:
        """``strip`` with characters ``start`` to ``end`` (-1: the end) drawn selected."""
        text = strip.text
        end = len(text) if end == -1 else min(end, len(text))
        if start >= end:
            return strip
        cut_start, cut_end = cell_len(text[:start]), cell_len(text[:end])
        before, chosen, after = strip.divide([cut_start, cut_end, strip.cell_length])
        style = self.screen.get_component_rich_style("screen--selection")
        chosen = Strip(Segment.apply_style(chosen, post_style=style), chosen.cell_length)
        return Strip.join([before, chosen, after])

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text: only the lines it spans are rendered for it."""
        painter = self._painter_now()
        if painter is None or not self.blocks:
            return None
        self._ensure_tops()
        first = selection.start.y if selection.start is not None else 0
        last = selection.end.y if selection.end is not None else self._total - 1
        first, last = max(first, 0), min(last, self._total - 1)
        lines: list[str] = []
        frames: list[str] = []  # each line's frame (a bar, the padding): not copied
        for line in range(first, last + 1):
            i = bisect_right(self._tops, line) - 1
            block = self.blocks[i]
            rendered = block.lines(painter)
            row = line - self._tops[i]
            lines.append(rendered[row].text.rstrip() if row < len(rendered) else "")
            frames.append(block.frame_text(row))
        shifted = Selection(
            Offset(selection.start.x, selection.start.y - first) if selection.start is not None else None,
            Offset(selection.end.x, selection.end.y - first) if selection.end is not None else None,
        )
        picked = shifted.extract("\n".join(lines)).split("\n")
        # A line picked whole starts with its frame; one picked from its middle does not.
        picked = [p.removeprefix(frames[k]) if lines[k].startswith(p) or k else p
                  for k, p in enumerate(picked)]
        return "\n".join(picked), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
