"""Vim mode in the prompt input, driven by real key presses through Textual's pilot."""

from __future__ import annotations

import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import pytest  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402

from agent_tui.ui.input.vim import VimMode  # noqa: E402
from agent_tui.ui.widgets.prompt_input import PromptInput  # noqa: E402

pytestmark = pytest.mark.asyncio


class _InputApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.escapes = 0
        self.sent: list[str] = []

    def compose(self) -> ComposeResult:
        self.prompt = PromptInput(id="prompt")
        yield self.prompt

    def on_mount(self) -> None:
        self.prompt.set_vim(True)
        self.prompt.focus()

    def key_escape(self) -> None:  # what the real app does with Esc: interrupt
        self.escapes += 1

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        self.sent.append(event.text)


KEY_NAMES = {"$": "dollar_sign", "^": "circumflex_accent", "0": "0"}


async def _run(text: str, keys: str, *, start: tuple[int, int] = (0, 0)) -> tuple[str, tuple[int, int], _InputApp]:
    """Put ``text`` in the input, go to normal mode at ``start``, then press ``keys``
    (one character a key; ``<esc>`` is Esc)."""
    app = _InputApp()
    async with app.run_test() as pilot:
        app.prompt.text = text
        await pilot.press("escape")
        app.prompt.move_cursor(start)
        for part in keys.replace("<esc>", "\x1b").replace("<cr>", "\r"):
            name = {"\x1b": "escape", "\r": "enter"}.get(part) or KEY_NAMES.get(part) or part
            await pilot.press(name)
        await pilot.pause()
        return app.prompt.text, app.prompt.cursor_location, app


async def test_esc_in_insert_mode_leaves_it_and_the_subtitle_says_normal() -> None:
    app = _InputApp()
    async with app.run_test() as pilot:
        assert app.prompt.border_subtitle == "-- INSERT --"
        await pilot.press("h", "i")
        await pilot.press("escape")
        assert app.prompt.vim is not None and app.prompt.vim.mode is VimMode.NORMAL
        assert app.prompt.border_subtitle == "-- NORMAL --"
        assert app.escapes == 0  # with text in the input Esc only left insert mode
        await pilot.press("x")
        assert app.prompt.text == "h"


async def test_esc_on_an_empty_input_still_reaches_the_app_in_both_modes() -> None:
    app = _InputApp()
    async with app.run_test() as pilot:
        await pilot.press("escape")  # insert -> normal, and the app's Esc
        assert app.escapes == 1
        await pilot.press("escape")  # normal mode, empty input: interrupt as always
        assert app.escapes == 2


@pytest.mark.parametrize(("keys", "cursor"), [
    ("w", (0, 4)), ("2w", (0, 8)), ("e", (0, 2)), ("$", (0, 11)), ("w0", (0, 0)),
    ("$b", (0, 8)), ("ll", (0, 2)), ("lllh", (0, 2)), ("j", (1, 0)), ("G", (2, 0)),
    ("Ggg", (0, 0)), ("2G", (1, 0)), ("jjk", (1, 0)), ("w^", (0, 0)),
])
async def test_motions_move_the_cursor(keys: str, cursor: tuple[int, int]) -> None:
    _text, at, _app = await _run("one two six.\nsecond line\nthird", keys)
    assert at == cursor


@pytest.mark.parametrize(("keys", "after"), [
    ("x", "ne two"), ("3x", " two"), ("dw", "two"), ("d$", ""), ("wD", "one "),
    ("dd", ""), ("de", " two"), ("2dw", ""), ("wdb", "two"), ("yyp", "one two\none two"),
    ("ywP", "one one two"), ("xu", "one two"), ("ddu", "one two"),
    ("vld", "e two"), ("wvey$p", "one twotwo"),
])
async def test_operators_edit_the_text(keys: str, after: str) -> None:
    text, _at, _app = await _run("one two", keys)
    assert text == after


async def test_dd_with_a_count_and_linewise_paste_below() -> None:
    text, at, _app = await _run("a\nb\nc\nd", "2ddp")
    assert text == "c\na\nb\nd"
    assert at == (1, 0)


async def test_insert_commands_then_typing() -> None:
    cases = [("iX<esc>", "Xone"), ("aX<esc>", "oXne"), ("IX<esc>", "Xone"), ("AX<esc>", "oneX"),
             ("oX<esc>", "one\nX"), ("OX<esc>", "X\none"), ("cwX<esc>", "X"), ("ccX<esc>", "X"),
             ("CX<esc>", "X")]
    for keys, after in cases:
        text, _at, _app = await _run("one", keys)
        assert text == after, keys


async def test_typing_letters_in_normal_mode_never_reaches_the_text_and_enter_sends() -> None:
    text, _at, app = await _run("keep", "zqZ<cr>")
    assert app.sent == ["keep"]
    assert text == ""
    assert app.prompt.vim is not None and app.prompt.vim.mode is VimMode.INSERT  # to type the next


async def test_esc_clears_a_pending_operator_without_reaching_the_app() -> None:
    text, _at, app = await _run("one two", "d<esc>w")
    assert text == "one two"
    assert app.escapes == 0


async def test_visual_mode_yank_and_the_mode_shown() -> None:
    app = _InputApp()
    async with app.run_test() as pilot:
        app.prompt.text = "abc def"
        await pilot.press("escape", "0", "v")
        assert app.prompt.border_subtitle == "-- VISUAL --"
        await pilot.press("e", "y")
        assert app.prompt.border_subtitle == "-- NORMAL --"
        assert app.prompt.vim is not None and app.prompt.vim.register == "abc"


async def test_vim_off_gives_the_plain_input_back() -> None:
    app = _InputApp()
    async with app.run_test() as pilot:
        app.prompt.set_vim(False)
        await pilot.press("x", "escape")
        assert app.prompt.text == "x" and app.prompt.border_subtitle is None


async def test_a_huge_count_is_capped() -> None:
    text, _at, _app = await _run("ab", "x99999999p")
    assert text == "b" + "a" * 1000
