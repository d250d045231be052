"""A Markdown paragraph of plain words, rendered without parsing it as Markdown.

Most of what a model streams is prose. Rendered with ``rich.markdown``, half the cost
of a paragraph is markdown-it's parse, which for text with no Markdown syntax in it
only joins its lines with spaces. :func:`is_plain_paragraph` says when a text is such
a paragraph (conservatively: any character or line start that could mean something in
Markdown says no), and :class:`PlainParagraph` then renders exactly what
``rich.markdown.Markdown`` renders for it (the same text, style and wrap; a test
compares the two over many random texts and widths).
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

# What could make a text anything but one plain paragraph, line by line (the text's
# leading blank lines and trailing spaces and blank lines are left out first):
_NOT_PLAIN = re.compile(
    r"[\\`*_\[\]<&~|\x00]"  # emphasis, code, links and images, HTML, entities, escapes, tables
    r"|[^\S \n]"  # whitespace other than a space or a line end (tabs, no-break spaces ...)
    r"|^[ #>+=-]"  # an indent, a heading, a quote, a list item, a heading's underline, a rule
    r"|^\d+[.)]"  # an ordered list item
    r"|  $"  # a hard line break
    r"|^$",  # a blank line (a new paragraph)
    re.MULTILINE,
)


def _body(text: str) -> str:
    return text.lstrip("\n").rstrip(" \n")


def is_plain_paragraph(text: str) -> bool:
    """``text`` is one Markdown paragraph whose every character shows as it is."""
    body = _body(text)
    return bool(body) and _NOT_PLAIN.search(body) is None


class PlainParagraph:
    """Renders like ``Markdown(text)`` for a text :func:`is_plain_paragraph` accepts."""

    def __init__(self, text: str) -> None:
        # Markdown joins the lines with a space (a soft break); the space before a
        # line end is dropped.
        self.text = " ".join(line.removesuffix(" ") for line in _body(text).split("\n"))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # The style rich.markdown gives a paragraph: the Markdown's ("none") and then
        # the paragraph's, from the console's theme.
        style = console.get_style("none", default="none") + console.get_style("markdown.paragraph", default="none")
        if not (self.text.isascii() and self.text.isprintable()):  # cells are not characters
            text = Text(justify="left")
            text.append(self.text, style)
            yield from console.render(text, options.update(height=None))
            return
        # One character a cell: the lines rich.text would make, without its wrap's cost
        # per word. As rich.text renders them: the text in the paragraph's style, padded
        # to the width in none (no style at all when the paragraph has none).
        width = options.max_width
        pad_style = console.get_style("", default=Style.null()) if style else None
        for line in wrap_lines(self.text, width):
            if style:
                yield Segment(line, style)
                if len(line) < width:
                    yield Segment(" " * (width - len(line)), pad_style)
            else:
                yield Segment(line.ljust(width))
            yield Segment.line()


def wrap_lines(text: str, width: int) -> list[str]:
    """``text`` (one character a cell, spaces its only whitespace, none leading)
    wrapped at ``width`` exactly as ``rich.text.Text.wrap`` wraps it (``divide_line``
    with words folded), each line cut to ``width`` (trailing spaces beyond it)."""
    n = len(text)
    breaks = [0]
    start = 0  # where the current line starts
    while True:
        # The words that fit are those whose last non-space character is within
        # ``width`` of the line's start; the first that does not starts a new line.
        limit = start + width
        if limit >= n:
            break
        if text[limit] == " ":
            word = limit + 1
            while word < n and text[word] == " ":
                word += 1
            if word == n:
                break
        else:
            word = text.rfind(" ", start, limit) + 1 or start
        end = text.find(" ", word)
        end = n if end < 0 else end
        if end - word > width:  # longer than a line: folded, its spaces with it
            after = end
            while after < n and text[after] == " ":
                after += 1
            chunks = (after - word - 1) // width
            if word:
                breaks.append(word)
            breaks += [word + width * k for k in range(1, chunks + 1)]
            start = word + width * chunks
        else:
            breaks.append(word)
            start = word
    breaks.append(n)
    return [text[a:b][:width] for a, b in zip(breaks, breaks[1:])]
