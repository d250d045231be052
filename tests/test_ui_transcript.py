"""The transcript: streamed Markdown cut into pieces that look like the whole, one
widget however long the session, bounded memory, following the end, and the keys and
clicks that open a tool call's output."""

from __future__ import annotations

import io
import os

os.environ["TEXTUAL_ANIMATIONS"] = "none"

import pytest  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markdown import Markdown  # noqa: E402

from agent_tui.protocol import (  # noqa: E402
    TextDelta,
    ToolOutput,
    ToolState,
    TurnEnded,
    TurnStarted,
)
from agent_tui.ui.app import AgentApp  # noqa: E402
from agent_tui.ui.widgets import transcript as transcript_module  # noqa: E402
from agent_tui.ui.widgets.markdown_stream import MarkdownStream  # noqa: E402
from agent_tui.ui.widgets.transcript_blocks import TextBlock, UserBlock  # noqa: E402
from tests.snapshot_tests import scenarios  # noqa: E402
from tests.snapshot_tests.support import fake_factory, settle, wait_until  # noqa: E402

SIZE = (100, 30)


def _app(events):
    make, made = fake_factory(events)
    return AgentApp(make, cursor_blink=False, clock=lambda: 0.0, welcome=False), made


def _conversation(turns: int) -> list:
    events = []
    for n in range(1, turns + 1):
        turn = f"t{n}"
        events += [
            TurnStarted(turn_id=turn, text=f"question number {n}"),
            TextDelta(turn_id=turn, text=f"Answer number {n}: the function reads the file.\n\n"
                                         "It returns the totals."),
            TurnEnded(turn_id=turn, status="completed"),
        ]
    return events


def _screen_text(app: AgentApp) -> str:
    transcript = app.transcript
    return "\n".join(transcript.render_line(y).text for y in range(transcript.scrollable_content_region.height))


# ------------------------------------------------------------ streamed Markdown


def _plain(markdown: str, width: int = 60) -> list[str]:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(Markdown(markdown))
    return [line.rstrip() for line in console.export_text().splitlines()]


def _stream(text: str, step: int, limit: int = 2000) -> tuple[MarkdownStream, list]:
    stream = MarkdownStream(live_limit=limit)
    pieces = []
    for i in range(0, len(text), step):
        stream.append(text[i : i + step])
        new, _live = stream.advance()
        pieces += new
    stream.end()
    new, live = stream.advance()
    return stream, pieces + new + ([live] if live.source else [])


@pytest.mark.parametrize("step", [1, 7, 500])
def test_settled_pieces_render_like_the_whole_text(step: int) -> None:
    text = (
        "# Title\n\nA first paragraph that runs on.\nIts second line.\n\n"
        "- one\n- two\n\n  still the list\n\n"
        "```python\ndef f():\n    return 1\n```\n\nA closing paragraph.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter the table.\n"
    )
    stream, pieces = _stream(text, step)
    assert stream.text == text
    joined: list[str] = []
    for piece in pieces:
        if piece.gap and joined:
            joined.append("")
        joined += _plain(piece.source)
    assert joined == _plain(text)
    assert len(pieces) > (1 if step == 500 else 3)  # it was cut, not rendered whole


def test_a_long_code_block_is_split_at_a_line_and_reopened() -> None:
    code = "".join(f"line_{i} = {i}\n" for i in range(400))
    text = f"Intro.\n\n```python\n{code}```\n"
    _stream_, pieces = _stream(text, 50, limit=500)
    sources = [p.source for p in pieces]
    assert len(sources) > 5
    for source in sources[1:]:  # each piece of the block is a whole fenced block
        assert source.startswith("```python\n") and source.rstrip().endswith("```")
    body = "".join(s.removeprefix("```python\n").rsplit("```", 1)[0] for s in sources[1:])
    assert body == code


def test_an_open_fence_is_shown_without_syntax_colours_until_closed() -> None:
    stream = MarkdownStream()
    stream.append("Look:\n\n```python\nx = 1\n")
    _pieces, live = stream.advance()
    assert "```python" not in live.source and "```\nx = 1" in live.source
    stream.append("```\n")
    stream.end()
    pieces, live = stream.advance()
    assert "```python" in "".join(p.source for p in pieces) + live.source


