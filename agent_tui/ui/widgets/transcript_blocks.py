"""What the transcript shows, one block per entry, each rendered into lines.

The transcript is one widget however long the session grows (see ``transcript.py``);
its entries are these plain objects, not widgets. A block renders itself into
:class:`~textual.strip.Strip` lines for a :class:`Painter` (the width, the colours of
the running theme) and keeps them until it changes or the painter does; the
transcript may also make it :meth:`Block.forget` its lines (keeping their count) to
bound memory, and they are rendered again when scrolled back into view.

Everything shown comes from outside (the user, the model, tools, file names): it is
cleaned of control sequences and never parsed as markup (``ui/render/safe_text.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rich.cells import cell_len
from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.renderables.text_opacity import TextOpacity
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual, visualize
from textual.widget import Widget

from agent_tui.protocol.tool_names import ResultShown, facts_of
from agent_tui.ui.input.attachments import IMAGE_MARK, AttachmentKind, split_for_display
from agent_tui.ui.render.diff_view import render as render_diff
from agent_tui.ui.render.diffs import FileDiff, tense_of
from agent_tui.ui.render.diffs import summary as diff_summary
from agent_tui.ui.render.output_tail import OutputTail
from agent_tui.ui.render.plain_paragraph import PlainParagraph, is_plain_paragraph
from agent_tui.ui.render.safe_text import clean, first_line, safe_text, short_summary
from agent_tui.ui.render.search_results import search_listing
from agent_tui.ui.render.states import role_style, tool_look
from agent_tui.ui.widgets.markdown_stream import LiveTail, MarkdownStream, Piece

REWOUND_OPACITY = 0.45  # text no longer in the conversation is drawn this faint


def _markdown(text: str) -> RenderableType:
    if is_plain_paragraph(text):  # the same look for half the cost (no parse)
        return PlainParagraph(text)
    # rich.markdown (with markdown-it and, for code, pygments) is imported when the
    # first model text is shown, not before the first frame.
    from rich.markdown import Markdown

    return Markdown(text, hyperlinks=False)


def _solid(color: str | None, under: Color) -> Color | None:
    """A theme colour (maybe translucent) as it shows over ``under``."""
    if not color:
        return None
    try:
        return under + Color.parse(color)
    except Exception:
        return None


class Painter:
    """Renders for one width and one theme; blocks keep lines per painter ``key``."""

    def __init__(self, widget: Widget, width: int, key: tuple[Any, ...]) -> None:
        self.widget = widget
        self.width = max(width, 8)
        self.key = key
        self.style: VisualStyle = widget.visual_style
        self.variables = widget.app.theme_variables
        background = self.style.background or Color.parse(self.variables.get("background", "#000000"))
        self.background = background
        self.base = self.style.rich_style
        boost = _solid(self.variables.get("boost"), background) or background
        self.boost = Style(bgcolor=boost.rich_color)
        self.boosted = self.base + self.boost

    def role(self, role: str, *, bold: bool = False) -> Style:
        return role_style(self.variables, role, bold=bold)

    def color(self, role: str, alpha: float = 1.0) -> Style:
        """A foreground colour from the theme, blended into the background by ``alpha``."""
        solid = _solid(self.variables.get(role), self.background)
        if solid is None:
            return Style()
        return Style(color=self.background.blend(solid, alpha).rich_color)

    def render(self, renderable: RenderableType, width: int, base: Style | None = None) -> list[Strip]:
        """``renderable`` wrapped at ``width`` cells, every line exactly that wide."""
        style = self.style if base is None else self.style + VisualStyle.from_rich_style(base)
        visual = visualize(self.widget, renderable, markup=False)
        strips = Visual.to_strips(self.widget, visual, width, None, style, apply_selection=False)
        fill = (self.base + base) if base is not None else self.base
        return [s.adjust_cell_length(width, fill) for s in strips]

    def blank(self, style: Style | None = None) -> Strip:
        return Strip.blank(self.width, style or self.base)

    def frame(self, lines: list[Strip], *, left: str = " ", left_style: Style | None = None,
              indent: int = 0, right: int = 1, fill: Style | None = None) -> list[Strip]:
        """``lines`` with ``indent`` blank cells, then ``left`` (a border or a space),
        on the left and ``right`` blank cells on the right; all ``width`` wide."""
        fill = fill or self.base
        head: list[Strip] = []
        if indent:
            head.append(Strip.blank(indent, self.base))
        head.append(Strip([Segment(left, (fill + left_style) if left_style else fill)], cell_len(left)))
        tail = Strip.blank(right, fill) if right else None
        return [Strip.join([*head, line, tail]).adjust_cell_length(self.width, fill) for line in lines]

    def fade(self, lines: list[Strip]) -> list[Strip]:
        """Text drawn faint (what a rewind took out of the conversation)."""
        theme = self.widget.app.ansi_theme
        return [Strip(TextOpacity.process_segments(line, REWOUND_OPACITY, theme), line.cell_length)
                for line in lines]


class Block:
    """One entry of the transcript."""

    margin_top = 1  # blank lines above the entry

    def __init__(self) -> None:
        self.rewound = False
        # Lines at the painter of ``_key`` (kept when the lines are forgotten, and as an
        # estimate when the painter changes); 0 when the content changed since.
        self.height = 0
        self._key: tuple[Any, ...] | None = None
        self._lines: list[Strip] | None = None

    def lines(self, painter: Painter) -> list[Strip]:
        if self._lines is None or self._key != painter.key:
            self._key = painter.key
            body = self.render(painter)
            if self.rewound:
                body = painter.fade(body)
            self._lines = [painter.blank()] * self.margin_top + body
            self.height = len(self._lines)
        return self._lines

    def unchanged_lines(self, painter: Painter) -> int:
        """How many of the lines last rendered for ``painter`` stay as they are after
        the change being made (0: any may change)."""
        return 0

    def measured(self, painter: Painter) -> bool:
        """Rendered for ``painter`` since the content last changed (lines maybe forgotten)."""
        return self._key == painter.key

    def height_for(self, painter: Painter) -> int:
        if self._key == painter.key:
            return self.height
        return len(self.lines(painter))

    def changed(self) -> None:
        """Render again when next shown or measured (the height may change too)."""
        self._lines = None
        self._key = None
        self.height = 0

    def forget(self) -> None:
        """Drop the rendered lines (memory); their count stays valid for the painter."""
        self._lines = None

    @property
    def rendered(self) -> bool:
        return self._lines is not None

    def render(self, painter: Painter) -> list[Strip]:
        raise NotImplementedError

    def frame_text(self, row: int) -> str:
        """What line ``row`` starts with that is framing, not content (left out when
        the line is copied): the padding cell by default."""
        return " "

    def set_rewound(self, rewound: bool) -> None:
        if self.rewound != rewound:
            self.rewound = rewound
            # Drawn faint, the same lines: the height stays valid as an estimate, so a
            # rewind far back re-renders what is in view, the rest later.
            self._lines = None
            self._key = None


class WelcomeBlock(Block):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def render(self, painter: Painter) -> list[Strip]:
        body = Text(self.text, style=painter.role("text-muted"))
        return painter.frame(painter.render(body, painter.width - 2))


class UserBlock(Block):
    """A user message (or a steer, with its label), on a band with a bar at its left."""

    def __init__(self, text: str, *, label: str = "", turn_id: str | None = None,
                 images: Sequence[str] = ()) -> None:
        super().__init__()
        self.text = text
        self.label = label
        self.turn_id = turn_id
        self.images = list(images)  # the images sent with it, by path

    @property
    def is_steer(self) -> bool:
        return bool(self.label)

    def frame_text(self, row: int) -> str:
        return "▌ "

    def render(self, painter: Painter) -> list[Strip]:
        body = Text()
        if self.label:
            body.append(self.label + " ", style="bold")
        message, attached = split_for_display(self.text)
        body.append_text(safe_text(message))
        for item in attached:  # folded: the model got the content, the transcript a line
            mark = {AttachmentKind.FOLDER: "▣", AttachmentKind.RESOURCE: "◈"}.get(item.kind, "▤")
            body.append(f"\n{mark} {clean(item.path)}", style="bold")
            body.append(f"  ({item.lines} line{'s' if item.lines != 1 else ''} attached)", style="dim")
        for image in self.images:
            body.append(f"\n{IMAGE_MARK} {clean(image)}", style="bold")
            body.append("  (image attached)", style="dim")
        bar_role = "panel" if self.rewound else ("warning" if self.label else "primary")
        lines = painter.render(body, painter.width - 3, painter.boost)
        return painter.frame([Strip.join([Strip.blank(1, painter.boosted), line]) for line in lines],
                             left="▌", left_style=painter.color(bar_role), fill=painter.boosted)


class TextBlock(Block):
    """Model text of one stretch of a turn (until a tool call or user message), as
    Markdown: settled pieces are rendered once, the live tail on every flush."""

    def __init__(self) -> None:
        super().__init__()
        self.stream = MarkdownStream()
        self.pieces: list[Piece] = []
        self.live = LiveTail("", gap=False)
        self.text_dirty = False
        self._piece_lines: list[Strip] = []
        self._pieces_rendered = 0
        self._piece_key: tuple[Any, ...] | None = None
        self._live_lines: list[Strip] | None = None

    @property
    def text(self) -> str:
        return self.stream.text

    def append(self, text: str) -> None:
        self.stream.append(clean(text))
        self.text_dirty = True

    def close(self) -> bool:
        """The stretch ended: its tail renders as settled (code in colour)."""
        if self.stream.ended:
            return False
        self.stream.end()
        self.text_dirty = True
        return self.advance()

    def advance(self) -> bool:
        """Take what streamed in since the last call; True if anything shows differently."""
        if not self.text_dirty:
            return False
        self.text_dirty = False
        pieces, live = self.stream.advance()
        self.pieces += pieces
        self.live = live
        self._live_lines = None
        self._lines = None
        self._key = None  # the settled lines are kept: only the tail renders again
        self.height = 0
        return True

    def forget(self) -> None:
        super().forget()
        self._piece_lines, self._pieces_rendered, self._piece_key = [], 0, None
        self._live_lines = None

    def set_rewound(self, rewound: bool) -> None:
        if self.rewound != rewound:
            self._piece_key = None  # drawn faint or not: every line changes
        super().set_rewound(rewound)

    def unchanged_lines(self, painter: Painter) -> int:
        # Settled pieces are rendered once and only added to: their lines stay.
        if self._piece_key != painter.key or self.rewound:
            return 0
        return self.margin_top + len(self._piece_lines)

    def changed(self) -> None:
        super().changed()
        self._live_lines = None
        self._piece_lines, self._pieces_rendered, self._piece_key = [], 0, None

    def render(self, painter: Painter) -> list[Strip]:
        width = painter.width - 2
        if self._piece_key != painter.key:
            self._piece_lines, self._pieces_rendered, self._piece_key = [], 0, painter.key
            self._live_lines = None
        for piece in self.pieces[self._pieces_rendered :]:
            if piece.gap:
                self._piece_lines.append(painter.blank())
            self._piece_lines += painter.frame(painter.render(_markdown(piece.source), width))
        self._pieces_rendered = len(self.pieces)
        if self._live_lines is None:
            live: list[Strip] = []
            if self.live.source:
                if self.live.gap:
                    live.append(painter.blank())
                live += painter.frame(painter.render(_markdown(self.live.source), width))
            self._live_lines = live
        return self._piece_lines + self._live_lines


class Fold(Protocol):
    """Calls drawn as one line while folded (``read_fold.ReadRun``)."""

    blocks: list[ToolBlock]
    folded: bool

    @property
    def hides(self) -> bool: ...
    def render(self, block: ToolBlock, painter: Painter) -> list[Strip]: ...


class ToolBlock(Block):
    """One tool call: a compact line (state symbol and word, name, summary) that
    expands to the tail of its output and its result."""

    margin_top = 0

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
        self.output_dirty = False
        self.diff: FileDiff | None = None  # an edit's change (ui/render/diffs.py)
        self.run: Fold | None = None  # consecutive reads folded to one line (read_fold.py)

    def set_diff(self, diff: FileDiff) -> None:
        """The change this call makes: folded to its summary unless it is short."""
        if self.diff is None and diff.short:
            self.expanded = True
        self.diff = diff
        self.changed()

    def set_state(self, state: str, summary: str, detail: str, result: str | None = None) -> None:
        self.state = state
        self.summary = summary or self.summary
        self.detail = detail or self.detail
        if result is not None and not self.result:
            self.result.append(result)
        self.changed()

    def add_output(self, text: str) -> None:
        self.output.append(text)
        self.output_dirty = True

    def advance(self) -> bool:
        """New output shows only when expanded; True if it changed what shows."""
        if not self.output_dirty:
            return False
        self.output_dirty = False
        if self.expanded:
            self.changed()
            return True
        return False

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.output_dirty = False
        self.changed()

    def frame_text(self, row: int) -> str:
        if row == 0:
            return " "  # the head line, then the output's bar (or a fold's indent)
        return "      " if self.diff is not None and not self.expanded else "     │ "

    def head(self, painter: Painter) -> Text:
        look = tool_look(self.state)
        muted = painter.role("text-muted")
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.depth:
            line.append("  " * self.depth + "↳ ", style=muted)
        line.append("▾ " if self.expanded else "▸ ", style=muted)
        line.append(f"{look.symbol} {look.word}", style=painter.role(look.role, bold=True))
        line.append("  ")
        line.append(clean(self.tool_name), style="bold")
        summary = short_summary(self.tool_name, self.summary)
        if summary:
            line.append("  ")
            line.append(summary)
        if self.detail:
            line.append("  · ")
            line.append(first_line(self.detail, 120), style=muted)
        return line

    def render_body(self, muted: Style = Style(dim=True)) -> Text:
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

    def render(self, painter: Painter) -> list[Strip]:
        if self.run is not None and self.run.hides:
            return self.run.render(self, painter)
        head = self.head(painter)
        head.truncate(painter.width - 2, overflow="ellipsis")
        lines = painter.frame(painter.render(head, painter.width - 2)[:1])
        if self.diff is not None and not self.expanded:
            fold = Text(no_wrap=True, overflow="ellipsis")
            fold.append(diff_summary(self.diff, tense_of(self.state)), style="bold")
            fold.append(f"  ({len(self.diff.lines) + self.diff.more} lines: ctrl+o to unfold)",
                        style=painter.role("text-muted"))
            lines += painter.frame(painter.render(fold, painter.width - 9)[:1], indent=5)
        elif self.diff is not None:
            body = render_diff(self.diff, painter.variables, tense=tense_of(self.state))
            if self.result:
                result, _cut = self.result.tail()
                body.append("\n── result ──\n", style=painter.role("text-muted"))
                body.append(result)
            inner = painter.width - 2 - 4 - 1 - 2
            padded = [Strip.join([Strip.blank(1, painter.base), line]) for line in painter.render(body, inner)]
            lines += painter.frame(padded, left="│", left_style=painter.color("primary", 0.5), indent=5, right=2)
        elif self.expanded:
            body = self.render_body(painter.role("text-muted"))
            inner = painter.width - 2 - 4 - 1 - 2
            padded = [Strip.join([Strip.blank(1, painter.base), line]) for line in painter.render(body, inner)]
            lines += painter.frame(padded, left="│", left_style=painter.color("primary", 0.5), indent=5, right=2)
        elif facts_of(self.tool_name).result_shown is ResultShown.SOURCES and self.result:
            listing = search_listing(self.result.tail()[0], painter.variables)
            if listing is not None:
                lines += painter.frame(painter.render(listing, painter.width - 9), indent=5)
        return lines


class NoteBlock(Block):
    """A line of its own: how a turn ended, when that is worth saying."""

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def render(self, painter: Painter) -> list[Strip]:
        return painter.frame(painter.render(self.text, painter.width - 2))


class RewindBlock(Block):
    """A divider where the conversation was rewound, saying what was restored."""

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title = title
        self.body = body

    def render(self, painter: Painter) -> list[Strip]:
        warning = painter.color("warning")
        title = Text(clean(self.title), style=warning + Style(bold=True))
        title.truncate(painter.width - 2, overflow="ellipsis")
        rule = Text("╌", style=warning)
        rule.append_text(title)
        rule.append("╌" * (painter.width - rule.cell_len), style=warning)
        top = painter.render(rule, painter.width)[:1]
        return top + painter.frame(painter.render(self.body, painter.width - 2))

