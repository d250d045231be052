"""The model's thinking as a transcript entry (see ``transcript_blocks.py``)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.widgets.transcript_blocks import Block, Painter


class ThinkingBlock(Block):
    """The model's thinking: dim, folded to one line (its latest line and how long it
    is) until unfolded (Ctrl+O for the latest, or a click)."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.expanded = False
        self.done = False
        self.text_dirty = False

    def append(self, text: str) -> None:
        self.text += clean(text)
        self.text_dirty = True

    def advance(self) -> bool:
        if not self.text_dirty:
            return False
        self.text_dirty = False
        self.changed()
        return True

    def close(self) -> bool:
        if self.done:
            return False
        self.done = True
        self.changed()
        return True

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.changed()

    def render(self, painter: Painter) -> list[Strip]:
        muted = painter.role("text-muted")
        lines = [line for line in self.text.split("\n") if line.strip()]
        head = Text(no_wrap=True, overflow="ellipsis", style=muted)
        head.append("▾ " if self.expanded else "▸ ")
        head.append("✻ thinking" if not self.done else "✻ thought", style=Style(dim=True, bold=True))
        head.append(f" · {len(lines)} line{'s' if len(lines) != 1 else ''}")
        if not self.expanded:
            if lines:
                head.append(": " + first_line(lines[-1], 300), style=Style(dim=True, italic=True))
            head.truncate(painter.width - 2, overflow="ellipsis")
            return painter.frame(painter.render(head, painter.width - 2)[:1])
        out = painter.frame(painter.render(head, painter.width - 2)[:1])
        body = Text(self.text.strip("\n"), style=Style(dim=True, italic=True))
        inner = painter.width - 2 - 4 - 1 - 2
        padded = [Strip.join([Strip.blank(1, painter.base), line]) for line in painter.render(body, inner)]
        return out + painter.frame(padded, left="┆", left_style=painter.color("text-muted", 0.5), indent=3, right=2)

    def frame_text(self, row: int) -> str:
        return " " if row == 0 else "   ┆ "