# ------------------------------------------------------------ a long session


@pytest.mark.asyncio
async def test_a_long_session_is_one_widget_with_bounded_rendered_lines(monkeypatch) -> None:
    monkeypatch.setattr(transcript_module, "KEEP_RENDERED", 50)
    events = _conversation(400)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        transcript = app.transcript
        assert len(transcript.blocks) == 800 and not transcript.children
        rendered = sum(block.rendered for block in transcript.blocks)
        assert rendered <= 50
        screen = _screen_text(app)
        assert "Answer number 400" in screen and "question number 1\n" not in screen
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        screen = _screen_text(app)
        assert "question number 1" in screen and "Answer number 1:" in screen
        assert not transcript.following
        assert sum(block.rendered for block in transcript.blocks) <= 50


@pytest.mark.asyncio
async def test_the_view_follows_new_text_only_while_at_the_end() -> None:
    events = _conversation(30)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        transcript = app.transcript
        assert transcript.following and transcript.scroll_y == transcript.max_scroll_y > 0
        transcript.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        app.inbox.emit(TurnStarted(turn_id="t99", text="one more"))
        await wait_until(pilot, lambda: app.events_handled == len(events) + 1, what="event")
        app.flush()
        await pilot.pause()
        assert transcript.scroll_y == 0  # reading above: left where it was
        transcript.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        app.inbox.emit(TurnStarted(turn_id="t100", text="and another"))
        await wait_until(pilot, lambda: app.events_handled == len(events) + 2, what="event")
        app.flush()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y
        assert "and another" in _screen_text(app)


@pytest.mark.asyncio
async def test_the_scrollbar_is_drawn_again_only_when_it_looks_different() -> None:
    events = _conversation(400)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        transcript = app.transcript
        bar = transcript.vertical_scrollbar
        crop = bar.size.region

        def thumb() -> list[int]:  # the rows the thumb covers (drawn reversed)
            return [y for y, line in enumerate(bar.render_lines(crop))
                    if any(seg.style and seg.style.reverse for seg in line)]

        drawn = bar.render_lines(crop)
        at_end = thumb()
        assert at_end and at_end[-1] >= crop.height - 2
        # A line more below 2,000: the thumb moves by far less than a cell.
        app.inbox.emit(TurnStarted(turn_id="t999", text="one more"))
        await wait_until(pilot, lambda: app.events_handled == len(events) + 1, what="event")
        app.flush()
        await pilot.pause()
        assert transcript.following and bar.window_virtual_size == transcript.virtual_size.height
        assert bar.render_lines(crop) is drawn  # the same lines, not rendered again
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert thumb()[0] == 0 != at_end[0]  # moved: drawn again


@pytest.mark.asyncio
async def test_page_keys_scroll_the_transcript_while_typing() -> None:
    events = _conversation(30)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        transcript = app.transcript
        await pilot.press("h", "i", "pageup")
        await pilot.pause()
        assert app.focused is app.prompt and app.prompt.text == "hi"
        assert transcript.scroll_y < transcript.max_scroll_y and not transcript.following
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y and transcript.following


@pytest.mark.asyncio
async def test_streamed_text_grows_in_place_and_ends_as_one_answer() -> None:
    events = [TurnStarted(turn_id="t1", text="go"), *scenarios._text("Hello **world**.\n\nSecond part.", 3)]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        app.flush()
        await pilot.pause()
        assert "Hello world." in _screen_text(app)
        assert "**" not in _screen_text(app)
        app.inbox.emit(TurnEnded(turn_id="t1", status="completed"))
        await wait_until(pilot, lambda: app.last_turn_status == "completed", what="end")
        [text] = app.transcript.blocks_of(TextBlock)
        assert text.text == "Hello **world**.\n\nSecond part."
        assert "Second part." in app.transcript.plain_text()


# ------------------------------------------------------------ tool calls: keys and clicks


def _two_tools() -> list:
    return [
        TurnStarted(turn_id="t1", text="go"),
        scenarios._tool("toolu_a", "bash", ToolState.RUNNING, "echo first"),
        ToolOutput(turn_id="t1", tool_use_id="toolu_a", text="output of the first\n"),
        scenarios._tool("toolu_b", "bash", ToolState.RUNNING, "echo second"),
        ToolOutput(turn_id="t1", tool_use_id="toolu_b", text="output of the second\n"),
    ]


