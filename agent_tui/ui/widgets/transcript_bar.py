"""The transcript's scrollbar: drawn again only when it would look different.

While a reply streams, the transcript grows ten times a second and follows its end,
so the scrollbar's sizes and position change on every flush, and Textual draws the
whole bar again each time (a Rich render of every one of its lines). In a long
transcript the thumb moves by less than an eighth of a cell over many flushes: the
bar looks the same. This bar works out what it would draw (Textual's own
``ScrollBarRender.render_bar`` for its sizes, position and colours, a few segments) and
when that is what it drew last, hands the compositor the lines it drew then.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip


class TranscriptBar(ScrollBar):
    def __init__(self, vertical: bool = True, name: str | None = None, *, thickness: int = 1) -> None:
        super().__init__(vertical, name, thickness=thickness)
        # What was drawn last: its look, the region asked for and the lines.
        self._drawn: tuple[tuple[Size, list[Segment]], Region, list[Strip]] | None = None

    def _look(self) -> tuple[Size, list[Segment]] | None:
        """What the bar draws now (None when it is not drawn by ScrollBarRender)."""
        bar = self.render()
        if type(bar) is not ScrollBarRender or not isinstance(bar.style, Style):
            return None
        style = bar.style
        width, height = self.size
        drawn = bar.render_bar(
            size=height if bar.vertical else width, virtual_size=bar.virtual_size,
            window_size=bar.window_size, position=bar.position,
            thickness=width if bar.vertical else height, vertical=bar.vertical,
            **({"back_color": style.bgcolor} if style.bgcolor else {}),
            **({"bar_color": style.color} if style.color else {}),
        )
        return self.size, drawn.segments

    def render_lines(self, crop: Region) -> list[Strip]:
        look = self._look()
        if look is not None and self._drawn is not None and self._drawn[:2] == (look, crop):
            return self._drawn[2]  # the same as last time: not rendered again
        strips = super().render_lines(crop)
        self._drawn = (look, crop, strips) if look is not None else None
        return strips
