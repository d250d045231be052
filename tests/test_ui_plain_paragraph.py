"""A plain paragraph of streamed text renders without the Markdown parse, exactly as
rich.markdown renders it: over many random texts and widths, in rich's default theme
and one that styles paragraphs, and through the transcript's painter in the app."""

from __future__ import annotations

import io
import os
import random

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402
from rich.console import Console, RenderableType  # noqa: E402
from rich.markdown import Markdown  # noqa: E402
from rich.segment import Segment  # noqa: E402
from rich.theme import Theme  # noqa: E402

from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.render.plain_paragraph import PlainParagraph, is_plain_paragraph, wrap_lines  # noqa: E402
from agent_tui.ui.widgets import transcript_blocks  # noqa: E402
from agent_tui.ui.widgets.transcript_blocks import Painter  # noqa: E402
from tests.snapshot_tests.support import fake_factory  # noqa: E402

WORDS = ["lorem", "ipsum", "a", "don't", "(b)", "end.", "x,", "well!", "why?", "note:", "50%", "$5",
         "@me", "a/b", "http://example.com/x", "it's", '"q"', "#3", "1.", "y" * 9, "z" * 10, "w" * 31,
         "é", "日本語", "naïve"]
SEPARATORS = [" "] * 14 + ["  ", "   ", "\n", " \n", " \n", "  \n", "\n\n", "\n "]
WIDTHS = [1, 2, 5, 9, 10, 11, 23, 60, 116]
THEMES = [None, Theme({"markdown.paragraph": "italic #ff0000 on #000033"})]


def _random_text(rng: random.Random) -> str:
    parts = [rng.choice(["", "", "\n", " "])]
    for _ in range(rng.randint(1, 40)):
        parts += [rng.choice(WORDS), rng.choice(SEPARATORS)]
    return "".join(parts)


def _lines(renderable: RenderableType, width: int, theme: Theme | None) -> list[list[Segment]]:
    console = Console(width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True, theme=theme)
    lines = console.render_lines(renderable, console.options.update(width=width), pad=True)
    return [list(Segment.simplify(line)) for line in lines]


def test_a_plain_paragraph_renders_exactly_as_rich_markdown_renders_it() -> None:
    rng = random.Random(20261204)
    plain = ascii_only = 0
    for _ in range(2500):
        text = _random_text(rng)
        if not is_plain_paragraph(text):
            continue
        plain += 1
        ascii_only += PlainParagraph(text).text.isascii()
        for width in WIDTHS:
            theme = rng.choice(THEMES)
            assert _lines(PlainParagraph(text), width, theme) == _lines(Markdown(text, hyperlinks=False), width, theme), \
                (text, width, theme is None)
    assert plain > 200 and ascii_only > 100  # both ways of wrapping were compared


def test_the_wrap_breaks_where_rich_does() -> None:
    text = "aaa bb  " + "c" * 12 + "   dd " + "e" * 5
    assert wrap_lines(text, 5) == ["aaa ", "bb  ", "ccccc", "ccccc", "cc   ", "dd ", "eeeee"]
    assert wrap_lines("lorem ipsum", 20) == ["lorem ipsum"]
    assert wrap_lines("lorem ipsum", 5) == ["lorem", "ipsum"]


@pytest.mark.parametrize("text", [
    "an *emphasis*", "a __strong__ one", "some `code`", "a [link](x)", "an ![image](x)",
    "<b>html</b>", "an &amp; entity", "an escaped \\* star", "~~struck~~", "a | b",
    "# heading", "> quote", "- item", "+ item", "1. item", "2) item", "title\n===", "title\n---",
    "    code", "\tcode", "a hard  \nbreak", "one\n\nparagraph, then another", "no\u00a0break",
    "", "\n \n",
])
def test_text_that_may_be_markdown_is_parsed(text: str) -> None:
    assert not is_plain_paragraph(text)


def test_prose_with_punctuation_takes_the_plain_way() -> None:
    assert is_plain_paragraph("It's 50% done (the rest: soon). Why? See http://example.com/x!\n"
                              "A second line, joined to the first - as Markdown does. #3 too.\n")
    assert isinstance(transcript_blocks._markdown("lorem ipsum \nlorem"), PlainParagraph)
    assert isinstance(transcript_blocks._markdown("lorem *ipsum*"), Markdown)


@pytest.mark.asyncio
async def test_in_the_app_a_plain_paragraph_draws_the_same_lines_as_markdown() -> None:
    make, _made = fake_factory([])
    app = AgentApp(make, cursor_blink=False, clock=lambda: 0.0, welcome=False)
    rng = random.Random(7)
    texts = ["".join("lorem " if i % 20 else "lorem \n" for i in range(1, 400))]
    texts += [t for t in (_random_text(rng) for _ in range(200)) if is_plain_paragraph(t)][:20]
    async with app.run_test(size=(100, 30)):
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            for width in (8, 37, 98):
                painter = Painter(app.transcript, width + 2, (width, theme))
                for text in texts:
                    plain = painter.frame(painter.render(PlainParagraph(text), width))
                    parsed = painter.frame(painter.render(Markdown(text, hyperlinks=False), width))
                    assert [list(Segment.simplify(s)) for s in plain] == \
                        [list(Segment.simplify(s)) for s in parsed], (text, width, theme)