@pytest.mark.asyncio
async def test_tab_picks_the_latest_call_and_arrows_move_between_calls() -> None:
    events = _two_tools()
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        first, second = app.transcript.tool_blocks()
        await pilot.press("tab")
        assert app.focused is app.transcript and app.transcript.cursor is second
        await pilot.press("up")
        assert app.transcript.cursor is first
        await pilot.press("enter")
        await pilot.pause()
        assert first.expanded and not second.expanded
        assert "output of the first" in _screen_text(app)
        assert "output of the second" not in _screen_text(app)
        await pilot.press("down", "space")
        await pilot.pause()
        assert second.expanded
        assert "output of the second" in _screen_text(app)


@pytest.mark.asyncio
async def test_a_click_on_a_call_opens_its_output() -> None:
    events = _two_tools()
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        await pilot.pause()
        first, _second = app.transcript.tool_blocks()
        row = next(y for y in range(20) if "echo first" in app.transcript.render_line(y).text)
        region = app.transcript.content_region
        await pilot.click(offset=(region.x + 5, region.y + row))
        await pilot.pause()
        assert first.expanded
        assert app.focused is app.prompt  # typing after a click still goes to the input
        assert "output of the first" in _screen_text(app)


@pytest.mark.asyncio
async def test_user_messages_are_shown_literally() -> None:
    events = [TurnStarted(turn_id="t1", text="[bold]x[/bold] \x1b]0;title\x07 done")]
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        [user] = app.transcript.blocks_of(UserBlock)
        assert "[bold]x[/bold]  done" in app.transcript.plain_text()
        assert "\x1b" not in app.transcript.plain_text() and user.text.startswith("[bold]")


@pytest.mark.asyncio
async def test_after_a_resize_blocks_out_of_view_are_measured_later_and_the_view_stays() -> None:
    events = _conversation(300)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        transcript = app.transcript
        app.last_input = float("inf")  # hold the measurer back, as typing would
        await pilot.resize_terminal(60, 30)
        await pilot.pause()
        painter = transcript._painter
        assert painter is not None and painter.width == transcript.scrollable_content_region.width
        measured = [b.measured(painter) for b in transcript.blocks]
        assert measured[-1] and not measured[0]  # the end at once, the start later
        assert "Answer number 300" in _screen_text(app)
        app.last_input = 0.0
        await wait_until(pilot, lambda: all(b.measured(painter) for b in transcript.blocks),
                         what="every block measured", timeout=30)
        await pilot.pause()
        assert transcript.following and transcript.scroll_y == transcript.max_scroll_y
        assert "Answer number 300" in _screen_text(app)
        assert transcript.virtual_size.height == sum(b.height for b in transcript.blocks)
        # Scrolled to the top, a resize keeps the first message at the top.
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert "question number 1" in _screen_text(app).splitlines()[1]


@pytest.mark.asyncio
async def test_text_can_be_selected_with_the_mouse_and_copied() -> None:
    events = _conversation(40)
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        await pilot.pause()
        transcript = app.transcript
        rows = [transcript.render_line(y).text for y in range(transcript.scrollable_content_region.height)]
        row = next(y for y, text in enumerate(rows) if "Answer number 40:" in text)
        region = transcript.content_region
        col = rows[row].index("Answer")
        await pilot.mouse_down(offset=(region.x + col, region.y + row))
        await pilot.hover(offset=(region.x + col + len("Answer number 40") - 1, region.y + row))
        await pilot.mouse_up(offset=(region.x + col + len("Answer number 40") - 1, region.y + row))
        await pilot.pause()
        assert app.screen.get_selected_text() == "Answer number 40"
        drawn = transcript.render_line(row)
        selected = [seg for seg in drawn if seg.text.strip() and "Answer" in seg.text]
        assert selected and selected[0].style.bgcolor != drawn._segments[0].style.bgcolor
        # From the question's first cell to the answer's: the bar and padding stay out.
        start = next(y for y, text in enumerate(rows) if "question number 40" in text)
        await pilot.mouse_down(offset=(region.x, region.y + start))
        await pilot.hover(offset=(region.x + col + 5, region.y + row))
        await pilot.mouse_up(offset=(region.x + col + 5, region.y + row))
        await pilot.pause()
        assert app.screen.get_selected_text() == "question number 40\n\nAnswer"


