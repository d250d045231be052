"""Model text, tool output and file names are shown literally: no markup, no
terminal control sequences."""

from __future__ import annotations

from rich.console import Console

from agent_tui.ui.render.safe_text import clean, first_line, one_line, safe_text, short_summary


def test_csi_and_osc_sequences_are_removed() -> None:
    raw = "a\x1b[31mred\x1b[0m b \x1b]0;evil title\x07c \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    assert clean(raw) == "ared b c link"


def test_c0_del_and_c1_controls_are_removed_but_newline_and_tab_stay() -> None:
    assert clean("a\x00b\x08c\td\ne\x7ff\x85g\x9b31mh") == "abc\td\nefgh"


def test_carriage_returns_become_newlines() -> None:
    assert clean("50%\r100%\r\ndone") == "50%\n100%\ndone"


def test_unterminated_osc_is_dropped_to_the_end() -> None:
    assert clean("ok\x1b]0;never ends") == "ok"


def test_lone_escape_is_removed() -> None:
    assert clean("x\x1b") == "x"


def test_markup_is_kept_as_literal_text() -> None:
    text = safe_text("[bold red]not markup[/] :smile:")
    assert text.plain == "[bold red]not markup[/] :smile:"
    assert not text.spans
    console = Console(width=80, force_terminal=True, color_system="truecolor")
    with console.capture() as cap:
        console.print(text)
    assert "[bold red]not markup[/]" in cap.get()


def test_one_line_takes_the_last_non_empty_line() -> None:
    assert one_line("step 1\nstep 2\n\n") == "step 2"
    assert one_line("") == ""
    assert one_line("x" * 50, limit=10) == "x" * 9 + "…"


def test_first_line_and_short_summary() -> None:
    assert first_line("\n  hello \nworld") == "hello"
    assert short_summary("bash", "bash ls -la") == "ls -la"
    assert short_summary("bash", "bash") == ""
    assert short_summary("read_file", "README.md") == "README.md"