# ------------------------------------------------------------ rows by journal position


def _same_id_in_two_turns() -> list:
    from agent_tui.protocol import ToolStateChanged

    def state(turn: str, state: ToolState, summary: str, **extra) -> ToolStateChanged:
        return ToolStateChanged(turn_id=turn, tool_use_id="toolu_same", name="bash", state=state,
                                summary=summary, **extra)

    return [
        TurnStarted(turn_id="t1", text="edit a file"),
        state("t1", ToolState.RUNNING, "$ echo one"),
        state("t1", ToolState.SUCCEEDED, "$ echo one", result="one"),
        TurnEnded(turn_id="t1", status="completed"),
        # After a rewind a provider may hand out the same id again.
        TurnStarted(turn_id="t2", text="run a slow build"),
        state("t2", ToolState.RUNNING, "$ echo two"),
        ToolOutput(turn_id="t2", tool_use_id="toolu_same", text="output of two\n"),
    ]


@pytest.mark.asyncio
async def test_a_tool_id_used_again_in_a_later_turn_gets_a_row_of_its_own() -> None:
    events = _same_id_in_two_turns()
    app, _ = _app(events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, len(events))
        first, second = app.transcript.tool_blocks()
        assert (first.state, first.summary) == ("succeeded", "$ echo one")
        assert (second.state, second.summary) == ("running", "$ echo two")
        assert "output of two" in second.output.tail()[0]
        assert not first.output
        text = app.transcript.plain_text()
        assert "echo one" in text and "echo two" in text


@pytest.mark.asyncio
async def test_a_resumed_journal_with_a_repeated_tool_id_shows_both_calls() -> None:
    from agent_tui.core.journal.records import AssistantMessageRecord, ToolResultRecord, UserMessageRecord
    from agent_tui.ui.render.replay import show_past

    def turn(turn_id: str, command: str) -> list:
        return [
            UserMessageRecord(turn_id=turn_id, text=f"run {command}"),
            AssistantMessageRecord(turn_id=turn_id, ended="tool_use", blocks=[
                {"type": "tool_use", "id": "toolu_same", "name": "bash", "input": {"command": command}}]),
            ToolResultRecord(turn_id=turn_id, tool_use_id="toolu_same", name="bash",
                             state=ToolState.SUCCEEDED, content=command, exit_code=0),
        ]

    app, _ = _app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        show_past(app.transcript, turn("t1", "echo one") + turn("t2", "echo two"),
                  app.turn_end_line, lambda _ts: "then")
        await pilot.pause()
        assert [b.summary for b in app.transcript.tool_blocks()] == ["$ echo one", "$ echo two"]


@pytest.mark.asyncio
async def test_thinking_is_dim_folded_to_one_line_and_ctrl_o_unfolds_it() -> None:
    from agent_tui.protocol import ThinkingDelta
    from agent_tui.ui.widgets.thinking_block import ThinkingBlock

    thought = "The user wants the parser fixed.\nFirst read parser.py.\nThen run the tests."
    events = [TurnStarted(turn_id="t1", text="fix it"),
              *[ThinkingDelta(turn_id="t1", text=thought[i:i + 9]) for i in range(0, len(thought), 9)],
              ThinkingDelta(turn_id="t1", text="sub-agent musing", parent_tool_use_id="toolu_task"),
              TextDelta(turn_id="t1", text="I will read parser.py."),
              TurnEnded(turn_id="t1", status="completed")]
    make, _ = fake_factory(events)
    app = AgentApp(make, cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app, len(events))
        (block,) = list(app.transcript.blocks_of(ThinkingBlock))
        assert block.text == thought and block.done
        text = app.transcript.plain_text()
        assert "▸ ✻ thought · 3 lines: Then run the tests." in text
        assert "First read parser.py." not in text and "sub-agent musing" not in text
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "First read parser.py." in app.transcript.plain_text()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "First read parser.py." not in app.transcript.plain_text()
